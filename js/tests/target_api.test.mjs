// Specification of js/page/target_api.js (docs/protocol.md section 2, "The target's API").
//
// Each test installs the real target API into a fake framed window: an object with
// `name` (the nonce), `parent` (whose postMessage records what the target API
// sends, structured-cloned as a browser would) and `addEventListener`. The
// last group runs the built IIFE from splitbrain_widget/static/ in a vm
// context, to cover what actually ships.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import vm from "node:vm";

import { installTargetApi } from "../page/target_api.js";
import { MAX_BUFFERED, MAX_ERROR_TEXT, PARENT_SOURCE, TARGET_SOURCE, isTargetMessage } from "../protocol.js";

const NONCE = "0123456789abcdef0123456789abcdef";
const PARENT_ORIGIN = "http://localhost:8888";

/**
 * @typedef {object} Posted
 * @property {any} message
 * @property {string} targetOrigin
 */

/**
 * A fake parent window that records every postMessage.
 * @returns {{posted: Posted[], postMessage: (message: unknown, targetOrigin: string) => void}}
 */
function makeParent() {
  /** @type {Posted[]} */
  const posted = [];
  return {
    posted,
    postMessage(message, targetOrigin) {
      posted.push({ message: structuredClone(message), targetOrigin });
    },
  };
}

/**
 * A fake framed window: name, parent and a message listener list.
 * @param {{name?: string}} [options]
 */
function makeWindow({ name = NONCE } = {}) {
  const parent = makeParent();
  /** @type {((event: any) => void)[]} */
  const listeners = [];
  /** @type {any} */
  const win = {
    name,
    parent,
    /**
     * @param {string} type
     * @param {(event: any) => void} listener
     */
    addEventListener(type, listener) {
      if (type === "message") listeners.push(listener);
    },
  };
  /**
   * Deliver a message event as the browser would.
   * @param {unknown} data
   * @param {{source?: unknown, origin?: string}} [from]
   */
  function deliver(data, { source = parent, origin = PARENT_ORIGIN } = {}) {
    const event = { data: structuredClone(data), source, origin };
    for (const listener of listeners) listener(event);
  }
  return { win, parent, listeners, deliver };
}

/** A framed window with the target API installed, plus helpers. */
function makeFrame(options = {}) {
  const frame = makeWindow(options);
  const api = installTargetApi(frame.win);
  /**
   * Send a valid parent message.
   * @param {"apply" | "reset" | "state" | "action"} type
   * @param {Record<string, unknown>} [fields]  id, payload, ...
   * @param {{source?: unknown, origin?: string}} [from]
   */
  function send(type, fields = {}, from) {
    frame.deliver({ source: PARENT_SOURCE, nonce: NONCE, type, ...fields }, from);
  }
  /** Messages the target API posted, without the envelope checks. */
  const messages = () => frame.parent.posted.map((p) => p.message);
  /** Posted messages other than `ready`. */
  const replies = () => messages().filter((m) => m.type !== "ready");
  return { ...frame, api, send, messages, replies };
}

/** Let every queued promise job run (handlers without timers finish). */
const settle = () => new Promise((resolve) => setImmediate(resolve));
/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe("ready", () => {
  test("posts ready once, to '*', with source, nonce and a load id", () => {
    const frame = makeFrame();
    frame.api.ready();
    frame.api.ready();
    assert.equal(frame.parent.posted.length, 1);
    const { message, targetOrigin } = frame.parent.posted[0];
    assert.equal(targetOrigin, "*");
    assert.deepEqual({ ...message, load: undefined }, { source: TARGET_SOURCE, nonce: NONCE, type: "ready", load: undefined });
    assert.match(message.load, /^[0-9a-z]+-[0-9a-z]+$/);
    assert.ok(isTargetMessage(message, NONCE), "the view accepts it");
  });

  test("each load of the page (each run of the target API) has its own load id, the nonce stays", () => {
    const ids = new Set();
    for (let i = 0; i < 50; i += 1) {
      const frame = makeFrame();
      frame.api.ready();
      ids.add(frame.parent.posted[0].message.load);
      assert.equal(frame.parent.posted[0].message.nonce, NONCE);
    }
    assert.equal(ids.size, 50);
  });

  test("the nonce is window.name", () => {
    assert.equal(makeFrame({ name: "abc123" }).api.nonce, "abc123");
  });

  test("posts nothing and listens to nothing when the page is not framed", () => {
    const parent = makeParent();
    /** @type {any} */
    const win = { name: NONCE, addEventListener: () => assert.fail("should not listen") };
    win.parent = win;
    win.postMessage = parent.postMessage;
    const api = installTargetApi(win);
    api.onApply(() => ({}));
    api.state({ x: 1 });
    api.ready();
    api.state({ x: 2 });
    assert.deepEqual(parent.posted, []);
    assert.equal(win.SplitBrain, api);
  });

  test("a second install on the same window keeps the first target API", () => {
    const frame = makeFrame();
    assert.equal(installTargetApi(frame.win), frame.api);
    assert.equal(frame.listeners.length, 1);
  });
});

