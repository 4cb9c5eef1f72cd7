#!/usr/bin/env python3
"""Checks one rcc-bench run: every expected collective printed rows, every #wrong is 0, and the
-J file parses as JSON with the same rows.  usage: check_bench_output.py STDOUT JSON COLLECTIVE..."""
import json
import sys


def main():
    stdout_path, json_path, expected = sys.argv[1], sys.argv[2], sys.argv[3:]
    if "all" in expected:
        expected = ["allreduce", "broadcast", "reduce", "allgather", "reduce_scatter", "alltoall", "gather",
                    "scatter", "barrier", "sendrecv", "latency", "bw"]
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
            if len(fields) == 13:  # collective row: #wrong in columns 9 and 13
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
    if "# Avg bus bandwidth" not in text:
        problems.append("no '# Avg bus bandwidth' line")
    for p in problems:
        print("check_bench_output:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
