#!/usr/bin/env python3
"""A light client's latency while another client of the same server runs commands.

One `wsp serve --listen unix:` on a fresh state directory. Client A keeps `--window` executes
of `/bin/true` in flight in one environment (sandboxed with `--sandbox`); client B sends `environment/list` at window 1 and
times each round trip. Prints B's median and p99, and how many executes A finished.

    python3 bench/execute_neighbour.py [--wsp target/release/wsp] [--requests 3000]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import threading
import time


class Client:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 0

    def send(self, method, params):
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.sock.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body.encode()))
        return self.next_id

    def receive(self):
        while True:
            header_end = self.buffer.find(b"\r\n\r\n")
            if header_end >= 0:
                length = int(self.buffer[:header_end].split(b":")[1])
                start = header_end + 4
                if len(self.buffer) >= start + length:
                    body = self.buffer[start : start + length]
                    self.buffer = self.buffer[start + length :]
                    message = json.loads(body)
                    if "id" in message:
                        return message
                    continue
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the server closed the connection")
            self.buffer += chunk

    def call(self, method, params):
        self.send(method, params)
        answer = self.receive()
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]


def flood(path, env_id, window, sandbox, stop, done):
    client = Client(path)
    client.call("initialize", {"client_name": "flooder", "client_protocol_version": "0.1.0"})
    params = {"id": env_id, "argv": ["/bin/true"], "sandbox": sandbox}
    for _ in range(window):
        client.send("environment/execute", params)
    try:
        while not stop.is_set():
            answer = client.receive()
            if "error" in answer:
                raise RuntimeError(answer["error"])
            done[0] += 1
            client.send("environment/execute", params)
    except (EOFError, OSError):
        if not stop.is_set():
            raise


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--wsp", default="target/release/wsp")
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--window", type=int, default=2)
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--sandbox", action="store_true", help="the executes run sandboxed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "wsp.sock")
        server = subprocess.Popen(
            [args.wsp, "serve", "--state-dir", os.path.join(scratch, "state"), "--listen", f"unix:{path}"],
            stderr=subprocess.PIPE,
        )
        try:
            while b"listening on" not in server.stderr.readline():
                pass
            light = Client(path)
            light.call("initialize", {"client_name": "light", "client_protocol_version": "0.1.0"})
            env_id = light.call("environment/create", {"name": "n", "python_version": args.python})["id"]
            stop, done = threading.Event(), [0]
            flooder = threading.Thread(target=flood, args=(path, env_id, args.window, args.sandbox, stop, done), daemon=True)
            flooder.start()
            while done[0] == 0:
                time.sleep(0.01)
            latencies = []
            began, done_before = time.perf_counter(), done[0]
            for _ in range(args.requests):
                started = time.perf_counter_ns()
                light.call("environment/list", {})
                latencies.append(time.perf_counter_ns() - started)
            rate = (done[0] - done_before) / (time.perf_counter() - began)
            stop.set()
            latencies.sort()
            p99 = latencies[int(len(latencies) * 0.99) - 1]
            print(
                f"light client: median {statistics.median(latencies) / 1000:.0f} µs, "
                f"p99 {p99 / 1000:.0f} µs, max {latencies[-1] / 1000:.0f} µs over {args.requests} "
                f"requests; the neighbour meanwhile: {rate:.0f} executes/s"
            )
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
