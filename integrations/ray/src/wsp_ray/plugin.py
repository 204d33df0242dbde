"""`WspPlugin`: Ray's runtime env plugin `wsp`, an environment from the node's wsp server."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import platform
import sys
import threading
from pathlib import Path
from typing import Dict, List, Optional, Set

from ray._private.runtime_env.plugin import RuntimeEnvPlugin
from ray.exceptions import RuntimeEnvSetupError

from . import config
from .client import WspConnectionLost, WspError
from .server import NodeServer
from .spec import SpecError, create_params, normalize, uri_of

RAY_SITE_SHIM = Path(__file__).parent / "ray_site"
CONFLICTING_FIELDS = ("pip", "uv", "conda", "py_executable", "container", "image_uri")
# `reuse`, `environment/gc` and `extra.disk_bytes` came together; a server that has the method
# has all three (it lists the feature `environment.lock` only once `environment/lock` is in too).
GC_METHOD = "environment/gc"


def _can_reuse_and_collect(connection) -> bool:
    return GC_METHOD in connection.server_info.get("methods", [])


def _setup_error(text: str) -> RuntimeEnvSetupError:
    return RuntimeEnvSetupError(f"wsp-ray: {text}")


class WspPlugin(RuntimeEnvPlugin):
    """Builds `runtime_env={"wsp": {...}}` once per node through the node's wsp server, and
    starts the worker on that environment's interpreter."""

    name = "wsp"

    def __init__(self):
        super().__init__()
        # Ray's URI cache for this plugin is made right after this constructor, with its size
        # from this variable: 0 makes it a pure reference count, whose releases reach
        # delete_uri at once; the size bound and the order of eviction are wsp gc's.
        os.environ.setdefault("RAY_RUNTIME_ENV_WSP_CACHE_SIZE_GB", "0")
        self._node: Optional[NodeServer] = None
        self._start_lock: Optional[asyncio.Lock] = None
        # Guards the maps below and, as a condition, orders gc against creates: a gc runs only
        # while no create is in flight (so it never deletes an environment that a create has
        # answered but not yet registered as in use) and a create waits for a running gc.
        self._state_lock = threading.Condition()
        self._creating = 0
        self._collecting = False
        self._environments: Dict[str, dict] = {}
        self._in_use: Set[str] = set()
        self._events: Optional[logging.Logger] = None

    @staticmethod
    def validate(runtime_env_dict: dict) -> None:
        try:
            normalize(runtime_env_dict.get("wsp"))
        except SpecError as error:
            raise ValueError(str(error)) from error
        clashing = [field for field in CONFLICTING_FIELDS if runtime_env_dict.get(field)]
        if clashing:
            raise ValueError(f"the wsp field sets the worker's interpreter; it cannot be combined with {clashing}")

    def get_uris(self, runtime_env) -> List[str]:
        spec = runtime_env.get("wsp")
        return [] if spec is None else [uri_of(spec)]

    @property
    def node(self) -> NodeServer:
        if self._node is None:
            self._node = config.node_server()
        return self._node

    def _event(self, message: str, *args) -> None:
        """One line in the node's `wsp-ray.log`: built, reused, released, gc deleted, started."""
        if self._events is None:
            self._events = logging.getLogger(f"wsp_ray.events.{id(self)}")
            self._events.propagate = False
            self._events.setLevel(logging.INFO)
            try:
                self.node.base_dir.mkdir(parents=True, exist_ok=True)
                handler = logging.FileHandler(self.node.base_dir / "wsp-ray.log")
                handler.setFormatter(logging.Formatter("%(asctime)s pid=%(process)d %(message)s"))
                self._events.addHandler(handler)
            except OSError:
                self._events.addHandler(logging.NullHandler())
        self._events.info(message, *args)

    async def create(self, uri: Optional[str], runtime_env, context, logger: logging.Logger) -> float:
        spec = runtime_env.get("wsp")
        uri = uri or uri_of(spec)
        loop = asyncio.get_running_loop()
        await self._ensure_server(loop)
        try:
            details = await loop.run_in_executor(None, self._create_environment, uri, spec, logger)
        except WspConnectionLost as lost:
            logger.warning("wsp-ray: lost the wsp server (%s); starting it again", lost)
            self._event("lost the wsp server: %s", lost)
            await self._ensure_server(loop)
            try:
                details = await loop.run_in_executor(None, self._create_environment, uri, spec, logger)
            except WspConnectionLost as again:
                raise _setup_error(f"lost the wsp server twice: {again}\n{self.node.log_tail()}") from again
        return float(details.get("extra", {}).get("disk_bytes", 0) or 1)

    async def _ensure_server(self, loop: asyncio.AbstractEventLoop) -> None:
        """Starts the node's server when none answers. The process is spawned on the event
        loop's thread, which lives as long as the agent, so that the server's parent-death
        signal comes when the agent exits and not when some pool thread does."""
        node = self.node
        if await loop.run_in_executor(None, node.answers):
            return
        if node.external:
            raise _setup_error(f"no wsp server answers on {node.socket_path} (WSP_RAY_SOCKET)")
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            lock_file = await loop.run_in_executor(None, node.lock)
            try:
                if await loop.run_in_executor(None, node.answers):
                    return
                process = node.spawn()
                await loop.run_in_executor(None, node.wait_ready, process)
                self._event("started the wsp server, pid %d", process.pid)
            except (OSError, RuntimeError) as error:
                raise _setup_error(f"could not start the node's wsp server: {error}") from error
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)
                lock_file.close()

    def _create_environment(self, uri: str, spec: dict, logger: logging.Logger) -> dict:
        params = create_params(spec, default_python=platform.python_version(), name=f"ray-{uri[len('wsp://'):][:16]}")
        with self._state_lock:
            while self._collecting:
                self._state_lock.wait()
            self._creating += 1
        self._event("creating %s", uri)
        try:
            details = self._request_create(uri, params, logger)
        finally:
            with self._state_lock:
                self._creating -= 1
        extra = details.get("extra", {})
        version = extra.get("python_full_version", "")
        ray_python = "%d.%d" % sys.version_info[:2]
        if ".".join(version.split(".")[:2]) != ray_python:
            raise _setup_error(
                f"the environment's Python is {version}, but this node runs Ray on Python "
                f"{platform.python_version()}; Ray's workers need the same X.Y"
            )
        logger.info(
            "wsp-ray: %s is environment %s (%s, reused: %s), interpreter %s",
            uri,
            details.get("id"),
            extra.get("backend"),
            extra.get("reused"),
            details.get("interpreter_path"),
        )
        self._event("%s %s %s", "reused" if extra.get("reused") else "built", uri, details.get("id"))
        self._collect_garbage(logger)
        return details

    def _request_create(self, uri: str, params: dict, logger: logging.Logger) -> dict:
        """Sends `environment/create` and registers the answer as in use before the create
        counts as finished."""
        try:
            with self.node.connect_only() as connection:
                if _can_reuse_and_collect(connection):
                    params["reuse"] = True
                else:
                    logger.warning("wsp-ray: this wsp server cannot reuse environments; building %s anew", uri)
                    params["name"] = f"{params['name']}-{os.urandom(4).hex()}"
                details = connection.request("environment/create", params)
        except WspError as error:
            raise _setup_error(error.describe()) from error
        with self._state_lock:
            self._environments[uri] = details
            self._in_use.add(uri)
        return details

    def modify_context(self, uris: List[str], runtime_env, context, logger: logging.Logger) -> None:
        with self._state_lock:
            details = next((self._environments[uri] for uri in uris if uri in self._environments), None)
        if details is None:
            raise _setup_error(f"no environment was created for {uris}")
        context.py_executable = details["interpreter_path"]
        env_vars = context.env_vars
        existing = env_vars.get("PYTHONPATH")
        env_vars["PYTHONPATH"] = str(RAY_SITE_SHIM) + (os.pathsep + existing if existing else "")
        env_vars["WSP_RAY_PYTHON"] = "%d.%d" % sys.version_info[:2]
        env_vars["WSP_RAY_SITE_DIRS"] = os.pathsep.join(config.ray_site_dirs())
        env_vars["WSP_RAY_ENVIRONMENT_ID"] = details["id"]

    def delete_uri(self, uri: str, logger: logging.Logger) -> float:
        """Ray no longer uses `uri` on this node: wsp gc may now evict it, least recently used
        first, when the store is past its bound."""
        with self._state_lock:
            self._in_use.discard(uri)
        freed = self._collect_garbage(logger)
        self._event("released %s", uri)
        return float(freed)

    def _collect_garbage(self, logger: logging.Logger) -> int:
        """Runs `environment/gc` with the bound, raised to what the environments Ray uses take
        (each touched first, so that they are the most recently used and evicted last)."""
        keep_bytes = config.keep_bytes()
        try:
            with self.node.connect_only() as connection:
                if not _can_reuse_and_collect(connection):
                    return 0
                with self._state_lock:
                    if self._creating:
                        return 0  # the last create to finish collects
                    self._collecting = True
                    in_use = [self._environments[uri]["id"] for uri in self._in_use if uri in self._environments]
                try:
                    before, result = self._gc_keeping(connection, in_use, keep_bytes)
                finally:
                    with self._state_lock:
                        self._collecting = False
                        self._state_lock.notify_all()
        except (WspError, WspConnectionLost) as error:
            logger.warning("wsp-ray: gc failed: %s", error)
            return 0
        deleted = set(result.get("deleted", []))
        if deleted:
            logger.info("wsp-ray: gc deleted %s, %s bytes left", result.get("deleted"), result.get("disk_bytes"))
            self._event("gc deleted %s, %s bytes left", " ".join(result.get("deleted", [])), result.get("disk_bytes"))
            with self._state_lock:
                for uri, details in list(self._environments.items()):
                    if details["id"] in deleted:
                        del self._environments[uri]
        return max(0, int(before) - int(result.get("disk_bytes", 0)))

    @staticmethod
    def _gc_keeping(connection, in_use: List[str], keep_bytes: int):
        """Touches the environments in use (`environment/get`: they become the most recently
        used) and runs `environment/gc` with the bound raised to their size; returns the store's
        size before and gc's answer."""
        used_bytes = 0
        for environment_id in in_use:
            try:
                details = connection.request("environment/get", {"id": environment_id})
            except WspError:
                continue  # deleted by someone else; nothing to keep
            used_bytes += int(details.get("extra", {}).get("disk_bytes", 0))
        before = connection.request("environment/gc", {"keep_bytes": 2**62})["disk_bytes"]
        result = connection.request("environment/gc", {"keep_bytes": max(keep_bytes, used_bytes)})
        return before, result
