"""One full WSP session against `wsp serve`, driven by python-lsp-jsonrpc (the JSON-RPC layer
of python-lsp-server): its stream reader and writer around an Endpoint, unmodified.

Usage: python pylsp_jsonrpc_session.py WSP_BINARY serve --state-dir DIR [more server args]
Exits 0 only if every answer is right; otherwise prints each wrong answer and exits 1.
"""

import asyncio
import contextlib
import subprocess
import sys
import threading

from pylsp_jsonrpc.endpoint import Endpoint
from pylsp_jsonrpc.exceptions import JsonRpcException
from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter

from session_checks import Checks, answer_or_exit, run_session

DEADLINE_SECONDS = 120


def error_fields(error):
    if isinstance(error, JsonRpcException):
        return error.code, error.data
    return None


async def main(command):
    checks = Checks("python-lsp-jsonrpc")
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    writer = JsonRpcStreamWriter(server.stdin)
    reader = JsonRpcStreamReader(server.stdout)
    endpoint = Endpoint({}, writer.write)
    listener = threading.Thread(target=reader.listen, args=(endpoint.consume,), daemon=True)
    listener.start()

    server_exit = asyncio.ensure_future(asyncio.to_thread(server.wait))

    async def call(method, params):
        answer = asyncio.wrap_future(endpoint.request(method, params))
        return await answer_or_exit(answer, server_exit, method)

    try:
        await asyncio.wait_for(run_session(checks, call, error_fields), DEADLINE_SECONDS)
        endpoint.notify("exit")
        status = await asyncio.wait_for(server_exit, DEADLINE_SECONDS)
        checks.check(status == 0, "exit: the server exits with status 0", status)
    except Exception as error:
        checks.failures.append(f"session failed: {error!r}")
        server.kill()
        server.wait()
    listener.join(DEADLINE_SECONDS)
    checks.check(not listener.is_alive(), "the reader stops at the server's end of output", None)
    endpoint.shutdown()
    with contextlib.suppress(BrokenPipeError):  # the server may be gone: it ended the session
        writer.close()
    return checks.report()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: python pylsp_jsonrpc_session.py WSP_BINARY serve [server args]")
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1:])))
