// One full WSP session against `wsp serve`, driven by vscode-jsonrpc (the JSON-RPC layer of
// VS Code's language client), unmodified.
//
// Usage: node session.js WSP_BINARY serve --state-dir DIR [more server args]
// Exits 0 only if every answer is right; otherwise prints each wrong answer and exits 1.
"use strict";

const { spawn } = require("node:child_process");
const rpc = require("vscode-jsonrpc/node");

const DEADLINE_MS = 120000;
const ENV_ID = /^env-[0-9a-f]{12}$/;
const SESSION_METHODS = [
  "environment/create",
  "environment/delete",
  "environment/execute",
  "environment/get",
  "initialize",
  "shutdown",
];

const failures = [];
function check(condition, what, actual) {
  if (!condition) {
    failures.push(`${what}; got ${JSON.stringify(actual)}`);
  }
  return condition;
}

async function session(connection) {
  const capabilities = await connection.sendRequest("initialize", {
    client_name: "vscode-jsonrpc",
    client_protocol_version: "0.1.0",
  });
  check(capabilities.protocol_version === "0.1.0", "initialize: protocol_version is 0.1.0", capabilities);
  const methods = capabilities.methods;
  check(Array.isArray(methods), "initialize: methods is an array", capabilities);
  if (Array.isArray(methods)) {
    for (const method of SESSION_METHODS) {
      check(methods.includes(method), `initialize: methods lists ${method}`, methods);
    }
    const sorted = [...methods].sort();
    check(JSON.stringify(sorted) === JSON.stringify(methods), "initialize: methods are sorted", methods);
  }

  const name = "vscode-jsonrpc-session";
  const created = await connection.sendRequest("environment/create", { name, python_version: "3.12" });
  const id = created.id;
  if (!check(typeof id === "string" && ENV_ID.test(id), "create: id is env- and 12 hex digits", created)) {
    return;
  }
  check(created.name === name, "create: name echoed", created);
  check(created.python_version === "3.12", "create: python_version echoed as asked", created);
  check(typeof created.interpreter_path === "string" && created.interpreter_path.startsWith("/"),
    "create: interpreter_path is absolute", created);
  check(Array.isArray(created.installed_packages), "create: installed_packages is an array", created);
  const extra = created.extra || {};
  check(typeof extra.backend === "string" && typeof extra.path === "string",
    "create: extra has backend and path", created);
  check(typeof extra.python_full_version === "string" && extra.python_full_version.startsWith("3.12."),
    "create: extra.python_full_version is 3.12.*", created);

  const ran = await connection.sendRequest("environment/execute", {
    id,
    argv: ["python", "-c", "print(6*7)"],
  });
  check(ran.exit_code === 0, "execute: exit_code is 0", ran);
  check(ran.stdout === "42\n", "execute: stdout is 42", ran);
  check(ran.stderr === "", "execute: stderr is empty", ran);

  const details = await connection.sendRequest("environment/get", { id });
  check(details.id === id, "get: id echoed", details);
  check(details.name === name, "get: name as created", details);
  check(details.python_version === "3.12", "get: python_version as created", details);
  check(details.interpreter_path === created.interpreter_path, "get: interpreter_path as created", details);
  check(Array.isArray(details.installed_packages) && details.installed_packages.every(
    (p) => typeof p.name === "string" && typeof p.version === "string"),
  "get: installed_packages are {name, version}", details);
  check(details.extra && details.extra.path === extra.path, "get: extra.path as created", details);

  const ack = await connection.sendRequest("environment/delete", { id });
  check(ack && ack.id === id, "delete: acknowledges the id", ack);

  try {
    const gone = await connection.sendRequest("environment/get", { id });
    check(false, "get after delete: an error", gone);
  } catch (error) {
    check(error instanceof rpc.ResponseError && error.code === -31001,
      "get after delete: error -31001", { code: error.code, message: error.message });
    check(error.data && error.data.id === id, "get after delete: error data names the id", error.data);
  }

  const stopped = await connection.sendRequest("shutdown");
  check(stopped === null, "shutdown: result is null", stopped);
}

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

  const timer = setTimeout(() => {
    console.error(`vscode-jsonrpc session: no end within ${DEADLINE_MS} ms`);
    server.kill("SIGKILL");
    process.exit(1);
  }, DEADLINE_MS);

  try {
    await Promise.race([session(connection), spawnFailed]);
    await connection.sendNotification("exit");
    const status = await exited;
    check(status.code === 0 && status.signal === null, "exit: the server exits with status 0", status);
  } catch (error) {
    failures.push(`session failed: ${error && error.stack ? error.stack : error}`);
    server.kill("SIGKILL");
  }
  clearTimeout(timer);
  connection.dispose();

  if (failures.length > 0) {
    for (const failure of failures) {
      console.error(`FAIL ${failure}`);
    }
    process.exit(1);
  }
  console.log("vscode-jsonrpc session: every answer is right");
}

main();