describe("accepting messages", () => {
  test("runs a valid apply and answers it", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const seen = [];
    frame.api.onApply((values) => {
      seen.push(values);
    });
    frame.api.ready();
    frame.send("apply", { id: "r1-a", payload: { "settings.speed": 12 } });
    await settle();
    assert.deepEqual(seen, [{ "settings.speed": 12 }]);
    assert.deepEqual(frame.replies(), [
      { source: TARGET_SOURCE, nonce: NONCE, type: "state", id: "r1-a", payload: {} },
    ]);
  });

  test("ignores a message with another nonce", async () => {
    const frame = makeFrame();
    let calls = 0;
    frame.api.onApply(() => void calls++);
    frame.api.ready();
    frame.deliver({ source: PARENT_SOURCE, nonce: "f".repeat(32), type: "apply", id: "r1", payload: {} });
    await settle();
    assert.equal(calls, 0);
    assert.deepEqual(frame.replies(), []);
  });

  test("takes a message from its parent without a nonce (protocol 1.7: the view sends none)", async () => {
    const frame = makeFrame();
    let calls = 0;
    frame.api.onApply(() => void calls++);
    frame.api.ready();
    frame.deliver({ source: PARENT_SOURCE, type: "apply", id: "r2", payload: {} });
    await settle();
    assert.equal(calls, 1);
    assert.equal(frame.replies()[0].nonce, NONCE, "its answers carry its nonce");
  });

  test("takes the nonce out of window.name, so that no later document of the frame finds it", () => {
    const frame = makeFrame();
    assert.equal(frame.api.nonce, NONCE);
    assert.equal(frame.win.name, "");
  });

  test("accepts nothing when window.name is empty", async () => {
    const frame = makeFrame({ name: "" });
    let calls = 0;
    frame.api.onApply(() => void calls++);
    frame.api.ready();
    frame.deliver({ source: PARENT_SOURCE, nonce: "", type: "apply", id: "r1", payload: {} });
    await settle();
    assert.equal(calls, 0);
  });

  test("ignores a message whose event.source is not window.parent", async () => {
    const frame = makeFrame();
    let calls = 0;
    frame.api.onApply(() => void calls++);
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} }, { source: makeParent() });
    frame.send("apply", { id: "r2", payload: {} }, { source: null });
    frame.send("apply", { id: "r3", payload: {} }, { source: frame.win });
    await settle();
    assert.equal(calls, 0);
    assert.deepEqual(frame.replies(), []);
  });

  test("ignores a message with the wrong source string", async () => {
    const frame = makeFrame();
    let calls = 0;
    frame.api.onApply(() => void calls++);
    frame.api.ready();
    for (const source of [TARGET_SOURCE, "splitbrain", "", undefined]) {
      frame.deliver({ source, nonce: NONCE, type: "apply", id: "r1", payload: {} });
    }
    await settle();
    assert.equal(calls, 0);
    assert.deepEqual(frame.replies(), []);
  });

  test("ignores malformed messages", async () => {
    const frame = makeFrame();
    let calls = 0;
    frame.api.onApply(() => void calls++);
    frame.api.ready();
    frame.send("apply", { id: 5, payload: {} });
    frame.send("apply", { id: "r1", payload: [1, 2] });
    frame.deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "explode", id: "r2" });
    frame.deliver("apply");
    frame.deliver(null);
    await settle();
    assert.equal(calls, 0);
    assert.deepEqual(frame.replies(), []);
  });
});

