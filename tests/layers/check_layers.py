#!/usr/bin/env python3
"""The build's layering, checked with the compiler and the include paths the build uses.

For every layer L (build/layers/map.txt: name, folder, source dir, include farm, visible layers):
  1. every header of L compiles on its own with L's include path (so no header of L reaches a
     layer L may not use, even one no .cc of L includes);
  2. a file of L that includes a header of a layer L may not use fails to compile, naming the
     missing file (the upward include the layout forbids), and one that includes a header of a
     layer L may use compiles.
Usage: check_layers.py CXX MAP_TXT INCLUDE_DIR [extra compiler flags...]
"""
import concurrent.futures
import os
import pathlib
import subprocess
import sys
import tempfile

cxx, map_path, include_dir, *extra = sys.argv[1:]
layers = {}
for line in pathlib.Path(map_path).read_text().splitlines():
    name, folder, source, farm, *visible = line.split()
    layers[name] = dict(folder=folder, source=pathlib.Path(source), farm=farm, visible=set(visible))


def compile_ok(text, farm):
    with tempfile.NamedTemporaryFile("w", suffix=".cc") as f:
        f.write(text)
        f.flush()
        run = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-I", farm, "-I", include_dir, *extra, f.name],
                             capture_output=True, text=True)
        return run.returncode == 0, run.stderr


# Every compilation is independent: they run on all cores (this test is a minute of CI otherwise).
jobs = []  # (text, farm, judge): judge(ok, err) returns a failure message or None
for name, layer in layers.items():
    headers = sorted(p.relative_to(layer["source"]) for p in layer["source"].rglob("*.h"))
    for header in headers:
        def judge(ok, err, where=f"{layer['folder']}/{header}", name=name):
            return None if ok else f"{where} does not compile within layer {name}:\n{err[:2000]}"
        jobs.append((f'#include "{layer["folder"]}/{header}"\n', layer["farm"], judge))
for name, layer in layers.items():
    for other_name, other in layers.items():
        if other_name == name:
            continue
        header = sorted(p.relative_to(other["source"]) for p in other["source"].rglob("*.h"))[0]
        include = f'{other["folder"]}/{header}'
        allowed = other_name in layer["visible"]

        def judge(ok, err, name=name, other_name=other_name, include=include, allowed=allowed):
            if allowed and not ok:
                return f"layer {name} may use {other_name}, but #include \"{include}\" fails:\n{err[:2000]}"
            if not allowed and (ok or "No such file" not in err):
                return (f"layer {name} must not see {other_name}, yet #include \"{include}\" "
                        f"{'compiles' if ok else 'fails for another reason: ' + err[:500]}")
            return None
        jobs.append((f'#include "{include}"\n', layer["farm"], judge))
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
    results = list(pool.map(lambda job: compile_ok(job[0], job[1]), jobs))
failures = [message for (_, _, judge), (ok, err) in zip(jobs, results) if (message := judge(ok, err))]
checked = len(jobs)
for f in failures:
    print("FAIL:", f)
print(f"{checked} compilations, {len(failures)} failures; layers bottom up: " + ", ".join(layers))
sys.exit(1 if failures else 0)
