#!/usr/bin/env python3
"""The order `wsp`'s functions are linked in: the ones a server runs first and together.

    python3 bench/symbol_order.py write BIN [--out src/symbol-order.txt]
    python3 bench/symbol_order.py check BIN [--order src/symbol-order.txt]

`write` runs the release binary BIN under valgrind's callgrind for a scripted session over
stdio (`initialize`, `environment/list`, requests of an unknown method, `shutdown`, `exit`),
then writes the mangled names of every function of BIN it ran, one per line. `build.rs` hands
that file to the linker (LLD's `--symbol-ordering-file`) for release builds, so the code a
server runs sits in a few contiguous pages: the kernel maps 64 KiB of a file's cached pages
around every page a process touches, and the same functions spread over the whole 28 MB of
code made 6 MiB of an idle server's resident memory (BENCHMARKS.md, "Idle RSS: the code a
server runs, linked together").

`check` says how many of the file's names BIN still has. Names change when a crate's
dependencies or the compiler change (their hashes do): a file that lost many of them should be
written again. A lost name only puts that function back where the linker would put it anyway.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_ORDER = REPO / "src" / "symbol-order.txt"


def frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_message(stream):
    length = None
    while True:
        line = stream.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    if length is None:
        raise RuntimeError("the server closed its output")
    return json.loads(stream.read(length))


def session(command, requests):
    """Runs `command` (a server on stdio) through `requests` (method, params) in turn."""
    with tempfile.TemporaryDirectory() as scratch:
        log = open(Path(scratch) / "stderr", "w")
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        for number, (method, params) in enumerate(requests, 1):
            server.stdin.write(frame({"jsonrpc": "2.0", "id": number, "method": method, "params": params}))
            server.stdin.flush()
            while read_message(server.stdout).get("id") != number:
                pass
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.close()
        if server.wait(timeout=120) != 0:
            sys.exit(f"the server under valgrind exited with {server.returncode}")


def defined_functions(binary):
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    return {line.split()[2] for line in out.splitlines() if len(line.split()) == 3 and line.split()[1] in "tTwW"}


def write(binary, out):
    with tempfile.TemporaryDirectory() as scratch:
        profile = Path(scratch) / "callgrind.out"
        state = Path(scratch) / "state"
        valgrind = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", "--dump-instr=no",
            "--compress-strings=no", "--compress-pos=no", "--demangle=no",
        ]
        requests = [("initialize", {"client_name": "symbol-order", "client_protocol_version": "0.1.0"})]
        requests += [("environment/list", {})] * 200
        requests += [("bench/nonexistent", {})] * 200
        requests += [("shutdown", None)]
        session(valgrind + [str(binary), "serve", "--state-dir", str(state)], requests)
        ran = []
        for line in profile.read_text().splitlines():
            if line.startswith("fn="):
                name = line[3:].split("'", 1)[0]
                if name not in ran:
                    ran.append(name)
    defined = defined_functions(binary)
    names = sorted(name for name in set(ran) if name in defined)
    out.write_text("".join(name + "\n" for name in names))
    print(f"{len(names)} functions of {binary} written to {out}", file=sys.stderr)


def check(binary, order):
    names = [line for line in order.read_text().splitlines() if line]
    defined = defined_functions(binary)
    kept = sum(name in defined for name in names)
    print(f"{kept} of {len(names)} names in {order} are functions of {binary} ({100 * kept // max(len(names), 1)}%)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    writing = commands.add_parser("write")
    writing.add_argument("binary", type=Path)
    writing.add_argument("--out", type=Path, default=DEFAULT_ORDER)
    checking = commands.add_parser("check")
    checking.add_argument("binary", type=Path)
    checking.add_argument("--order", type=Path, default=DEFAULT_ORDER)
    args = parser.parse_args()
    if args.command == "write":
        write(args.binary.resolve(), args.out)
    else:
        check(args.binary.resolve(), args.order)


if __name__ == "__main__":
    main()