describe("buffering before ready()", () => {
  test("holds messages until ready() and runs them in arrival order", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const seen = [];
    frame.api.onApply((values, ctx) => {
      seen.push([ctx.id, values]);
    });
    frame.send("apply", { id: "r1", payload: { a: 1 } });
    frame.send("apply", { id: "r2", payload: { a: 2 } });
    frame.send("apply", { id: "r3", payload: { a: 3 } });
    await settle();
    assert.deepEqual(seen, []);
    assert.deepEqual(frame.messages(), []);

    frame.api.ready();
    await settle();
    assert.deepEqual(seen, [
      ["r1", { a: 1 }],
      ["r2", { a: 2 }],
      ["r3", { a: 3 }],
    ]);
    assert.deepEqual(
      frame.messages().map((m) => [m.type, m.id]),
      [
        ["ready", undefined],
        ["state", "r1"],
        ["state", "r2"],
        ["state", "r3"],
      ],
    );
  });

  test("messages after ready() run after the buffered ones", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const ids = [];
    frame.api.onApply((_values, ctx) => void ids.push(ctx.id));
    frame.send("apply", { id: "early", payload: {} });
    frame.api.ready();
    frame.send("apply", { id: "late", payload: {} });
    await settle();
    assert.deepEqual(ids, ["early", "late"]);
  });

  test(`keeps at most ${MAX_BUFFERED} messages, drops the newest and reports how many`, async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const ids = [];
    frame.api.onApply((_values, ctx) => void ids.push(ctx.id));
    for (let i = 0; i < MAX_BUFFERED + 3; i++) frame.send("apply", { id: `r${i}`, payload: {} });
    const warnings = [];
    const originalWarn = console.warn;
    console.warn = (...args) => void warnings.push(args.join(" "));
    try {
      frame.api.ready();
    } finally {
      console.warn = originalWarn;
    }
    await settle();
    assert.equal(ids.length, MAX_BUFFERED);
    assert.equal(ids[0], "r0");
    assert.equal(ids[MAX_BUFFERED - 1], `r${MAX_BUFFERED - 1}`);
    const errors = frame.messages().filter((m) => m.type === "error");
    assert.equal(errors.length, 1);
    assert.equal(errors[0].id, undefined);
    assert.equal(errors[0].error.code, "target_error");
    assert.match(errors[0].error.message, /^3 message\(s\) arrived before SplitBrain\.ready\(\)/);
    assert.equal(warnings.length, 1);
    const answered = frame.messages().filter((m) => m.type === "state").map((m) => m.id);
    assert.equal(answered.length, MAX_BUFFERED);
    assert.ok(!answered.includes(`r${MAX_BUFFERED}`));
  });
});

