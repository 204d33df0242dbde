// Headless Chromium, driven by playwright-core (no browser download: Debian's chromium), opens
// tests/clients/browser/index.html from PAGE_URL, an origin other than the server's, and runs
// its WebSocket session against `wsp serve --listen ws://...`.
//
// Usage: node browser_session.js PAGE_URL WS_URL TOKEN_FILE refused|served
// `refused`: the upgrade must fail with HTTP 403 (no open, an error, close code 1006, no
// message).
// `served`: initialize (transport websocket, subprotocol wsp), environment/list, shutdown and
// exit must all be answered right, and the server must close the WebSocket with 1000.
// Exits 0 only then; otherwise prints what was wrong and exits 1. WSP_CHROMIUM overrides
// the browser's path (/usr/bin/chromium).
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { chromium } = require("playwright-core");
const { check, deadline, failures, report } = require("./session_checks");

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

function checkRefused(record, refusal) {
  // Chromium tells the page's console why; 403 is the Origin check's answer (a token refused
  // would be 401).
  check(refusal !== null, "refused: with HTTP 403 (said on the page's console)", refusal);
  check(!record.opened, "refused: the WebSocket never opens", record);
  check(record.events.includes("error"), "refused: the page sees an error event", record);
  check(record.close && record.close.code === 1006, "refused: the close code is 1006", record);
  check(record.messages.length === 0, "refused: no message arrives", record);
}

function checkServed(record) {
  const [initialized, listed, stopped] = record.messages;
  check(record.opened && record.protocol === "wsp", "served: opens with subprotocol wsp", record);
  check(record.messages.length === 3, "served: three answers", record.messages);
  check(initialized && initialized.id === 1 && initialized.result
    && initialized.result.transport === "websocket", "served: initialize over websocket", initialized);
  check(listed && listed.id === 2 && Array.isArray(listed.result), "served: environment/list is a list", listed);
  check(stopped && stopped.id === 3 && stopped.result === null, "served: shutdown answers null", stopped);
  check(record.close && record.close.code === 1000, "served: exit closes the WebSocket with 1000", record);
}

async function main() {
  const [pageUrl, wsUrl, tokenFile, expected] = process.argv.slice(2);
  if (!pageUrl || !wsUrl || !tokenFile || !["refused", "served"].includes(expected)) {
    console.error("usage: node browser_session.js PAGE_URL WS_URL TOKEN_FILE refused|served");
    process.exit(2);
  }
  const token = fs.readFileSync(tokenFile, "utf8").trim();
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "wsp-chromium-"));
  let context;
  // Exiting kills the browser: playwright-core kills what it launched when node exits.
  const timer = deadline("chromium session");
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: process.env.WSP_CHROMIUM || "/usr/bin/chromium",
      headless: true,
      args: CHROMIUM_ARGS,
      timeout: 60000,
    });
    const page = context.pages()[0] || (await context.newPage());
    page.on("console", (message) => console.error(`page console: ${message.text()}`));
    page.on("pageerror", (error) => failures.push(`page error: ${error}`));
    await page.goto(pageUrl, { timeout: 60000 });
    const refusal = page.waitForEvent("console", {
      predicate: (message) => /\b403\b/.test(message.text()),
      timeout: 60000,
    }).then((message) => message.text(), () => null);
    const record = await page.evaluate(([url, secret]) => window.wspSession(url, secret), [wsUrl, token]);
    if (expected === "refused") {
      checkRefused(record, await refusal);
    } else {
      checkServed(record);
    }
  } catch (error) {
    failures.push(`chromium session failed: ${error && error.stack ? error.stack : error}`);
  }
  if (context) {
    await context.close().catch((error) => failures.push(`closing chromium: ${error}`));
  }
  clearTimeout(timer);
  fs.rmSync(userDataDir, { recursive: true, force: true });
  report(`chromium session (${expected})`);
}

main();
