"""The WSP session both Python clients drive, and the checks on every answer.

A client adapter supplies `call(method, params)`, an awaitable that returns the result or
raises its library's JSON-RPC error, and `error_fields(exception)`, which reads `(code, data)`
from such an error, or returns None for any other exception.
"""

import asyncio
import json
import re

ENV_ID = re.compile(r"env-[0-9a-f]{12}")
SESSION_METHODS = [
    "environment/create",
    "environment/delete",
    "environment/execute",
    "environment/get",
    "initialize",
    "shutdown",
]


async def answer_or_exit(answer, server_exit, method):
    """Awaits `answer` unless the server process ends first, which is then an error."""
    answer = asyncio.ensure_future(answer)
    done, _ = await asyncio.wait({answer, server_exit}, return_when=asyncio.FIRST_COMPLETED)
    if answer not in done:
        raise RuntimeError(f"the server exited with {server_exit.result()} before answering {method}")
    return answer.result()


class Checks:
    """Collects every wrong answer instead of stopping at the first."""

    def __init__(self, client):
        self.client = client
        self.failures = []

    def check(self, condition, what, actual):
        if not condition:
            self.failures.append(f"{what}; got {json.dumps(actual, default=repr)}")
        return condition

    def report(self):
        """Prints the verdict; returns the process exit status."""
        for failure in self.failures:
            print(f"FAIL {failure}")
        if self.failures:
            return 1
        print(f"{self.client} session: every answer is right")
        return 0


async def run_session(checks, call, error_fields):
    """initialize, create, execute, get, delete, get (now -31001), shutdown."""
    check = checks.check
    capabilities = await call(
        "initialize",
        {"client_name": checks.client, "client_protocol_version": "0.1.0"},
    )
    check(capabilities.get("protocol_version") == "0.1.0", "initialize: protocol_version is 0.1.0", capabilities)
    methods = capabilities.get("methods")
    if check(isinstance(methods, list), "initialize: methods is a list", capabilities):
        for method in SESSION_METHODS:
            check(method in methods, f"initialize: methods lists {method}", methods)
        check(methods == sorted(methods), "initialize: methods are sorted", methods)

    name = f"{checks.client}-session"
    created = await call("environment/create", {"name": name, "python_version": "3.12"})
    env_id = created.get("id")
    if not check(isinstance(env_id, str) and ENV_ID.fullmatch(env_id), "create: id is env- and 12 hex digits", created):
        return
    check(created.get("name") == name, "create: name echoed", created)
    check(created.get("python_version") == "3.12", "create: python_version echoed as asked", created)
    interpreter = created.get("interpreter_path")
    check(isinstance(interpreter, str) and interpreter.startswith("/"), "create: interpreter_path is absolute", created)
    check(isinstance(created.get("installed_packages"), list), "create: installed_packages is a list", created)
    extra = created.get("extra") or {}
    check(isinstance(extra.get("backend"), str) and isinstance(extra.get("path"), str), "create: extra has backend and path", created)
    full_version = extra.get("python_full_version")
    check(isinstance(full_version, str) and full_version.startswith("3.12."), "create: extra.python_full_version is 3.12.*", created)

    ran = await call("environment/execute", {"id": env_id, "argv": ["python", "-c", "print(6*7)"]})
    check(type(ran.get("exit_code")) is int and ran.get("exit_code") == 0, "execute: exit_code is 0", ran)
    check(ran.get("stdout") == "42\n", "execute: stdout is 42", ran)
    check(ran.get("stderr") == "", "execute: stderr is empty", ran)

    details = await call("environment/get", {"id": env_id})
    check(details.get("id") == env_id, "get: id echoed", details)
    check(details.get("name") == name, "get: name as created", details)
    check(details.get("python_version") == "3.12", "get: python_version as created", details)
    check(details.get("interpreter_path") == interpreter, "get: interpreter_path as created", details)
    packages = details.get("installed_packages")
    check(
        isinstance(packages, list)
        and all(isinstance(p.get("name"), str) and isinstance(p.get("version"), str) for p in packages),
        "get: installed_packages are {name, version}",
        details,
    )
    check((details.get("extra") or {}).get("path") == extra.get("path"), "get: extra.path as created", details)

    ack = await call("environment/delete", {"id": env_id})
    check(isinstance(ack, dict) and ack.get("id") == env_id, "delete: acknowledges the id", ack)

    try:
        gone = await call("environment/get", {"id": env_id})
        check(False, "get after delete: an error", gone)
    except Exception as error:  # the library's own error type, read by error_fields
        fields = error_fields(error)
        if fields is None:
            raise
        code, data = fields
        check(code == -31001, "get after delete: error -31001", code)
        check(isinstance(data, dict) and data.get("id") == env_id, "get after delete: error data names the id", data)

    stopped = await call("shutdown", None)
    check(stopped is None, "shutdown: result is null", stopped)
