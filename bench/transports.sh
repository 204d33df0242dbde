#!/usr/bin/env bash
# The transports benchmark in one command: builds loadgen and the jsonrpsee peer (release) and
# `wsp` (unless WSP_BIN), then runs every case interleaved (case 1 on each server, case 2 on
# each server, ..., all of it REPEAT times), a fresh server for every run, and prints the table
# of medians against the targets of the "Many clients: transports" section of BENCHMARKS.md.
#
# Cases: ws-trivial-w64 and ws-trivial-w1 (wsp --listen ws:// vs jsonrpsee-ws-peer),
# trivial-w64 (wsp --listen unix: vs wsp on stdio), idle-1000 (wsp --listen unix: and ws://,
# 1,000 initialized connections), flood-100 (wsp --listen unix:, 100 connections, one keeping
# FLOOD_WINDOW in flight, one light client at window 1 measured).
#
# Knobs (environment): REPEAT (3), N (200000), N_LAT (20000), N_FLOOD (5000), IDLE (1000),
# FLOOD_CONNECTIONS (100), FLOOD_WINDOW (64), CASES and SERVERS (a subset of the cases and
# servers below, space-separated; all by default), TIMEOUT (loadgen --timeout-s, 120), RESULTS
# (JSON lines, default under /tmp), LOGDIR (servers' stderr, default a temporary directory),
# WSP_BIN (a prebuilt wsp: skips building it), PEERS_TARGET (/tmp/wsp-peers-target).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
REPEAT="${REPEAT:-3}"
N="${N:-200000}"
N_LAT="${N_LAT:-20000}"
N_FLOOD="${N_FLOOD:-5000}"
IDLE="${IDLE:-1000}"
FLOOD_CONNECTIONS="${FLOOD_CONNECTIONS:-100}"
FLOOD_WINDOW="${FLOOD_WINDOW:-64}"
TIMEOUT="${TIMEOUT:-120}"
PEERS_TARGET="${PEERS_TARGET:-/tmp/wsp-peers-target}"
RESULTS="${RESULTS:-/tmp/wsp-transports-results-$(date +%Y%m%d-%H%M%S).jsonl}"
WORK="$(mktemp -d /tmp/wsp-transports.XXXXXX)"
LOGDIR="${LOGDIR:-$WORK/logs}"
trap 'rm -rf "$WORK"' EXIT

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

TOKEN_FILE="$WORK/token"
(umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$TOKEN_FILE")
mkdir -p "$LOGDIR"

# Starts server $1 listening (wsp-ws, wsp-unix or jsonrpsee-ws), its stderr in $2; sets
# SERVER_PID and ADDRESS (what loadgen --connect takes) once it says `listening on ...`.
start_server() {
    local state="$WORK/state"
    rm -rf "$state" && mkdir -p "$state" && : >"$2"
    case "$1" in
        wsp-ws) "$WSP_BIN" serve --state-dir "$state" --listen ws://127.0.0.1:0 \
            --token-file "$TOKEN_FILE" --max-connections $((IDLE + 10)) 2>"$2" &;;
        wsp-unix) "$WSP_BIN" serve --state-dir "$state" --listen "unix:$state/wsp.sock" \
            --max-connections $((IDLE + 10)) 2>"$2" &;;
        jsonrpsee-ws) "$BIN/jsonrpsee-ws-peer" 2>"$2" &;;
        *) echo "unknown listening server: $1" >&2; return 1 ;;
    esac
    SERVER_PID=$!
    local line="" tries=0
    until line="$(listening_line "$2")"; do
        tries=$((tries + 1))
        if ((tries > 200)) || ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "$1 did not start listening; its stderr:" >&2 && cat "$2" >&2
            return 1
        fi
        sleep 0.05
    done
    ADDRESS="${line%% *}"
}

# Prints the address of the first whole line of file $1 that says `listening on ADDRESS`; fails
# while there is none (a line still being written, with no newline yet, does not count).
listening_line() {
    local line
    while IFS= read -r line; do
        if [[ "$line" == *"listening on "* ]]; then
            echo "${line#*listening on }"
            return 0
        fi
    done <"$1"
    return 1
}

stop_server() {
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
}

# Prints the loadgen options of case $1, or nothing when server $2 does not take part.
case_args() {
    local trivial="--method bench/nonexistent --expect error:-32601"
    case "$1:$2" in
        ws-trivial-w64:wsp-ws | ws-trivial-w64:jsonrpsee-ws) echo "$trivial -n $N -w 64" ;;
        ws-trivial-w1:wsp-ws | ws-trivial-w1:jsonrpsee-ws) echo "$trivial -n $N_LAT -w 1" ;;
        trivial-w64:wsp-unix | trivial-w64:wsp-stdio) echo "$trivial -n $N -w 64" ;;
        idle-$IDLE:wsp-unix | idle-$IDLE:wsp-ws) echo "--mode idle --connections $IDLE" ;;
        flood-$FLOOD_CONNECTIONS:wsp-unix)
            echo "$trivial --mode flood --connections $FLOOD_CONNECTIONS" \
                "--flood-window $FLOOD_WINDOW -n $N_FLOOD -w 1" ;;
    esac
    return 0
}

CASES="${CASES:-ws-trivial-w64 ws-trivial-w1 trivial-w64 idle-$IDLE flood-$FLOOD_CONNECTIONS}"
SERVERS="${SERVERS:-wsp-ws jsonrpsee-ws wsp-unix wsp-stdio}"
: >"$RESULTS"
failed=0
for repeat in $(seq 1 "$REPEAT"); do
    for case in $CASES; do
        for server in $SERVERS; do
            options="$(case_args "$case" "$server")"
            [[ -z "$options" ]] && continue
            log="$LOGDIR/$server-$case-$repeat.log"
            common=(--case "$case" --label "$server" --timeout-s "$TIMEOUT")
            if [[ "$server" == wsp-stdio ]]; then
                rm -rf "$WORK/state" && mkdir -p "$WORK/state"
                target=(--server-stderr "$log" -- "$WSP_BIN" serve --state-dir "$WORK/state")
            else
                start_server "$server" "$log"
                target=(--connect "$ADDRESS" --server-pid "$SERVER_PID")
                [[ "$server" == wsp-ws ]] && target+=(--token-file "$TOKEN_FILE")
            fi
            # shellcheck disable=SC2086 # options is a word list by design
            if ! output="$("$BIN/loadgen" "${common[@]}" $options "${target[@]}")"; then
                failed=$((failed + 1))
            fi
            [[ "$server" != wsp-stdio ]] && stop_server
            echo "[$repeat/$REPEAT] $case: $(head -n1 <<<"$output")" >&2
            tail -n1 <<<"$output" >>"$RESULTS"
        done
    done
done

echo
echo "Transports benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r); wsp: $WSP_FROM."
echo "Medians of $REPEAT interleaved runs; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Runs: $RESULTS"
echo
"$BIN/transport-table" "$RESULTS" "idle-$IDLE" "flood-$FLOOD_CONNECTIONS"
if ((failed > 0)); then
    echo "$failed run(s) failed a check; see \"failures\" in $RESULTS" >&2
    exit 1
fi
