#!/usr/bin/env python3
"""Checks one rcc-bench run: every expected collective printed rows, every #wrong is 0, and the
-J file parses as JSON with the same rows. With --split N (given as --groups N before STDOUT) the
"# split:" header must name N groups and the JSON meta say so.
usage: check_bench_output.py [--groups N] STDOUT JSON COLLECTIVE..."""
import json
import sys


def main():
    argv, groups = sys.argv[1:], None
    if argv[:1] == ["--groups"]:
        groups, argv = int(argv[1]), argv[2:]
    stdout_path, json_path, expected = argv[0], argv[1], argv[2:]
    if "all" in expected:  # rcc-bench's "-c all" (all_collectives() in bench/options.cc)
        expected = ["allreduce", "broadcast", "reduce", "allgather", "reduce_scatter", "alltoall", "gather",
                    "scatter", "allgatherv", "alltoallv", "gatherv", "scatterv", "reduce_scatterv", "scan", "exscan",
                    "barrier", "sendrecv", "latency", "bw"]
    text = open(stdout_path).read()
    rows, section, problems = {}, None, []
    for line in text.splitlines():
        if line.startswith("# Collective:"):
            section = line.split(":", 1)[1].strip()
            rows.setdefault(section, 0)
        elif line.startswith("# barrier:"):
            rows["barrier"] = rows.get("barrier", 0) + 1
        elif line.startswith("# OSU-style latency"):
            section = "latency"
        elif line.startswith("# OSU-style bandwidth"):
            section = "bw"
        elif line.strip() and not line.startswith("#") and section:
            fields = line.split()
            rows[section] = rows.get(section, 0) + 1
            if len(fields) == 14:  # collective row: #wrong in columns 9 and 13, then memcpy
                for wrong in (fields[8], fields[12]):
                    if wrong != "N/A" and wrong != "0":
                        problems.append(f"{section}: #wrong {wrong} in: {line.strip()}")
            elif len(fields) != 2:
                problems.append(f"{section}: malformed row: {line.strip()}")
    for name in expected:
        if rows.get(name, 0) == 0:
            problems.append(f"no rows for {name}")
    data = json.load(open(json_path))  # raises on malformed JSON
    json_rows = data["rows"]
    for name in expected:
        if not any(r["collective"] == name for r in json_rows):
            problems.append(f"JSON has no row for {name}")
    for r in json_rows:
        for column in ("out_of_place", "in_place"):
            if isinstance(r.get(column), dict) and r[column]["wrong"] != 0:
                problems.append(f"JSON: {r['collective']} {r['size']} B {column} wrong {r[column]['wrong']}")
    if groups is not None:
        split_lines = [line for line in text.splitlines() if line.startswith("# split:")]
        if groups > 1 and not any(line.startswith(f"# split: {groups} groups") for line in split_lines):
            problems.append(f"no '# split: {groups} groups' header line")
        if groups == 1 and split_lines:
            problems.append("a '# split:' line without a split")
        if data["meta"].get("groups") != str(groups):
            problems.append(f"JSON meta groups is {data['meta'].get('groups')!r}, expected '{groups}'")
    if "# Avg bus bandwidth" not in text:
        problems.append("no '# Avg bus bandwidth' line")
    for p in problems:
        print("check_bench_output:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
