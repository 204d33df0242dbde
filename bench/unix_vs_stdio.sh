#!/usr/bin/env bash
# The Unix socket against stdio with the scheduler taken out: `wsp serve` pinned to CPU 1,
# bench/loadgen to CPU 0, a fresh server and state directory per run, every build's runs in
# turns, then each build's median and its ratio to stdio's.
#
#   bench/unix_vs_stdio.sh [LABEL=]WSP_BIN... [stdio=WSP_BIN]
#
# Every argument but `stdio=...` is a build served over `--listen unix:`; `stdio=BIN` serves
# BIN over pipes (default: the first build). Knobs (environment): ROUNDS (10), N (200000),
# WINDOW (64), METHOD (bench/nonexistent; its params are `{}`), LOADGEN (bench/loadgen's
# release build under /tmp/wsp-peers-target, built if missing). Needs 2 CPUs.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROUNDS="${ROUNDS:-10}"
N="${N:-200000}"
WINDOW="${WINDOW:-64}"
METHOD="${METHOD:-bench/nonexistent}"
LOADGEN="${LOADGEN:-/tmp/wsp-peers-target/release/loadgen}"
if [[ ! -x "$LOADGEN" ]]; then
    (cd "$BENCH" && CARGO_TARGET_DIR=/tmp/wsp-peers-target cargo build --release --locked -p loadgen --quiet)
fi
(($# > 0)) || { echo "usage: $0 [LABEL=]WSP_BIN... [stdio=WSP_BIN]" >&2; exit 2; }

labels=() bins=() stdio_bin=""
for spec in "$@"; do
    label="${spec%%=*}" bin="${spec#*=}"
    [[ "$spec" == *=* ]] || label="unix$((${#labels[@]} + 1))"
    if [[ "$label" == stdio ]]; then stdio_bin="$bin"; else labels+=("$label") bins+=("$bin"); fi
done
stdio_bin="${stdio_bin:-${bins[0]}}"
WORK="$(mktemp -d /tmp/wsp-unix-vs-stdio.XXXXXX)"
SERVER=""
trap '[[ -n "$SERVER" ]] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT
load=(--method "$METHOD" --params '{}' -n "$N" -w "$WINDOW")
results="$WORK/results"

# Appends "LABEL REQ_PER_S" for one run of loadgen's output on stdin.
record() {
    python3 -c 'import json,sys; d=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(sys.argv[1], d["req_per_s"])' "$1" >>"$results"
}

for round in $(seq 1 "$ROUNDS"); do
    for i in "${!bins[@]}"; do
        rm -rf "$WORK/state" && mkdir -p "$WORK/state" && : >"$WORK/log"
        taskset -c 1 "${bins[$i]}" serve --state-dir "$WORK/state" \
            --listen "unix:$WORK/state/wsp.sock" 2>"$WORK/log" &
        SERVER=$!
        until grep -q "listening on" "$WORK/log"; do
            kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/log" >&2; exit 1; }
            sleep 0.05
        done
        taskset -c 0 "$LOADGEN" "${load[@]}" --connect "unix:$WORK/state/wsp.sock" \
            --server-pid "$SERVER" | record "${labels[$i]}"
        kill -TERM "$SERVER" && wait "$SERVER" || true
        SERVER=""
    done
    rm -rf "$WORK/state" && mkdir -p "$WORK/state"
    taskset -c 0 "$LOADGEN" "${load[@]}" -- taskset -c 1 "$stdio_bin" serve \
        --state-dir "$WORK/state" | record stdio
    echo "round $round of $ROUNDS done" >&2
done

python3 - "$results" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, rate = line.split()
    runs.setdefault(label, []).append(float(rate) / 1000)
stdio = statistics.median(runs["stdio"])
for label, rates in runs.items():
    median = statistics.median(rates)
    listed = ", ".join(f"{rate:.0f}" for rate in rates)
    print(f"{label}: median {median:.0f}k req/s ({median / stdio:.2f}x stdio); runs {listed}")
EOF
