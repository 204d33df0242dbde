// The checks of one full WSP session (initialize, create, execute, get, delete, a get that
// must fail, shutdown), shared by every vscode-jsonrpc client here whatever its transport. The
// caller sends `exit` and checks how its transport ends.
"use strict";

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

// Runs the session's requests on `connection` (a listening vscode-jsonrpc MessageConnection).
// `client` is the name sent in initialize, `transport` the one initialize must report, and
// `ResponseError` the error class of the vscode-jsonrpc the connection comes from.
async function runSession(connection, { client, transport, ResponseError }) {
  const capabilities = await connection.sendRequest("initialize", {
    client_name: client,
    client_protocol_version: "0.1.0",
  });
  check(capabilities.protocol_version === "0.1.0", "initialize: protocol_version is 0.1.0", capabilities);
  check(capabilities.transport === transport, `initialize: transport is ${transport}`, capabilities);
  const methods = capabilities.methods;
  check(Array.isArray(methods), "initialize: methods is an array", capabilities);
  if (Array.isArray(methods)) {
    for (const method of SESSION_METHODS) {
      check(methods.includes(method), `initialize: methods lists ${method}`, methods);
    }
    const sorted = [...methods].sort();
    check(JSON.stringify(sorted) === JSON.stringify(methods), "initialize: methods are sorted", methods);
  }

  const name = `${client}-session`;
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
    check(error instanceof ResponseError && error.code === -31001,
      "get after delete: error -31001", { code: error.code, message: error.message });
    check(error.data && error.data.id === id, "get after delete: error data names the id", error.data);
  }

  const stopped = await connection.sendRequest("shutdown");
  check(stopped === null, "shutdown: result is null", stopped);
}

// Calls `onTimeout` and exits 1 when the session has not ended within the deadline; returns
// the timer to clear once it has.
function deadline(what, onTimeout = () => {}) {
  return setTimeout(() => {
    console.error(`${what}: no end within ${DEADLINE_MS} ms`);
    onTimeout();
    process.exit(1);
  }, DEADLINE_MS);
}

// Prints every failure and exits 1, or prints the verdict the Rust tests look for.
function report(what) {
  if (failures.length > 0) {
    for (const failure of failures) {
      console.error(`FAIL ${failure}`);
    }
    process.exit(1);
  }
  console.log(`${what}: every answer is right`);
}

module.exports = { check, deadline, failures, report, runSession };
