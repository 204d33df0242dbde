"""One wsp server per node: found on its socket, or started under a file lock."""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from .client import WspConnection, WspConnectionLost

PACKAGED_BINARY = Path(__file__).parent / "bin" / "wsp"
PR_SET_PDEATHSIG = 1
READY_TIMEOUT_S = 30.0


def wsp_binary() -> str:
    """The wsp binary: `$WSP_RAY_WSP`, else the one in this package, else `wsp` on PATH."""
    configured = os.environ.get("WSP_RAY_WSP")
    if configured:
        return configured
    if PACKAGED_BINARY.is_file() and os.access(PACKAGED_BINARY, os.X_OK):
        return str(PACKAGED_BINARY)
    found = shutil.which("wsp")
    if found:
        return found
    raise FileNotFoundError(
        "no wsp binary: this wsp-ray was installed without one, none is on PATH and WSP_RAY_WSP is unset"
    )


def _die_with_parent() -> None:
    """Runs in the child: the server gets SIGTERM (and drains) when the agent that started it exits."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class NodeServer:
    """The wsp server of one node, in `base_dir`: `wsp.sock`, `state/`, `server.log`, `server.lock`."""

    def __init__(self, base_dir: Path, serve_args: Sequence[str] = (), socket_path: Optional[str] = None):
        self.base_dir = Path(base_dir)
        self.external = socket_path is not None
        self.socket_path = socket_path or str(self.base_dir / "wsp.sock")
        self.state_dir = self.base_dir / "state"
        self.log_path = self.base_dir / "server.log"
        self.pid_path = self.base_dir / "server.pid"
        self.serve_args = list(serve_args)
        self.starts = 0

    def connect_only(self, timeout: Optional[float] = None) -> WspConnection:
        """A session on the node's server; `WspConnectionLost` when none answers."""
        return WspConnection(self.socket_path, timeout=timeout)

    def answers(self) -> bool:
        try:
            WspConnection(self.socket_path, timeout=5.0).close()
            return True
        except (WspConnectionLost, OSError, ValueError):
            return False

    def lock(self):
        """Takes the node's start lock (a `flock` on `server.lock`) and returns its open file."""
        self.base_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.base_dir, 0o700)
        lock_file = open(self.base_dir / "server.lock", "a+")
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        return lock_file

    def ensure_running(self) -> None:
        """Starts the server unless one answers; the lock makes the check and the start one step."""
        lock_file = self.lock()
        try:
            if not self.answers():
                self.wait_ready(self.spawn())
        finally:
            lock_file.close()

    def spawn(self) -> subprocess.Popen:
        """Starts `wsp serve --listen unix:SOCKET`, its output appended to `server.log`."""
        argv = [
            wsp_binary(),
            "serve",
            "--listen",
            f"unix:{self.socket_path}",
            "--state-dir",
            str(self.state_dir),
            "--python",
            os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
            *self.serve_args,
        ]
        with open(self.log_path, "ab") as log:
            log.write(f"wsp-ray: starting {' '.join(argv)}\n".encode())
            log.flush()
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        self.pid_path.write_text(f"{process.pid}\n")
        self.starts += 1
        return process

    def wait_ready(self, process: subprocess.Popen) -> None:
        """Waits until the server answers on its socket; fails if it exits or takes too long."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        delay = 0.005
        while not self.answers():
            if process.poll() is not None:
                raise RuntimeError(
                    f"the wsp server exited with status {process.returncode} before answering; "
                    f"its log, {self.log_path}, ends:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"the wsp server did not answer within {READY_TIMEOUT_S}s:\n{self.log_tail()}")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def log_tail(self, limit: int = 4000) -> str:
        try:
            return self.log_path.read_bytes()[-limit:].decode(errors="replace")
        except OSError:
            return ""
