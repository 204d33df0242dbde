// One full WSP session against a running `wsp serve --listen unix:PATH`, driven by
// vscode-jsonrpc's socket transport (SocketMessageReader and SocketMessageWriter on a
// net.Socket), unmodified.
//
// Usage: node socket_session.js SOCKET_PATH
// Exits 0 only if every answer is right and the server closes the connection after `exit`;
// otherwise prints each wrong answer and exits 1.
"use strict";

const net = require("node:net");
const rpc = require("vscode-jsonrpc/node");
const { check, deadline, failures, report, runSession } = require("./session_checks");

async function main() {
  const path = process.argv[2];
  if (!path) {
    console.error("usage: node socket_session.js SOCKET_PATH");
    process.exit(2);
  }
  const socket = net.connect(path);
  const connected = new Promise((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const closed = new Promise((resolve) => socket.once("close", resolve));
  const timer = deadline("vscode-jsonrpc socket session", () => socket.destroy());

  try {
    await connected;
    const connection = rpc.createMessageConnection(
      new rpc.SocketMessageReader(socket),
      new rpc.SocketMessageWriter(socket),
    );
    connection.onError(([error]) => failures.push(`connection error: ${error}`));
    connection.listen();
    const options = { client: "vscode-jsonrpc-socket", transport: "unix", ResponseError: rpc.ResponseError };
    await runSession(connection, options);
    await connection.sendNotification("exit");
    // `exit` ends this connection only: the server closes it, and nothing is written after.
    const hadError = await closed;
    check(hadError === false, "exit: the server closes the connection cleanly", { hadError });
    connection.dispose();
  } catch (error) {
    failures.push(`session failed: ${error && error.stack ? error.stack : error}`);
    socket.destroy();
  }
  clearTimeout(timer);
  report("vscode-jsonrpc socket session");
}

main();
