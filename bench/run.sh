#!/usr/bin/env bash
# The peer benchmark in one command: builds loadgen, the peer servers and `wsp` (release), runs
# every case on every server, interleaved (case 1 on each server, case 2 on each server, ...,
# all of it REPEAT times), and prints the markdown table of medians with ratios to async-lsp.
#
# Knobs (environment): REPEAT (3), CASES (all five, in the order of case_args), N (200000), N_LAT (20000), N_LIST (100000), N_NEVER (100000),
# SERVERS ("null-peer async-lsp tower-lsp wsp"), TIMEOUT (loadgen --timeout-s, 120),
# RESULTS (JSON lines, default under /tmp), LOGDIR (servers' stderr, default discarded),
# WSP_BIN (a prebuilt wsp: skips building it), PEERS_TARGET (/tmp/wsp-peers-target).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
REPEAT="${REPEAT:-3}"
N="${N:-200000}"
N_LAT="${N_LAT:-20000}"
N_LIST="${N_LIST:-100000}"
N_NEVER="${N_NEVER:-100000}"
SERVERS="${SERVERS:-null-peer async-lsp tower-lsp wsp}"
TIMEOUT="${TIMEOUT:-120}"
PEERS_TARGET="${PEERS_TARGET:-/tmp/wsp-peers-target}"
RESULTS="${RESULTS:-/tmp/wsp-peers-results-$(date +%Y%m%d-%H%M%S).jsonl}"
LOGDIR="${LOGDIR:-}"

echo "building loadgen and the peers into $PEERS_TARGET" >&2
(cd "$BENCH" && CARGO_TARGET_DIR="$PEERS_TARGET" cargo build --release --locked --quiet)
BIN="$PEERS_TARGET/release"
if [[ -z "${WSP_BIN:-}" ]]; then
    echo "building wsp in $ROOT" >&2
    (cd "$ROOT" && env -u CARGO_TARGET_DIR cargo build --release --bin wsp --quiet)
    WSP_BIN="$ROOT/target/release/wsp"
    WSP_FROM="the working tree at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
else
    WSP_FROM="prebuilt $WSP_BIN"
fi

# Prints the loadgen arguments that start server $1 (handshake flag, label, command).
server_args() {
    case "$1" in
        null-peer) echo "--label null-peer -- $BIN/null-peer" ;;
        async-lsp) echo "--lsp --label async-lsp -- $BIN/async-lsp-peer" ;;
        tower-lsp) echo "--lsp --label tower-lsp -- $BIN/tower-lsp-peer" ;;
        wsp) echo "--label wsp -- $WSP_BIN serve --state-dir @STATE@" ;;
        *) echo "unknown server: $1" >&2; return 1 ;;
    esac
}

# Prints the loadgen options of case $1, or nothing when server $2 does not take part.
case_args() {
    local trivial="--method bench/nonexistent --expect error:-32601"
    case "$1" in
        trivial-w64) echo "$trivial -n $N -w 64" ;;
        trivial-w1) echo "$trivial -n $N_LAT -w 1" ;;
        list-w64) [[ "$2" == wsp ]] && echo "--method environment/list --expect result -n $N_LIST -w 64" ;;
        in-flight-1000) echo "$trivial --mode in-flight -n 1000" ;;
        never-read-100k) echo "$trivial --mode never-read -n $N_NEVER" ;;
    esac
    return 0
}

CASES="${CASES:-trivial-w64 trivial-w1 list-w64 in-flight-1000 never-read-100k}"
: >"$RESULTS"
failed=0
for repeat in $(seq 1 "$REPEAT"); do
    for case in $CASES; do
        for server in $SERVERS; do
            options="$(case_args "$case" "$server")"
            [[ -z "$options" ]] && continue
            state="$(mktemp -d /tmp/wsp-peers-state.XXXXXX)"
            command="$(server_args "$server")"
            command="${command//@STATE@/$state}"
            stderr=()
            [[ -n "$LOGDIR" ]] && mkdir -p "$LOGDIR" &&
                stderr=(--server-stderr "$LOGDIR/$server-$case-$repeat.log")
            # shellcheck disable=SC2086 # options and command are word lists by design
            if ! output="$("$BIN/loadgen" --case "$case" --timeout-s "$TIMEOUT" "${stderr[@]}" $options $command)"; then
                failed=$((failed + 1))
            fi
            rm -rf "$state"
            echo "[$repeat/$REPEAT] $case: $(head -n1 <<<"$output")" >&2
            tail -n1 <<<"$output" >>"$RESULTS"
        done
    done
done

echo
echo "Peer benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r); wsp: $WSP_FROM."
echo "Medians of $REPEAT interleaved runs; ratios are to async-lsp. Runs: $RESULTS"
echo
"$BIN/peer-table" "$RESULTS" async-lsp
echo
echo "null-peer parses no JSON: its row is loadgen's own ceiling on this machine."
if ((failed > 0)); then
    echo "$failed run(s) failed a check; see \"failures\" in $RESULTS" >&2
    exit 1
fi
