#!/usr/bin/env python3
"""environment/create and environment/get against uv, side by side in one run.

One kept-alive `wsp serve` (a release build) on a fresh state directory, one interpreter for
both tools (by absolute path), runs alternating between wsp and uv, medians of N:

- create: `environment/create` (no packages) against `uv venv --quiet --no-config -p ABS DIR`;
- get: `environment/get` of an environment holding 100 distributions against
  `uv pip list --python ENV/bin/python` on the same environment.

Each wsp figure is the round trip of one request over the server's stdio pipes, timed from
writing the request to reading its answer. Each uv figure is the whole process, as a user runs
it.

    python3 bench/env_ops.py [--wsp target/release/wsp] [--runs 15] [--python 3.12]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import zipfile


def frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Server:
    def __init__(self, wsp, state):
        self.process = subprocess.Popen(
            [wsp, "serve", "--state-dir", state],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def call(self, method, params):
        self.next_id += 1
        self.process.stdin.write(frame({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
        self.process.stdin.flush()
        while True:
            length = None
            while True:
                line = self.process.stdout.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            message = json.loads(self.process.stdout.read(length))
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def timed(self, method, params):
        start = time.perf_counter()
        result = self.call(method, params)
        return time.perf_counter() - start, result

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def write_wheels(directory, count):
    names = []
    for n in range(count):
        name = f"wsp_bench_pkg{n:03d}"
        dist = f"{name}-1.0.dist-info"
        path = os.path.join(directory, f"{name}-1.0-py3-none-any.whl")
        with zipfile.ZipFile(path, "w") as wheel:
            wheel.writestr(f"{name}/__init__.py", "")
            wheel.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
            wheel.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
            wheel.writestr(f"{dist}/RECORD", "")
        names.append(name.replace("_", "-"))
    return names


def run_timed(argv):
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def ms(seconds):
    return f"{seconds * 1000:.2f} ms"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--wsp", default="target/release/wsp")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--python", default="3.12")
    args = parser.parse_args()
    uv = shutil.which("uv")
    if uv is None:
        raise SystemExit("uv is not on PATH")
    scratch = tempfile.mkdtemp(prefix="wsp-env-ops-")
    server = Server(os.path.abspath(args.wsp), os.path.join(scratch, "state"))
    server.call("initialize", {"client_name": "env_ops", "client_protocol_version": "0.1.0"})
    first = server.call("environment/create", {"name": "warm", "python_version": args.python})
    base = first["extra"]["base_interpreter"]

    wsp_create, uv_create = [], []
    for n in range(args.runs):
        elapsed, _ = server.timed("environment/create", {"name": f"c{n}", "python_version": args.python})
        wsp_create.append(elapsed)
        target = os.path.join(scratch, f"uv-{n}")
        uv_create.append(run_timed([uv, "venv", "--quiet", "--no-config", "-p", base, target]))

    wheels = os.path.join(scratch, "wheels")
    os.makedirs(wheels)
    packages = write_wheels(wheels, 100)
    full = server.call(
        "environment/create",
        {"name": "hundred", "python_version": args.python, "packages": packages,
         "find_links": [wheels], "no_index": True},
    )
    assert len(full["installed_packages"]) >= 100, full["installed_packages"]
    python = full["interpreter_path"]
    wsp_get, uv_list = [], []
    for _ in range(args.runs):
        elapsed, got = server.timed("environment/get", {"id": full["id"]})
        assert len(got["installed_packages"]) >= 100
        wsp_get.append(elapsed)
        uv_list.append(run_timed([uv, "pip", "list", "--python", python]))
    server.close()
    shutil.rmtree(scratch, ignore_errors=True)

    rows = [
        ("create (no packages)", wsp_create, "uv venv -p ABS", uv_create),
        ("get, 100 distributions", wsp_get, "uv pip list --python", uv_list),
    ]
    print(f"| operation | wsp median | peer | peer median | ratio | (runs: {args.runs}, alternating) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, ours, peer, theirs in rows:
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"| {name} | {ms(a)} | `{peer}` | {ms(b)} | {a / b:.3f}× | |")
    print(f"\nthe first get (nothing kept yet: the packages read, the files weighed): {ms(wsp_get[0])}")


if __name__ == "__main__":
    main()
