// The MCP App view's own parts that need no browser: its JSON-RPC peer, the theme it gives a page and
// how it reads a tool call's answer. The whole view against ext-apps' AppBridge (the official host
// side) runs in headless Chromium: tests/browser/test_mcp_apps_browser.py.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { createRpc, readableState, structured, themed } from "../app/app_view.js";
import { THEME_ATTR } from "../protocol.js";

/** Two peers wired back to back (each delivery a task later, as postMessage delivers). */
function pair(handlersA = {}, handlersB = {}) {
  /** @type {any} */ let a;
  /** @type {any} */ let b;
  const sent = { a: /** @type {any[]} */ ([]), b: /** @type {any[]} */ ([]) };
  a = createRpc((m) => (sent.a.push(m), setTimeout(() => b.receive(m))), handlersA);
  b = createRpc((m) => (sent.b.push(m), setTimeout(() => a.receive(m))), handlersB);
  return { a, b, sent };
}

describe("createRpc: JSON-RPC 2.0 over one postMessage peer", () => {
  test("a request is answered with its result, and the wire says jsonrpc 2.0 with ids", async () => {
    const { a, sent } = pair({}, { "ui/initialize": (/** @type {any} */ p) => ({ echoed: p.protocolVersion }) });
    assert.deepEqual(await a.request("ui/initialize", { protocolVersion: "2026-01-26" }), { echoed: "2026-01-26" });
    assert.deepEqual(sent.a[0], { jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26" } });
    assert.deepEqual(sent.b[0], { jsonrpc: "2.0", id: 1, result: { echoed: "2026-01-26" } });
  });

  test("an unknown method is -32601, a throwing handler -32603 with its message, both as RpcError", async () => {
    const { a } = pair({}, { boom: () => { throw new Error("no such thing"); } });
    await assert.rejects(a.request("nothing", {}), { name: "Error", code: -32601, message: "method not found: nothing" });
    await assert.rejects(a.request("boom", {}), { code: -32603, message: "no such thing" });
  });

  test("a notification runs its handler and is never answered", async () => {
    /** @type {unknown[]} */ const heard = [];
    const { a, sent } = pair({}, { "ui/notifications/tool-input": (/** @type {any} */ p) => void heard.push(p.arguments) });
    a.notify("ui/notifications/tool-input", { arguments: { values: { x: 1 } } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(heard, [{ values: { x: 1 } }]);
    assert.deepEqual(sent.b, []);
  });

  test("anything that is not JSON-RPC 2.0, and answers to ids never asked, are ignored", async () => {
    /** @type {unknown[]} */ const heard = [];
    const peer = createRpc(() => assert.fail("nothing is answered"), { ping: () => void heard.push(1) });
    for (const junk of [null, "ping", { method: "ping", id: 1 }, { jsonrpc: "1.0", method: "ping" }, { jsonrpc: "2.0", id: 99, result: {} }]) {
      await peer.receive(junk);
    }
    assert.deepEqual(heard, []);
  });

  test("a request the other side never answers fails after its deadline, saying which", async () => {
    const peer = createRpc(() => {}, {});
    await assert.rejects(peer.request("tools/call", {}, 20), /tools\/call: the host did not answer within 0.02 s/);
  });
});

describe("themed: the host's theme given to the page at load", () => {
  const page = '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="x"></head><html lang="en">';
  test("the registry's own <html> (the first) says the theme; the page's own tag is left as it is", () => {
    assert.equal(themed(page, "dark"), page.replace("<html>", `<html ${THEME_ATTR}="dark">`));
    assert.ok(themed(page, "light").endsWith('<html lang="en">'));
  });
  test("anything but light or dark leaves the page as it is", () => {
    for (const theme of [undefined, "", "high-contrast", '"><script>']) assert.equal(themed(page, theme), page);
  });
});

describe("structured: a tool call's answer", () => {
  test("its structured content, else an error naming the tool and the server's text", () => {
    assert.deepEqual(structured({ structuredContent: { ok: true, view_id: "v" } }, "t"), { ok: true, view_id: "v" });
    assert.deepEqual(structured({ content: [{ type: "text", text: "Unknown tool" }], isError: true }, "splitbrain_app_sync"), {
      ok: false,
      error: { code: "internal_error", message: "splitbrain_app_sync: Unknown tool" },
    });
  });
});

describe("readableState", () => {
  const values = { "launch.angle": 45, "launch.speed": 20 };
  const state = { "launch.angle": 45, range: 40.8, max_height: 10.2, observables: { range: 40.8, t: 1 }, _x: 1 };

  test("keeps the parameters and the observables the lesson lists, nested ones too", () => {
    assert.deepEqual(readableState(state, ["range"], values), {
      "launch.angle": 45,
      range: 40.8,
      observables: { range: 40.8 },
    });
  });

  test("keeps everything where the lesson lists none (null)", () => {
    assert.equal(readableState(state, null, values), state);
  });

  test("an empty list keeps the parameters only", () => {
    assert.deepEqual(readableState(state, [], values), { "launch.angle": 45, observables: {} });
  });
});
