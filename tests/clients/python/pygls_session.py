"""One full WSP session against `wsp serve`, driven by pygls's JsonRPCClient, unmodified.

Usage: python pygls_session.py WSP_BINARY serve --state-dir DIR [more server args]
Exits 0 only if every answer is right; otherwise prints each wrong answer and exits 1.
"""

import asyncio
import sys

from pygls.client import JsonRPCClient
from pygls.exceptions import JsonRpcException

from session_checks import Checks, answer_or_exit, run_session

DEADLINE_SECONDS = 120


def plain(value):
    """pygls hands results of methods it has no type for back as nested namedtuples."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def error_fields(error):
    if isinstance(error, JsonRpcException):
        return error.code, error.data
    return None


async def drain(stream, sink):
    """Keeps the server's stderr (a pipe pygls opens and never reads) from filling up."""
    while chunk := await stream.read(65536):
        sink.append(chunk)


async def main(command):
    checks = Checks("pygls")
    client = JsonRPCClient()
    await client.start_io(*command)
    server = client._server  # pygls keeps the process it started here; no public accessor
    stderr = []
    stderr_task = asyncio.create_task(drain(server.stderr, stderr))

    server_exit = asyncio.ensure_future(server.wait())

    async def call(method, params):
        answer = client.protocol.send_request_async(method, params)
        return plain(await answer_or_exit(answer, server_exit, method))

    try:
        await asyncio.wait_for(run_session(checks, call, error_fields), DEADLINE_SECONDS)
        client.protocol.notify("exit")
        status = await asyncio.wait_for(server_exit, DEADLINE_SECONDS)
        checks.check(status == 0, "exit: the server exits with status 0", status)
    except Exception as error:
        checks.failures.append(f"session failed: {error!r}")
        if server.returncode is None:
            server.kill()
    try:
        await asyncio.wait_for(client.stop(), DEADLINE_SECONDS)
        await stderr_task
    except asyncio.TimeoutError:
        checks.failures.append("the client did not stop: the server's stdout stayed open")
    if checks.failures and stderr:
        print("server stderr:\n" + b"".join(stderr).decode(errors="replace"))
    return checks.report()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: python pygls_session.py WSP_BINARY serve [server args]")
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1:])))