describe("replies", () => {
  test("replies to the origin of the first accepted parent message", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => undefined);
    frame.send("apply", { id: "r1", payload: {} }, { origin: "http://first.example" });
    frame.api.ready();
    frame.send("apply", { id: "r2", payload: {} }, { origin: "http://second.example" });
    frame.api.state({ x: 1 });
    await settle();
    assert.deepEqual(
      frame.parent.posted.map((p) => [p.message.type, p.message.id, p.targetOrigin]),
      [
        ["ready", undefined, "*"],
        ["state", undefined, "http://first.example"],
        ["state", "r1", "http://first.example"],
        ["state", "r2", "http://first.example"],
      ],
    );
  });

  test("an ignored message does not decide the reply origin", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => undefined);
    frame.api.ready();
    frame.deliver({ source: PARENT_SOURCE, nonce: "wrong", type: "apply", payload: {} }, { origin: "http://evil.example" });
    frame.send("apply", { id: "r1", payload: {} });
    await settle();
    assert.equal(frame.parent.posted.at(-1)?.targetOrigin, PARENT_ORIGIN);
  });

  test("replies to '*' when the parent's origin is opaque or empty", async () => {
    for (const origin of ["null", ""]) {
      const frame = makeFrame();
      frame.api.onApply(() => undefined);
      frame.api.ready();
      frame.send("apply", { id: "r1", payload: {} }, { origin });
      await settle();
      assert.equal(frame.parent.posted.at(-1)?.targetOrigin, "*");
    }
  });

  test("the handler's returned object is the reply's state", async () => {
    const frame = makeFrame();
    frame.api.onApply((values) => ({ speed: values["settings.speed"], x: 1.5 }));
    frame.api.state({ stale: true });
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: { "settings.speed": 9 } });
    await settle();
    assert.deepEqual(frame.replies().at(-1), {
      source: TARGET_SOURCE,
      nonce: NONCE,
      type: "state",
      id: "r1",
      payload: { speed: 9, x: 1.5 },
    });
  });

  test("a returned object becomes the last state for later requests", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => ({ x: 7 }));
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} });
    frame.send("state", { id: "r2" });
    await settle();
    assert.deepEqual(frame.replies().at(-1)?.payload, { x: 7 });
  });

  test("uses the last reported state when the handler returns nothing or a non-object", async () => {
    const frame = makeFrame();
    let result = /** @type {unknown} */ (undefined);
    frame.api.onApply(() => result);
    frame.api.state({ x: 1 });
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} });
    await settle();
    result = 42;
    frame.api.state({ x: 2 });
    frame.send("apply", { id: "r2", payload: {} });
    await settle();
    result = [1, 2];
    frame.send("apply", { id: "r3", payload: {} });
    await settle();
    assert.deepEqual(
      frame.replies().filter((m) => m.id).map((m) => [m.id, m.payload]),
      [
        ["r1", { x: 1 }],
        ["r2", { x: 2 }],
        ["r3", { x: 2 }],
      ],
    );
  });

  test("a state reported inside the handler is the reply when it returns nothing", async () => {
    const frame = makeFrame();
    frame.api.onApply((values) => {
      frame.api.state({ speed: values.speed });
    });
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: { speed: 3 } });
    await settle();
    assert.deepEqual(frame.replies().at(-1), {
      source: TARGET_SOURCE,
      nonce: NONCE,
      type: "state",
      id: "r1",
      payload: { speed: 3 },
    });
  });

  test("replies with {} when no state was ever reported", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => undefined);
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} });
    await settle();
    assert.deepEqual(frame.replies().at(-1)?.payload, {});
  });

  test("an apply without id is answered by a state without id", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => ({ ok: 1 }));
    frame.api.ready();
    frame.send("apply", { payload: { a: 1 } });
    await settle();
    const reply = frame.replies().at(-1);
    assert.deepEqual(reply, { source: TARGET_SOURCE, nonce: NONCE, type: "state", payload: { ok: 1 } });
    assert.equal(Object.hasOwn(reply, "id"), false);
  });

  test("a state that cannot be cloned is answered with target_error", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => ({ fn: () => 1 }));
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} });
    await settle();
    const reply = frame.replies().at(-1);
    assert.equal(reply?.type, "error");
    assert.equal(reply?.id, "r1");
    assert.equal(reply?.error.code, "target_error");
    assert.match(reply?.error.message, /^the state could not be sent: DataCloneError/);
  });
});

