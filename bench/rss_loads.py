#!/usr/bin/env python3
"""Peak RSS of `wsp serve` under two memory loads, over real pipes.

  output: N concurrent executes (default 16), each printing 16 MiB of NUL bytes on stdout and
          16 MiB on stderr, with the server's default limits.
  queue:  every handler slot (default 64) busy with a command that waits, then N executes
          (default 40) with 60 MiB of `stdin` each, running `cat >/dev/null`; the busy
          commands are released once the client has written everything or the server has
          stopped reading for 2 s.

Prints one JSON line: the server's VmHWM (peak RSS) in MiB, the answers received, the largest
answer frame, and how long the load took. The server's own stderr goes to --log.

  python3 bench/rss_loads.py --wsp target/release/wsp output
  python3 bench/rss_loads.py --wsp target/release/wsp queue
"""

import argparse
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

MIB = 1 << 20


def frame(message):
    payload = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


def request(id, method, params):
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


class Client:
    """A `wsp serve` child; a thread reads its answers and keeps a summary of each."""

    def __init__(self, wsp, state_dir, log, extra):
        self.process = subprocess.Popen(
            [wsp, "serve", "--state-dir", state_dir, *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(log, "wb"),
        )
        self.answers = {}
        self.largest_frame = 0
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.process.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    return
                header += byte
            length = int(header.split(b":")[1].split(b"\r")[0])
            payload = out.read(length)
            message = json.loads(payload)
            if "id" not in message:
                continue
            result = message.get("result")
            summary = {"error": message.get("error", {}).get("code") if "error" in message else None}
            if isinstance(result, dict):
                for key in ("stdout_truncated", "stderr_truncated", "exit_code", "id"):
                    if key in result:
                        summary[key] = result[key]
            with self.cond:
                self.largest_frame = max(self.largest_frame, length)
                self.answers[message["id"]] = summary
                self.cond.notify_all()

    def send(self, message):
        self.process.stdin.write(frame(message))
        self.process.stdin.flush()

    def wait(self, ids, timeout=600):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not all(i in self.answers for i in ids):
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    break
                self.cond.wait(min(left, 1))
        return {i: self.answers.get(i) for i in ids}

    def call(self, id, method, params):
        self.send(request(id, method, params))
        return self.wait([id])[id]

    def status_mib(self, field):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1]) / 1024
        return None


def output_load(client, env, args):
    script = "head -c 16777216 /dev/zero; head -c 16777216 /dev/zero >&2"
    ids = list(range(100, 100 + args.n))
    for i in ids:
        client.send(request(i, "environment/execute", {"id": env, "argv": ["sh", "-c", script]}))
    return ids, client.wait(ids)


def queue_load(client, env, args, work):
    # The busy commands block in flock(2) on a file this client holds locked.
    lock = open(os.path.join(work, "lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    busy = f"flock {lock.name} true"
    busy_ids = list(range(100, 100 + args.slots))
    for i in busy_ids:
        client.send(request(i, "environment/execute", {"id": env, "argv": ["sh", "-c", busy]}))
    body = b"x" * (60 * MIB)
    big_ids = list(range(1000, 1000 + args.n))
    written = [0]

    def write():
        # Written in pieces, the 60 MiB string once for all requests, so that the client is
        # never what limits the rate and the progress is seen as it happens.
        argv = json.dumps(["sh", "-c", "cat >/dev/null"])
        for i in big_ids:
            head = ('{"jsonrpc":"2.0","id":%d,"method":"environment/execute","params":'
                    '{"id":"%s","argv":%s,"stdin":"' % (i, env, argv)).encode()
            tail = b'"}}'
            length = len(head) + len(body) + len(tail)
            pieces = [b"Content-Length: %d\r\n\r\n" % length, head]
            pieces += [body[at:at + MIB] for at in range(0, len(body), MIB)] + [tail]
            for piece in pieces:
                client.process.stdin.write(piece)
                client.process.stdin.flush()
                written[0] += len(piece)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    last, since = -1, time.monotonic()
    while writer.is_alive():
        writer.join(0.1)
        if written[0] != last:
            last, since = written[0], time.monotonic()
        elif time.monotonic() - since > 2:
            break
    paused_after = round(written[0] / MIB, 1)
    lock.close()
    writer.join()
    ids = busy_ids + big_ids
    answers = client.wait(ids)
    answers["mib_written_before_release"] = paused_after
    return ids, answers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("load", choices=["output", "queue"])
    parser.add_argument("--wsp", default="target/release/wsp")
    parser.add_argument("--n", type=int)
    parser.add_argument("--slots", type=int, default=64)
    parser.add_argument("--python", default="3.12")
    parser.add_argument("--log", default="/dev/null")
    parser.add_argument("extra", nargs="*", help="more `wsp serve` arguments (after --)")
    args = parser.parse_args()
    args.n = args.n or (16 if args.load == "output" else 40)
    with tempfile.TemporaryDirectory() as work:
        client = Client(args.wsp, os.path.join(work, "state"), args.log, args.extra)
        client.call(0, "initialize", {"client_name": "rss", "client_protocol_version": "0.1.0"})
        created = client.call(1, "environment/create", {"name": "rss", "python_version": args.python})
        env = created["id"]
        idle = client.status_mib("VmRSS:")
        started = time.monotonic()
        if args.load == "output":
            ids, answers = output_load(client, env, args)
        else:
            ids, answers = queue_load(client, env, args, work)
        elapsed = time.monotonic() - started
        peak = client.status_mib("VmHWM:")
        answered = sum(1 for i in ids if answers.get(i) is not None)
        errors = sum(1 for i in ids if answers.get(i) and answers[i]["error"] is not None)
        truncated = sum(1 for i in ids if answers.get(i) and answers[i].get("stdout_truncated"))
        alive = client.process.poll() is None
        client.process.stdin.close()
        status = client.process.wait()
        print(json.dumps({
            "load": args.load, "n": args.n, "idle_rss_mib": round(idle or 0, 1),
            "peak_rss_mib": round(peak or 0, 1), "answered": answered, "expected": len(ids),
            "errors": errors, "stdout_truncated": truncated,
            "largest_frame_mib": round(client.largest_frame / MIB, 1),
            "mib_written_before_release": answers.get("mib_written_before_release"),
            "seconds": round(elapsed, 1), "alive_at_end": alive, "exit_status": status,
        }))
        return 0 if alive and answered == len(ids) and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
