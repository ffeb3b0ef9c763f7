#!/usr/bin/env bash
# Partition switch benchmark (issue 3): in one invocation, rt-tests' cyclictest on every CPU,
# then `partita run` of the flight-control example, and their figures side by side:
# window-start lateness and partition switch cost (PCS) per core, against cyclictest's
# wake-up latency, as medians and p99 in microseconds. Needs root and rt-tests.
# Usage: scripts/bench-switch.sh [SECONDS]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
command -v cyclictest >/dev/null || { echo "cyclictest missing: apt-get install -y rt-tests" >&2; exit 2; }
cargo build --release -q
partita=target/release/partita
$partita demo --build-only >/dev/null
out=$(mktemp -d)
ncpu=$(nproc)
echo "== cyclictest -m -p 99 -i 1000 -t $ncpu -a 0-$((ncpu-1)) -D ${secs}s -h 2000"
cyclictest -m -p 99 -i 1000 -t "$ncpu" -a "0-$((ncpu-1))" -D "${secs}s" -q -h 2000 > "$out/cyclictest.txt"
echo "== partita run examples/flight-control.xml --duration ${secs}s"
$partita run examples/flight-control.xml --duration "${secs}s" --trace "$out/run.trace" --logs "$out/logs" > "$out/run.txt" 2>&1
$partita trace "$out/run.trace" --json > "$out/summary.json"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
# cyclictest histogram: lines "us count_cpu0 count_cpu1 ..." until the "# Total" footer.
rows = [l.split() for l in open(f"{out}/cyclictest.txt") if l[:1].isdigit()]
def quantile(col, q):
    total = sum(int(r[col]) for r in rows)
    acc = 0
    for r in rows:
        acc += int(r[col])
        if acc >= q * total:
            return float(r[0])
    return float("nan")
s = json.load(open(f"{out}/summary.json"))
print(f"{'core':>4} {'cyclictest med/p99':>20} {'lateness med/p99':>18} {'PCS med/p99':>14}   (us)")
for c in s["cores"]:
    i = c["core"]
    ct = (quantile(i + 1, 0.5), quantile(i + 1, 0.99)) if i + 1 < len(rows[0]) else (float("nan"),) * 2
    lat = c["lateness"]; pcs = c["pcs"]
    f = lambda st: f"{st['median']/1e3:.1f}/{st['p99']/1e3:.1f}" if st else "-"
    print(f"{i:>4} {ct[0]:>9.1f}/{ct[1]:<10.1f} {f(lat):>18} {f(pcs):>14}")
chk = s["check"]
print(f"check: ok={chk['ok']} overlaps={chk['overlaps']} out_of_window={chk['out_of_window']} run_intervals={chk['run_intervals']}")
PY
echo "(raw outputs in $out)"