describe("values and ctx", () => {
  test("unwraps {value: x} into bare values", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const seen = [];
    frame.api.onApply((values) => void seen.push(values));
    frame.api.ready();
    frame.send("apply", {
      id: "r1",
      payload: { "settings.speed": { value: 12 }, "display.color": "red", "view.position": { value: [0, 1, 2] } },
    });
    await settle();
    assert.deepEqual(seen, [{ "settings.speed": 12, "display.color": "red", "view.position": [0, 1, 2] }]);
  });

  test("ctx.get resolves a dotted path, a unique leaf name, and nothing for ambiguous or absent names", async () => {
    const frame = makeFrame();
    /** @type {Record<string, unknown>} */
    let got = {};
    frame.api.onApply((_values, ctx) => {
      got = {
        id: ctx.id,
        byPath: ctx.get("settings.speed"),
        byLeaf: ctx.get("speed"),
        wrappedByLeaf: ctx.get("color"),
        ambiguous: ctx.get("size"),
        ambiguousByPath: ctx.get("display.size"),
        absent: ctx.get("angle"),
        partialPath: ctx.get("settings"),
      };
    });
    frame.api.ready();
    frame.send("apply", {
      id: "r9",
      payload: { "settings.speed": 12, "display.color": { value: "red" }, "display.size": 5, "font.size": 10 },
    });
    await settle();
    assert.deepEqual(got, {
      id: "r9",
      byPath: 12,
      byLeaf: 12,
      wrappedByLeaf: "red",
      ambiguous: undefined,
      ambiguousByPath: 5,
      absent: undefined,
      partialPath: undefined,
    });
  });

  test("ctx.id is undefined for the on-ready catch-up apply", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const ids = [];
    frame.api.onApply((_values, ctx) => void ids.push(ctx.id));
    frame.api.ready();
    frame.send("apply", { payload: {} });
    await settle();
    assert.deepEqual(ids, [undefined]);
  });
});

describe("reset and state requests", () => {
  test("reset calls onReset with the defaults when it is registered", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const calls = [];
    frame.api.onApply((values) => void calls.push(["apply", values]));
    frame.api.onReset((defaults, ctx) => {
      calls.push(["reset", defaults, ctx.id]);
      return { reset: true };
    });
    frame.api.ready();
    frame.send("reset", { id: "r1", payload: { "settings.speed": { value: 8 } } });
    await settle();
    assert.deepEqual(calls, [["reset", { "settings.speed": 8 }, "r1"]]);
    assert.deepEqual(frame.replies().at(-1)?.payload, { reset: true });
  });

  test("reset falls back to onApply with the defaults", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const calls = [];
    frame.api.onApply((values, ctx) => void calls.push([values, ctx.id, ctx.get("speed")]));
    frame.api.ready();
    frame.send("reset", { id: "r1", payload: { "settings.speed": 8 } });
    await settle();
    assert.deepEqual(calls, [[{ "settings.speed": 8 }, "r1", 8]]);
    assert.equal(frame.replies().at(-1)?.type, "state");
  });

  test("apply or reset without any handler is answered with target_error", async () => {
    const frame = makeFrame();
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} });
    frame.send("reset", { id: "r2", payload: {} });
    await settle();
    assert.deepEqual(
      frame.replies().map((m) => [m.type, m.id, m.error?.code]),
      [
        ["error", "r1", "target_error"],
        ["error", "r2", "target_error"],
      ],
    );
  });

  test("a state request uses onState when registered", async () => {
    const frame = makeFrame();
    let calls = 0;
    frame.api.onState(() => ({ fresh: ++calls }));
    frame.api.state({ stale: true });
    frame.api.ready();
    frame.send("state", { id: "r1" });
    await settle();
    assert.deepEqual(frame.replies().at(-1), { source: TARGET_SOURCE, nonce: NONCE, type: "state", id: "r1", payload: { fresh: 1 } });
  });

  test("a state request without onState answers with the last reported state", async () => {
    const frame = makeFrame();
    frame.api.state({ x: 4 });
    frame.api.ready();
    frame.send("state", { id: "r1" });
    await settle();
    assert.deepEqual(frame.replies().at(-1)?.payload, { x: 4 });
  });
});

