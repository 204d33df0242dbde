"""Helpers for the tests: wheels made on the spot, a small local Ray cluster whose nodes each
get their own wsp settings, and the stores behind them."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import subprocess
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, List, Optional

import ray
from ray.cluster_utils import Cluster
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from wsp_ray.server import wsp_binary

PLUGINS = json.dumps([{"class": "wsp_ray.WspPlugin"}])
NODE_ARGS = {"object_store_memory": 78 * 1024 * 1024, "include_dashboard": False}
# Workers start only for tasks (none ahead of time for the driver's default environment).
HEAD_ARGS = {"_system_config": {"prestart_worker_first_driver": False, "enable_worker_prestart": False}}


def make_wheel(directory: Path, name: str, version: str) -> Path:
    """A pure wheel holding module `name` with `VERSION = version`."""
    directory.mkdir(parents=True, exist_ok=True)
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": f"VERSION = {version!r}\n",
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: wsp-ray-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = "\n".join(record) + "\n"
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def wsp(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([wsp_binary(), *args], capture_output=True, text=True, timeout=120, check=check)


def store_environments(state_dir: Path) -> List[dict]:
    """The environments in a store, as `wsp list` on it sees them."""
    result = wsp("--state-dir", str(state_dir), "list", "--json", check=False)
    if result.returncode != 0:
        raise AssertionError(f"wsp list failed: {result.stderr}")
    return json.loads(result.stdout or "[]")


@ray.remote(num_cpus=1)
def probe(module: Optional[str] = None) -> dict:
    """What a task sees: its interpreter, its node, the environment, a module's VERSION."""
    import importlib
    import os
    import shutil
    import sys

    info = {
        "executable": sys.executable,
        "version": "%d.%d.%d" % sys.version_info[:3],
        "node": ray.get_runtime_context().get_node_id(),
        "environment": os.environ.get("WSP_RAY_ENVIRONMENT_ID"),
        "conda_on_path": shutil.which("conda"),
        "ray_from": os.path.dirname(os.path.dirname(ray.__file__)),
    }
    if module:
        info["module_version"] = importlib.import_module(module).VERSION
    return info


def on_node(node_id: str, runtime_env: dict, **options):
    return probe.options(
        runtime_env=runtime_env,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        **options,
    )


class LocalCluster:
    """A head node without CPUs (it schedules no task) and worker nodes added per test."""

    def __init__(self):
        self._saved = os.environ.get("RAY_RUNTIME_ENV_PLUGINS")
        os.environ["RAY_RUNTIME_ENV_PLUGINS"] = PLUGINS
        self.cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, **NODE_ARGS, **HEAD_ARGS})
        self.node_dirs: Dict[str, Path] = {}
        self.nodes: list = []
        ray.init(address=self.cluster.address, logging_level="warning", log_to_driver=False)

    def add_node(self, node_dir: Optional[Path], num_cpus: int = 1, **wsp_settings: str) -> str:
        """Adds a node whose runtime env agent sees `WSP_RAY_DIR=node_dir` and the settings
        given (`WSP_RAY_KEEP_BYTES=...`); returns its node id."""
        settings = dict(wsp_settings)
        if node_dir is not None:
            settings["WSP_RAY_DIR"] = str(node_dir)
        with _environment(settings):
            node = self.cluster.add_node(num_cpus=num_cpus, **NODE_ARGS)
        self.cluster.wait_for_nodes()
        self.nodes.append(node)
        if node_dir is not None:
            self.node_dirs[node.node_id] = node_dir
        return node.node_id

    def remove_added_nodes(self) -> None:
        """Removes the nodes a test added (their agents exit, and with them their servers)."""
        try:
            for node in self.nodes:
                self.cluster.remove_node(node)
        finally:
            self.nodes.clear()
            for node_dir in self.node_dirs.values():
                stop_server(node_dir)
            self.node_dirs.clear()

    def shutdown(self) -> None:
        try:
            self.remove_added_nodes()
            ray.shutdown()
            self.cluster.shutdown()
        finally:
            if self._saved is None:
                os.environ.pop("RAY_RUNTIME_ENV_PLUGINS", None)
            else:
                os.environ["RAY_RUNTIME_ENV_PLUGINS"] = self._saved


def server_pid(node_dir: Path) -> int:
    return int((node_dir / "server.pid").read_text())


def stop_server(node_dir: Path) -> None:
    """Kills a node's wsp server if it outlived its node (it should not: SIGTERM comes with
    the agent's exit)."""
    try:
        os.kill(server_pid(node_dir), signal.SIGKILL)
    except (OSError, ValueError):
        pass


@contextmanager
def _environment(settings: Dict[str, str]):
    saved = {key: os.environ.get(key) for key in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def events(node_dir: Path) -> List[str]:
    """The plugin's event lines on a node (`wsp-ray.log`): built, reused, released, gc."""
    try:
        return (node_dir / "wsp-ray.log").read_text().splitlines()
    except FileNotFoundError:
        return []


def wait_for_event(node_dir: Path, fragment: str, timeout: float = 120.0) -> str:
    """Waits until the node's `wsp-ray.log` has a line containing `fragment` and returns it."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in events(node_dir):
            if fragment in line:
                return line
        time.sleep(0.02)
    raise AssertionError(f"no {fragment!r} in {node_dir / 'wsp-ray.log'} after {timeout}s: {events(node_dir)}")


def wsp_over_socket(node_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """A `wsp --connect unix:<node's socket>` command: the node's own server answers."""
    return wsp("--connect", f"unix:{node_dir / 'wsp.sock'}", *args)


def uri_for(spec: dict) -> str:
    from wsp_ray.spec import uri_of

    return uri_of(spec)


@ray.remote(num_cpus=0)
class Holder:
    """An actor whose worker holds its runtime env (and so its wsp environment) while it lives."""

    def where(self) -> str:
        import sys

        return sys.executable
