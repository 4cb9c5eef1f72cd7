#!/usr/bin/env bash
# bench/compare with tiny sizes: it must finish with status 0 and write results.json/csv holding
# rcc's results for every collective compared (allreduce and broadcast unless --collectives says
# otherwise), whichever peers are installed (or with --peers none); the MPIs' results too (Open
# MPI, MPICH, rcc's MPI layer) when --collectives names alltoallv, allgatherv or scan; one record
# per library, ranks, collective and size, with --repeat the launch of median time.
# usage: run_compare_smoke.sh PYTHON COMPARE BUILD_DIR [compare flags...]
set -u
python=$1 compare=$2 build=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$compare" --ranks 2 --sizes 8:4K --factor 16 --iters 2 --warmup 1 --timeout 120 --no-plot \
  --build "$build" --out "$work" "$@" || { echo "run_compare_smoke: compare failed"; exit 1; }
"$python" - "$work" <<'PY' || exit 1
import csv, json, os, sys
out = sys.argv[1]
data = json.load(open(os.path.join(out, "results.json")))
mine = [r for r in data["results"] if r["library"] == "rcc"]
missing = set(data["meta"]["collectives"]) - {r["collective"] for r in mine}
assert not missing, f"no rcc results for {missing}"
assert all(r["wrong"] == 0 and r["time_us"] > 0 for r in mine), mine
keys = [(r["library"], r["ranks"], r["collective"], r["size"]) for r in data["results"]]
assert len(keys) == len(set(keys)), "more than one record per library, ranks, collective and size"
repeat = data["meta"]["repeat"]
for r in data["results"]:  # --repeat: each record is the launch of median time
    times = r.get("launch_times_us", [r["time_us"]])
    assert len(times) == repeat and times == sorted(times), r
    assert r["time_us"] == times[(repeat - 1) // 2], r
rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
assert len(rows) == len(data["results"]), "CSV and JSON disagree"
for collective in {"alltoallv", "allgatherv", "scan"} & set(data["meta"]["collectives"]):
    for mpi in {"openmpi", "mpich", "rcc-mpi"} & set(data["meta"]["libraries"]):
        theirs = [r for r in data["results"] if r["library"] == mpi and r["collective"] == collective]
        assert theirs and all(r["wrong"] == 0 for r in theirs), (mpi, collective, theirs)
print("compare smoke: libraries", data["meta"]["libraries"], "records", len(rows))
PY