describe("action requests (1.5)", () => {
  test("onAction gets the action's name and a ctx over the values the page was given, and answers with its state", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const calls = [];
    frame.api.onApply(() => {});
    frame.api.onAction((name, ctx) => {
      calls.push([name, ctx.id, ctx.get("speed"), ctx.get("settings.color")]);
      return { ran: name };
    });
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: { "settings.speed": 12 } });
    frame.send("apply", { id: "r2", payload: { "settings.color": "red" } });
    frame.send("action", { id: "r3", payload: { name: "run" } });
    await settle();
    assert.deepEqual(calls, [["run", "r3", 12, "red"]]);
    assert.deepEqual(frame.replies().at(-1), { source: TARGET_SOURCE, nonce: NONCE, type: "state", id: "r3", payload: { ran: "run" } });
  });

  test("after a reset ctx.get reads the defaults, not the values before it", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const seen = [];
    frame.api.onApply(() => {});
    frame.api.onAction((_name, ctx) => void seen.push([ctx.get("speed"), ctx.get("color")]));
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: { "s.speed": 12, "s.color": "red" } });
    frame.send("reset", { id: "r2", payload: { "s.speed": 8 } });
    frame.send("action", { id: "r3", payload: { name: "run" } });
    await settle();
    assert.deepEqual(seen, [[8, undefined]]);
  });

  test("an apply the page refused is not given: ctx.get reads the values before it; isReady says ready() ran", async () => {
    const frame = makeFrame();
    /** @type {unknown[]} */
    const seen = [];
    frame.api.onApply((values) => {
      if (values["s.speed"] > 20) throw new Error("too fast");
    });
    frame.api.onAction((_name, ctx) => void seen.push(ctx.get("speed")));
    assert.equal(frame.api.isReady, false);
    frame.api.ready();
    assert.equal(frame.api.isReady, true);
    frame.send("apply", { id: "r1", payload: { "s.speed": 12 } });
    frame.send("apply", { id: "r2", payload: { "s.speed": 99 } });
    frame.send("action", { id: "r3", payload: { name: "run" } });
    await settle();
    assert.deepEqual(seen, [12]);
    assert.equal(frame.replies().find((r) => r.id === "r2")?.type, "error");
  });

  test("an action without an onAction handler is answered with target_error saying so", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => {});
    frame.api.ready();
    frame.send("action", { id: "r1", payload: { name: "run" } });
    await settle();
    assert.deepEqual(frame.replies(), [
      {
        source: TARGET_SOURCE,
        nonce: NONCE,
        type: "error",
        id: "r1",
        error: { code: "target_error", message: "the target page registered no SplitBrain.onAction handler" },
      },
    ]);
  });

  test("a throwing action handler is answered with target_error, and later messages still run", async () => {
    const frame = makeFrame();
    frame.api.onAction(() => {
      throw new RangeError("no fuel");
    });
    frame.api.onState(() => ({ fresh: true }));
    frame.api.ready();
    frame.send("action", { id: "r1", payload: { name: "launch" } });
    frame.send("state", { id: "r2" });
    await settle();
    assert.deepEqual(
      frame.replies().map((m) => [m.id, m.type, m.error?.message]),
      [
        ["r1", "error", "RangeError: no fuel"],
        ["r2", "state", undefined],
      ],
    );
  });

  test("an action runs in order with the other requests, after an async apply settles", async () => {
    const frame = makeFrame();
    /** @type {string[]} */
    const order = [];
    frame.api.onApply(async () => {
      await sleep(5);
      order.push("apply");
    });
    frame.api.onAction((name) => void order.push(name));
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: { x: 1 } });
    frame.send("action", { id: "r2", payload: { name: "run" } });
    await sleep(20);
    assert.deepEqual(order, ["apply", "run"]);
  });

  test("an action without an id, without a name or with a name that is no string is ignored", async () => {
    const frame = makeFrame();
    let calls = 0;
    frame.api.onAction(() => void calls++);
    frame.api.ready();
    frame.send("action", { payload: { name: "run" } });
    frame.send("action", { id: "r1", payload: {} });
    frame.send("action", { id: "r2", payload: { name: "" } });
    frame.send("action", { id: "r3", payload: { name: 7 } });
    frame.send("action", { id: "r4" });
    await settle();
    assert.equal(calls, 0);
    assert.deepEqual(frame.replies(), []);
  });

  test("registering a non-function with onAction throws a TypeError", () => {
    const frame = makeFrame();
    assert.throws(() => frame.api.onAction(/** @type {any} */ ("run")), /SplitBrain.onAction expects a function, got string/);
  });
});

