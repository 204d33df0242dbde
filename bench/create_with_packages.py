#!/usr/bin/env python3
"""environment/create with 10 packages against `uv venv` + `uv pip install`, over the real
binary, as a client sees it: one kept-alive `wsp serve` per build given (its default options,
spare environments included), creates 0.3 s apart, each followed by a delete, in turns with
the uv pair on the same interpreter and the same 10 local wheels (`find_links`, `no_index`).
Medians of N, the first run of each left out (no spare exists yet).

    python3 bench/create_with_packages.py [--runs 20] [--backend uv] WSP [WSP ...]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from env_ops import Server, write_wheels  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--backend", default="uv")
    parser.add_argument("--python", default="3.12")
    parser.add_argument("wsp", nargs="+")
    args = parser.parse_args()
    uv = shutil.which("uv") or sys.exit("uv is not on PATH")
    scratch = tempfile.mkdtemp(prefix="wsp-create-packages-")
    wheels = os.path.join(scratch, "wheels")
    os.makedirs(wheels)
    packages = write_wheels(wheels, 10)
    servers = []
    for n, binary in enumerate(args.wsp):
        server = Server(os.path.abspath(binary), os.path.join(scratch, f"state-{n}"))
        server.call("initialize", {"client_name": "bench", "client_protocol_version": "0.1.0"})
        servers.append(server)
    base = servers[0].call("environment/create", {"name": "probe", "python_version": args.python})
    python = base["extra"]["base_interpreter"]

    def wsp(k, n):
        params = {"name": f"e{n}", "python_version": args.python, "backend": args.backend,
                  "packages": packages, "find_links": [wheels], "no_index": True}
        elapsed, created = servers[k].timed("environment/create", params)
        servers[k].call("environment/delete", {"id": created["id"]})
        return elapsed * 1000

    def peer(n):
        root = os.path.join(scratch, f"uv-{n}")
        started = time.perf_counter()
        subprocess.run([uv, "venv", "--quiet", "--no-config", "-p", python, root], check=True)
        subprocess.run([uv, "pip", "install", "--quiet", "--no-config", "--python",
                        os.path.join(root, "bin", "python"), "--no-index", "--find-links",
                        wheels] + packages, check=True)
        elapsed = (time.perf_counter() - started) * 1000
        shutil.rmtree(root)
        return elapsed

    jobs = list(range(len(servers))) + ["uv"]
    runs = {job: [] for job in jobs}
    for n in range(args.runs):
        turn = n % len(jobs)
        for job in jobs[turn:] + jobs[:turn]:
            time.sleep(0.3)
            runs[job].append(peer(n) if job == "uv" else wsp(job, n))
    for server in servers:
        server.close()
    shutil.rmtree(scratch, ignore_errors=True)
    peer_median = statistics.median(runs["uv"][1:])
    print(f"| create with 10 packages ({args.backend} backend) | median | ratio |")
    print("| --- | --- | --- |")
    print(f"| `uv venv` + `uv pip install` | {peer_median:.1f} ms | |")
    for k, binary in enumerate(args.wsp):
        median = statistics.median(runs[k][1:])
        print(f"| {binary} | {median:.1f} ms | {median / peer_median:.3f}× |")


if __name__ == "__main__":
    main()
