#!/usr/bin/env python3
"""Usage: files_per_get.py WSP_DEBUG_BINARY ROOT_REGEX N. Which source files does serving `environment/get` execute? Runs `wsp serve` under callgrind
twice, with the same session but for N gets in the second, and lists the files whose own
instruction count grew by at least N (code run at least once per get on average)."""
import json, os, re, subprocess, sys, tempfile, collections

wsp, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def frame(obj):
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body

def session(gets, state):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"client_name": "count", "client_protocol_version": "0.1.0"}}
    data = frame(init)
    # the environment made outside valgrind, by the same binary, beforehand
    env_id = open(os.path.join(state, "ID")).read().strip()
    for i in range(gets):
        data += frame({"jsonrpc": "2.0", "id": 10 + i, "method": "environment/get", "params": {"id": env_id}})
    data += frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    data += frame({"jsonrpc": "2.0", "method": "exit"})
    return data

def per_file(gets, state):
    out = tempfile.mktemp(suffix=".cg")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", wsp, "serve",
                    "--state-dir", state], input=session(gets, state), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", out],
                          capture_output=True, text=True, check=True).stdout
    files = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.+?):(.+)$", line)
        if m:
            files[m.group(2)] += int(m.group(1).replace(",", ""))
    return files

state = tempfile.mkdtemp()
made = subprocess.run([wsp, "--state-dir", state, "--json", "create", "counted", "--python", "3.12"],
                      capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL)
open(os.path.join(state, "ID"), "w").write(json.loads(made.stdout)["id"])
base, busy = per_file(0, state), per_file(n, state)
grown = sorted(f for f in busy if busy[f] - base.get(f, 0) >= n)
# Crates built in another checkout of the same tree carry that checkout's path.
ours = sorted({re.sub(r"^/work/[^/]+/", "", f) for f in grown if re.match(root, f)})
for f in ours:
    print(f)
print(f"{len(ours)} files of {root} run per get ({len(grown)} files in all)")
