// One full WSP session against a running `wsp serve --listen ws://127.0.0.1:PORT`, driven by
// vscode-ws-jsonrpc (the WebSocket transport of the Monaco language clients) over a `ws`
// WebSocket, both unmodified. The token goes in the upgrade's `Authorization: Bearer` header.
//
// Usage: node ws_session.mjs WS_URL TOKEN_FILE
// Exits 0 only if an upgrade with a wrong token is refused with 401, every answer of the
// session is right and the server closes the WebSocket normally after `exit`; otherwise prints
// each wrong answer and exits 1.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import WebSocket from "ws";
import { ConsoleLogger, createWebSocketConnection, toSocket } from "vscode-ws-jsonrpc";
import checks from "./session_checks.js";

const { check, deadline, failures, report, runSession } = checks;
// The vscode-jsonrpc that vscode-ws-jsonrpc itself builds its connection with.
const { ResponseError } = createRequire(import.meta.resolve("vscode-ws-jsonrpc"))("vscode-jsonrpc");

// The HTTP status an upgrade with `token` is refused with, or "upgraded".
function upgradeStatus(url, token) {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
    socket.on("unexpected-response", (_request, response) => {
      resolve(response.statusCode);
      socket.terminate();
    });
    socket.on("error", () => {});
    socket.on("open", () => {
      resolve("upgraded");
      socket.terminate();
    });
  });
}

async function main() {
  const [url, tokenFile] = process.argv.slice(2);
  if (!url || !tokenFile) {
    console.error("usage: node ws_session.mjs WS_URL TOKEN_FILE");
    process.exit(2);
  }
  const token = readFileSync(tokenFile, "utf8").trim();
  let webSocket;
  const timer = deadline("vscode-ws-jsonrpc session", () => webSocket && webSocket.terminate());

  try {
    const refused = await upgradeStatus(url, `${token}x`);
    check(refused === 401, "a wrong token: the upgrade is refused with 401", refused);

    webSocket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
    const closed = new Promise((resolve) => webSocket.addEventListener("close", resolve));
    await new Promise((resolve, reject) => {
      webSocket.addEventListener("open", resolve);
      webSocket.addEventListener("error", (event) => reject(new Error(event.message)));
    });
    const connection = createWebSocketConnection(toSocket(webSocket), new ConsoleLogger());
    connection.onError(([error]) => failures.push(`connection error: ${error.message || error}`));
    connection.listen();
    const options = { client: "vscode-ws-jsonrpc", transport: "websocket", ResponseError };
    await runSession(connection, options);
    await connection.sendNotification("exit");
    // `exit` ends this connection only: the server closes the WebSocket.
    const close = await closed;
    check(close.code === 1000, "exit: the server closes the WebSocket with 1000", {
      code: close.code,
      reason: close.reason,
    });
  } catch (error) {
    failures.push(`session failed: ${error && error.stack ? error.stack : error}`);
    if (webSocket) {
      webSocket.terminate();
    }
  }
  clearTimeout(timer);
  report("vscode-ws-jsonrpc session");
}

main();
