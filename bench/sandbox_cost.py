#!/usr/bin/env python3
"""The cost of the sandbox: `environment/execute` of /bin/true through one kept-alive
`wsp serve`, sandboxed and not, alternating, medians.

    python3 bench/sandbox_cost.py [path/to/wsp] [runs]
"""
import json, os, statistics, subprocess, sys, tempfile, time

wsp = sys.argv[1] if len(sys.argv) > 1 else "target/release/wsp"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
state = tempfile.mkdtemp(dir=os.environ.get("WSP_BENCH_STATE_PARENT"))
server = subprocess.Popen([wsp, "serve", "--state-dir", state],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
next_id = 0

def call(method, params):
    global next_id
    next_id += 1
    body = json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    server.stdin.flush()
    while True:
        length = None
        while True:
            line = server.stdout.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message = json.loads(server.stdout.read(length))
        if message.get("id") == next_id:
            if "error" in message:
                raise SystemExit(f"{method}: {message['error']}")
            return message["result"]

call("initialize", {"client_name": "sandbox-cost", "client_protocol_version": "0.1.0"})
env = call("environment/create", {"name": "cost", "python_version": "3.12"})["id"]
times = {False: [], True: []}
for _ in range(runs):
    for sandbox in (False, True):
        start = time.perf_counter()
        result = call("environment/execute", {"id": env, "argv": ["/bin/true"], "sandbox": sandbox})
        times[sandbox].append((time.perf_counter() - start) * 1000)
        assert result["exit_code"] == 0, result
server.stdin.close()
server.wait()
plain, boxed = statistics.median(times[False]), statistics.median(times[True])
print(f"unsandboxed median {plain:.2f} ms, sandboxed median {boxed:.2f} ms, "
      f"difference {boxed - plain:.2f} ms ({runs} runs each, alternating)")