describe("handler errors", () => {
  test("a throwing handler is answered with target_error and a bounded message", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => {
      throw new Error("boom ".repeat(1000));
    });
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} });
    await settle();
    const reply = frame.replies().at(-1);
    assert.equal(reply?.type, "error");
    assert.equal(reply?.id, "r1");
    assert.equal(reply?.source, TARGET_SOURCE);
    assert.equal(reply?.nonce, NONCE);
    assert.equal(reply?.error.code, "target_error");
    assert.equal(reply?.error.message.length, MAX_ERROR_TEXT);
    assert.ok(reply?.error.message.startsWith("boom boom"));
  });

  test("a rejecting async handler is answered with target_error", async () => {
    const frame = makeFrame();
    frame.api.onApply(async () => {
      await sleep(1);
      throw new RangeError("speed out of range");
    });
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} });
    await sleep(20);
    assert.deepEqual(frame.replies().at(-1)?.error, { code: "target_error", message: "RangeError: speed out of range" });
  });

  test("an error without id is posted without id, and later messages still run", async () => {
    const frame = makeFrame();
    let first = true;
    frame.api.onApply(() => {
      if (first) {
        first = false;
        throw new Error("first fails");
      }
      return { second: "ran" };
    });
    frame.api.ready();
    frame.send("apply", { payload: {} });
    frame.send("apply", { id: "r2", payload: {} });
    await settle();
    const [error, state] = frame.replies();
    assert.deepEqual(error, {
      source: TARGET_SOURCE,
      nonce: NONCE,
      type: "error",
      error: { code: "target_error", message: "first fails" },
    });
    assert.deepEqual([state.id, state.payload], ["r2", { second: "ran" }]);
  });

  test("registering a non-function throws a TypeError", () => {
    const frame = makeFrame();
    assert.throws(() => frame.api.onApply(/** @type {any} */ ("nope")), /SplitBrain\.onApply expects a function, got string/);
    assert.throws(() => frame.api.onReset(/** @type {any} */ (null)), TypeError);
    assert.throws(() => frame.api.onState(/** @type {any} */ ({})), TypeError);
  });
});

describe("ordering", () => {
  test("async handlers run strictly one after another, in message order", async () => {
    const frame = makeFrame();
    /** @type {string[]} */
    const log = [];
    frame.api.onApply(async (values, ctx) => {
      log.push(`start ${ctx.id}`);
      await sleep(/** @type {number} */ (values.delay));
      log.push(`end ${ctx.id}`);
      return { done: ctx.id };
    });
    frame.api.ready();
    frame.send("apply", { id: "slow", payload: { delay: 30 } });
    frame.send("apply", { id: "fast", payload: { delay: 0 } });
    frame.send("apply", { id: "medium", payload: { delay: 10 } });
    await sleep(100);
    assert.deepEqual(log, ["start slow", "end slow", "start fast", "end fast", "start medium", "end medium"]);
    assert.deepEqual(
      frame.replies().map((m) => [m.id, m.payload.done]),
      [
        ["slow", "slow"],
        ["fast", "fast"],
        ["medium", "medium"],
      ],
    );
  });

  test("a handler returning a thenable is awaited", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => ({ then: (/** @type {(v: unknown) => void} */ resolve) => resolve({ via: "thenable" }) }));
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} });
    await settle();
    assert.deepEqual(frame.replies().at(-1)?.payload, { via: "thenable" });
  });
});

