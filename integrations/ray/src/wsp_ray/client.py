"""A small WSP client: JSON-RPC 2.0 with Content-Length framing over a Unix socket."""

from __future__ import annotations

import itertools
import json
import socket
from typing import Any, Optional

PROTOCOL_VERSION = "0.1.0"
MAX_FRAME_BYTES = 64 * 1024 * 1024


class WspError(Exception):
    """A JSON-RPC error answered by a wsp server, with its code and data."""

    def __init__(self, code: int, message: str, data: Any = None):
        self.code = code
        self.message = message
        self.data = data if isinstance(data, dict) else {}
        super().__init__(self.describe())

    @property
    def reason(self) -> Optional[str]:
        return self.data.get("reason")

    @property
    def detail(self) -> Optional[str]:
        return self.data.get("detail")

    def describe(self) -> str:
        text = f"wsp error {self.code}"
        if self.reason:
            text += f" ({self.reason})"
        text += f": {self.message}"
        if self.detail:
            text += f"\ndetail: {self.detail}"
        rest = {k: v for k, v in self.data.items() if k not in ("reason", "detail")}
        if rest:
            text += f"\ndata: {json.dumps(rest, sort_keys=True)}"
        return text


class WspConnectionLost(ConnectionError):
    """The server closed the connection, or could not be reached."""


class WspConnection:
    """One WSP session on a server listening on a Unix socket."""

    def __init__(self, socket_path: str, client_name: str = "wsp-ray", timeout: Optional[float] = None):
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._socket.settimeout(timeout)
            self._socket.connect(socket_path)
        except OSError as error:
            self._socket.close()
            raise WspConnectionLost(f"cannot connect to unix:{socket_path}: {error}") from error
        self._reader = self._socket.makefile("rb")
        self._ids = itertools.count(1)
        self.server_info = self.request(
            "initialize",
            {"client_name": client_name, "client_protocol_version": PROTOCOL_VERSION},
        )

    @property
    def features(self) -> list:
        return list(self.server_info.get("features", []))

    def request(self, method: str, params: Optional[dict] = None) -> Any:
        request_id = next(self._ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        body = json.dumps(message).encode()
        try:
            self._socket.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        except OSError as error:
            raise WspConnectionLost(f"sending {method}: {error}") from error
        while True:
            answer = self._read_message()
            if answer.get("id") != request_id:
                continue  # a notification ($/progress, environment/changed)
            if "error" in answer:
                error = answer["error"]
                raise WspError(error.get("code", 0), error.get("message", ""), error.get("data"))
            return answer.get("result")

    def _read_message(self) -> dict:
        length = None
        try:
            while True:
                line = self._reader.readline(8192)
                if not line:
                    raise WspConnectionLost("the wsp server closed the connection")
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if length is None or length < 0 or length > MAX_FRAME_BYTES:
                raise WspConnectionLost(f"bad frame header from the wsp server (length {length})")
            body = self._reader.read(length)
        except OSError as error:
            raise WspConnectionLost(f"reading from the wsp server: {error}") from error
        if len(body) != length:
            raise WspConnectionLost("the wsp server closed the connection mid-frame")
        return json.loads(body)

    def close(self) -> None:
        self._reader.close()
        self._socket.close()

    def __enter__(self) -> "WspConnection":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
