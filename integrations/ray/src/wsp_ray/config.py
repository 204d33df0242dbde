"""wsp-ray's settings, read from the environment of Ray's runtime env agent on each node.

- `WSP_RAY_SOCKET`: use the wsp server already listening there (a DaemonSet's); never start one.
- `WSP_RAY_DIR`: the node's wsp directory (socket, store, log); default: under the node's
  runtime env directory in Ray's session directory, one per Ray node.
- `WSP_RAY_SERVE_ARGS`: more arguments for the `wsp serve` it starts (shell words), such as
  `--channel URL` for the conda backend or `--find-links DIR`.
- `WSP_RAY_KEEP_BYTES`: the store's size bound for `wsp gc` (default 10 GiB).
- `WSP_RAY_WSP`: the wsp binary (default: the one shipped in this package, else `wsp` on PATH).
"""

from __future__ import annotations

import os
import shlex
import site
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import List

from .server import NodeServer

DEFAULT_KEEP_BYTES = 10 * 1024**3
MAX_SOCKET_PATH = 100


def _agent_argument(name: str) -> str:
    """The value of `--name VALUE` or `--name=VALUE` on this process's command line."""
    argv = sys.argv
    for index, argument in enumerate(argv):
        if argument == name and index + 1 < len(argv):
            return argv[index + 1]
        if argument.startswith(name + "="):
            return argument.split("=", 1)[1]
    return ""


def node_dir() -> Path:
    configured = os.environ.get("WSP_RAY_DIR")
    if configured:
        return Path(configured)
    node = _agent_argument("--node-id")[:12] or os.environ.get("RAY_RAYLET_PID") or str(os.getppid())
    runtime_env_dir = _agent_argument("--runtime-env-dir")
    if runtime_env_dir:
        candidate = Path(runtime_env_dir) / f"wsp-{node}"
        if len(str(candidate / "wsp.sock")) <= MAX_SOCKET_PATH:
            return candidate
    return Path(tempfile.gettempdir()) / f"wsp-ray-{os.getuid()}" / f"node-{node}"


def node_server() -> NodeServer:
    serve_args = shlex.split(os.environ.get("WSP_RAY_SERVE_ARGS", ""))
    socket_path = os.environ.get("WSP_RAY_SOCKET")
    if socket_path:
        return NodeServer(Path(socket_path).parent, serve_args, socket_path=socket_path)
    return NodeServer(node_dir(), serve_args)


def keep_bytes() -> int:
    value = os.environ.get("WSP_RAY_KEEP_BYTES", "")
    try:
        return max(0, int(value)) if value else DEFAULT_KEEP_BYTES
    except ValueError:
        return DEFAULT_KEEP_BYTES


def ray_site_dirs() -> List[str]:
    """Where this Python finds Ray and its dependencies: the worker gets these after the
    environment's own site-packages."""
    import ray

    dirs = [str(Path(ray.__file__).resolve().parent.parent)]
    for directory in [sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *site.getsitepackages()]:
        if directory and directory not in dirs and os.path.isdir(directory):
            dirs.append(directory)
    return dirs
