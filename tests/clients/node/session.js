// One full WSP session against `wsp serve` on stdio, driven by vscode-jsonrpc (the JSON-RPC
// layer of VS Code's language client), unmodified.
//
// Usage: node session.js WSP_BINARY serve --state-dir DIR [more server args]
// Exits 0 only if every answer is right; otherwise prints each wrong answer and exits 1.
"use strict";

const { spawn } = require("node:child_process");
const rpc = require("vscode-jsonrpc/node");
const { check, deadline, failures, report, runSession } = require("./session_checks");

async function main() {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    console.error("usage: node session.js WSP_BINARY serve [server args]");
    process.exit(2);
  }
  const server = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => server.on("exit", (code, signal) => resolve({ code, signal })));
  const spawnFailed = new Promise((_, reject) => server.on("error", reject));
  const connection = rpc.createMessageConnection(
    new rpc.StreamMessageReader(server.stdout),
    new rpc.StreamMessageWriter(server.stdin),
  );
  connection.onError(([error]) => failures.push(`connection error: ${error}`));
  connection.listen();
  const timer = deadline("vscode-jsonrpc session", () => server.kill("SIGKILL"));

  try {
    const options = { client: "vscode-jsonrpc", transport: "stdio", ResponseError: rpc.ResponseError };
    await Promise.race([runSession(connection, options), spawnFailed]);
    await connection.sendNotification("exit");
    const status = await exited;
    check(status.code === 0 && status.signal === null, "exit: the server exits with status 0", status);
  } catch (error) {
    failures.push(`session failed: ${error && error.stack ? error.stack : error}`);
    server.kill("SIGKILL");
  }
  clearTimeout(timer);
  connection.dispose();
  report("vscode-jsonrpc session");
}

main();