describe("SplitBrain.state()", () => {
  test("before ready() it is stored, not posted; after ready() it is posted without id", async () => {
    const frame = makeFrame();
    frame.api.state({ x: 1 });
    assert.deepEqual(frame.messages(), []);
    frame.api.ready();
    assert.deepEqual(frame.messages().map((m) => m.type), ["ready"]);
    frame.api.state({ x: 2, label: "b" });
    const posted = frame.parent.posted.at(-1);
    assert.deepEqual(posted, {
      message: { source: TARGET_SOURCE, nonce: NONCE, type: "state", payload: { x: 2, label: "b" } },
      targetOrigin: "*",
    });
    assert.equal(Object.hasOwn(posted?.message, "id"), false);
  });

  test("a tight loop posts the first state at once and the last when its task ends", async () => {
    const frame = makeFrame();
    frame.api.ready();
    for (let i = 0; i < 100_000; i += 1) frame.api.state({ i });
    assert.deepEqual(frame.replies().map((m) => m.payload), [{ i: 0 }]);
    await Promise.resolve();
    await Promise.resolve();
    assert.deepEqual(frame.replies().map((m) => m.payload), [{ i: 0 }, { i: 99_999 }]);
    frame.api.state({ i: "next task" });
    assert.deepEqual(frame.replies().at(-1)?.payload, { i: "next task" }, "a new task posts at once again");
  });

  test("a state that waits for its task's end goes before any later message", async () => {
    const frame = makeFrame();
    frame.api.onApply(() => ({ answer: true }));
    frame.api.ready();
    frame.send("apply", { id: "r1", payload: {} });
    frame.api.state({ n: 1 });
    frame.api.state({ n: 2 });
    await settle();
    assert.deepEqual(
      frame.replies().map((m) => [m.id, m.payload]),
      [
        [undefined, { n: 1 }],
        [undefined, { n: 2 }],
        ["r1", { answer: true }],
      ],
    );
  });

  test("a waiting state that cannot be cloned is reported as an error", async () => {
    const frame = makeFrame();
    frame.api.ready();
    const clone = frame.parent.postMessage;
    frame.parent.postMessage = (/** @type {any} */ message, /** @type {string} */ origin) => {
      if (message.payload?.fn) throw new DOMException("could not be cloned", "DataCloneError");
      clone(message, origin);
    };
    frame.api.state({ ok: 1 });
    frame.api.state({ fn: true });
    await settle();
    const last = frame.replies().at(-1);
    assert.equal(last?.type, "error");
    assert.match(last?.error.message, /^a state could not be sent: DataCloneError/);
  });

  test("rejects anything but a plain object", () => {
    const frame = makeFrame();
    for (const bad of [null, 3, "x", [1], new Date(0)]) {
      assert.throws(() => frame.api.state(/** @type {any} */ (bad)), /SplitBrain\.state expects a plain object/);
    }
  });
});

describe("the built bundle (splitbrain_widget/static/target_api.js)", () => {
  const bundlePath = new URL("../../splitbrain_widget/static/target_api.js", import.meta.url);

  test("installs window.SplitBrain as a classic script and round-trips an apply", async () => {
    const frame = makeWindow();
    const context = vm.createContext({ window: frame.win, console });
    vm.runInContext(readFileSync(bundlePath, "utf8"), context, { filename: "target_api.js" });
    const api = frame.win.SplitBrain;
    assert.equal(typeof api?.onApply, "function");
    assert.equal(api.nonce, NONCE);
    api.onApply((/** @type {any} */ values, /** @type {any} */ ctx) => ({ speed: ctx.get("speed"), n: Object.keys(values).length }));
    frame.deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "apply", id: "r1", payload: { "settings.speed": { value: 5 } } });
    api.ready();
    await settle();
    assert.deepEqual(
      frame.parent.posted.map((p) => [p.message, p.targetOrigin]),
      [
        [{ source: TARGET_SOURCE, nonce: NONCE, type: "ready", load: frame.parent.posted[0].message.load }, "*"],
        [{ source: TARGET_SOURCE, nonce: NONCE, type: "state", id: "r1", payload: { speed: 5, n: 1 } }, PARENT_ORIGIN],
      ],
    );
  });

  test("defines no globals besides SplitBrain", () => {
    const frame = makeWindow();
    const context = vm.createContext({ window: frame.win, console });
    const before = new Set(Object.getOwnPropertyNames(context));
    vm.runInContext(readFileSync(bundlePath, "utf8"), context);
    assert.deepEqual(Object.getOwnPropertyNames(context).filter((name) => !before.has(name)), []);
    assert.ok(frame.win.SplitBrain);
  });
});
