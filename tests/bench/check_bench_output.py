#!/usr/bin/env python3
"""Checks one rcc-bench run: every expected collective printed rows, every #wrong is 0, and the
-J file parses as JSON with the same rows. With --split N (given as --groups N before STDOUT) the
"# split:" header must name N groups and the JSON meta say so.
usage: check_bench_output.py [--groups N] STDOUT JSON COLLECTIVE..."""
import json
import sys


MEMCPY_FROM_BYTES = 1 << 20  # kMemcpyFromBytes in bench/report.h


def memcpy_problems(section, size, rates, line):
    """From 1 MiB a row carries the one-core and the every-rank memcpy rates (every test runs more
    than one rank), both positive; below, neither."""
    if size < MEMCPY_FROM_BYTES:
        return [] if rates == ["-", "-"] else [f"{section}: memcpy rates below 1 MiB in: {line.strip()}"]
    try:
        if all(float(rate) > 0 for rate in rates):
            return []
    except ValueError:
        pass
    return [f"{section}: no memcpy rates in: {line.strip()}"]


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
            if len(fields) == 15:  # collective row: #wrong in columns 9 and 13, then two memcpy rates
                for wrong in (fields[8], fields[12]):
                    if wrong != "N/A" and wrong != "0":
                        problems.append(f"{section}: #wrong {wrong} in: {line.strip()}")
                problems += memcpy_problems(section, int(fields[0]), fields[13:], line)
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
        if "count" in r and r["size"] >= MEMCPY_FROM_BYTES:
            for key in ("memcpy_GBps", "memcpy_everyone_GBps"):
                if not r.get(key, 0) > 0:
                    problems.append(f"JSON: {r['collective']} {r['size']} B has no {key}")
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
