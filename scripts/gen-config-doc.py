#!/usr/bin/env python3
"""Writes docs/configuration.md from the registry in src/core/config.cc (run after adding a row)."""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
source = (root / "src/core/config.cc").read_text()
rows = re.findall(r'\{"(RCC_[A-Z0-9_]+)",\s*"([^"]*)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}', source)
out = ["# Configuration", "",
       "rcc reads only these environment variables. This table is generated from the registry in",
       "`src/core/config.cc` by `scripts/gen-config-doc.py`; a test keeps the two equal.", "",
       "| variable | default | meaning |", "| --- | --- | --- |"]
for name, default, meaning in rows:
    text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', meaning)).replace("|", "\\|")
    shown = f"`{default}`" if default else "(unset)"
    out.append(f"| `{name}` | {shown} | {text} |")
out += ["", "Variables of other launchers that rcc reads to find rank and size (not settings):",
        "`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`, `SLURM_JOB_ID`, `SLURM_STEP_ID`,",
        "`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`, `OMPI_COMM_WORLD_LOCAL_RANK`, `PMI_RANK`,",
        "`PMI_SIZE`, `RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`.",
        "UCX's own `UCX_TLS` and `UCX_NET_DEVICES` keep working for the UCX backend.", ""]
(root / "docs/configuration.md").write_text("\n".join(out))
print(f"docs/configuration.md: {len(rows)} settings")
