// Specification of js/protocol.js: constants, unwrapping, nonces, validators.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import vm from "node:vm";

import {
  MAX_BUFFERED,
  MAX_ERROR_TEXT,
  PARENT_SOURCE,
  PROTOCOL_VERSION,
  TARGET_SOURCE,
  errorText,
  isKernelRequest,
  isParentMessage,
  isTargetMessage,
  makeNonce,
  unwrapValue,
  unwrapValues,
} from "../protocol.js";
import * as protocol from "../protocol.js";

const NONCE = "0123456789abcdef0123456789abcdef";

describe("constants", () => {
  test("match docs/protocol.md", () => {
    assert.equal(PROTOCOL_VERSION, 1);
    assert.equal(protocol.PROTOCOL_MINOR, 9);
    assert.equal(protocol.MAX_ACTION_NAME, 200);
    assert.equal(protocol.MAX_PICTURE_SIDE, 1024);
    assert.equal(protocol.MAX_PICTURE_BYTES, 524288);
    assert.equal(protocol.MAX_PICTURE_BASE64, 699052);
    assert.equal(protocol.MAX_CODE_TEXT, 200000);
    assert.equal(PARENT_SOURCE, "splitbrain-parent");
    assert.equal(TARGET_SOURCE, "splitbrain-target");
    assert.equal(protocol.VIEW_SOURCE, "splitbrain-view");
    assert.equal(protocol.SANDBOX_SOURCE, "splitbrain-sandbox");
    assert.equal(MAX_ERROR_TEXT, 500);
    assert.equal(MAX_BUFFERED, 10000);
  });

  test("the module exports exactly the documented names", () => {
    assert.deepEqual(Object.keys(protocol).sort(), [
      "ERROR_CODES",
      "MAX_ACTION_NAME",
      "MAX_BUFFERED",
      "MAX_CODE_TEXT",
      "MAX_ERROR_TEXT",
      "MAX_PICTURE_BASE64",
      "MAX_PICTURE_BYTES",
      "MAX_PICTURE_SIDE",
      "MOTION_ATTR",
      "PARENT_SOURCE",
      "PROTOCOL_MINOR",
      "PROTOCOL_VERSION",
      "REFUSED_KEY",
      "SANDBOX_SOURCE",
      "TARGET_SOURCE",
      "THEME_ATTR",
      "VIEW_SOURCE",
      "actMessage",
      "advanceResultMessage",
      "advanceSamplesMessage",
      "approvalMessage",
      "attachedEvent",
      "cancelMessage",
      "chatMessage",
      "clockAdvanceMessage",
      "clockHaltMessage",
      "copyCodeMessage",
      "detachedEvent",
      "errorEvent",
      "errorReplyMessage",
      "errorText",
      "isApprovalClosed",
      "isApprovalRequest",
      "isChatEventMessage",
      "isCodeMessage",
      "isKernelRequest",
      "isParentMessage",
      "isTargetMessage",
      "kernelRequest",
      "makeNonce",
      "parentMessage",
      "pictureMessage",
      "pictureProblem",
      "readyEvent",
      "replyMessage",
      "sandboxMessage",
      "setMessage",
      "skipWaitMessage",
      "stateEvent",
      "targetMessage",
      "unwrapValue",
      "unwrapValues",
      "viewOpsMessage",
      "visibilityEvent",
      "withLook",
    ]);
  });
});

describe("withLook: the page told how the page around it looks", () => {
  const page = "<!doctype html><html><head><meta charset=utf-8></head><html lang=de><body>x</body>";
  test("the theme and reduced motion go on our <html> tag, the page's own untouched", () => {
    assert.equal(
      protocol.withLook(page, { theme: "dark", reducedMotion: true }),
      '<!doctype html><html data-splitbrain-theme="dark" data-splitbrain-motion="reduce"><head><meta charset=utf-8></head><html lang=de><body>x</body>',
    );
    assert.equal(protocol.withLook(page, { theme: "light" }), page.replace("<html>", '<html data-splitbrain-theme="light">'));
  });
  test("nothing to say leaves the page as it is; an unknown theme is not said", () => {
    assert.equal(protocol.withLook(page, {}), page);
    assert.equal(protocol.withLook(page, { theme: /** @type {any} */ ('"><script>') }), page);
  });
});

describe("unwrapValue", () => {
  test("unwraps {value: x}", () => {
    assert.equal(unwrapValue({ value: 8 }), 8);
    assert.deepEqual(unwrapValue({ value: [0, 12, 12] }), [0, 12, 12]);
    assert.equal(unwrapValue({ value: null }), null);
  });

  test("unwraps a manifest-style entry that has more keys than value", () => {
    assert.equal(unwrapValue({ type: "number", unit: "m/s", value: 8 }), 8);
  });

  test("leaves bare values alone", () => {
    for (const bare of [8, "red", true, null, undefined, [1, 2]]) {
      assert.deepEqual(unwrapValue(bare), bare);
    }
  });

  test("leaves objects without an own value key alone", () => {
    const obj = { x: 1 };
    assert.equal(unwrapValue(obj), obj);
    const inherited = Object.create({ value: 3 });
    assert.equal(unwrapValue(inherited), inherited);
  });

  test("does not unwrap class instances or arrays", () => {
    class Box {
      value = 3;
    }
    const box = new Box();
    assert.equal(unwrapValue(box), box);
    const arr = Object.assign([1], { value: 2 });
    assert.equal(unwrapValue(arr), arr);
  });

  test("unwraps one level only", () => {
    assert.deepEqual(unwrapValue({ value: { value: 1 } }), { value: 1 });
  });

  test("unwraps objects from another realm", () => {
    const foreign = vm.runInNewContext("({value: 42})");
    assert.equal(unwrapValue(foreign), 42);
    assert.equal(unwrapValue(vm.runInNewContext("Object.assign(Object.create(null), {value: 7})")), 7);
  });
});

describe("unwrapValues", () => {
  test("unwraps every value, keyed as given", () => {
    assert.deepEqual(unwrapValues({ "settings.speed": { value: 12 }, "display.color": "red" }), {
      "settings.speed": 12,
      "display.color": "red",
    });
  });

  test("returns a new object", () => {
    const input = { a: 1 };
    const output = unwrapValues(input);
    assert.notEqual(output, input);
    assert.deepEqual(output, input);
  });

  test("gives {} for anything that is not a plain object", () => {
    for (const bad of [null, undefined, 3, "x", [1, 2], new Date(0)]) {
      assert.deepEqual(unwrapValues(bad), {});
    }
  });

  test("keeps a __proto__ key as an ordinary own key", () => {
    const input = JSON.parse('{"__proto__": {"value": 1}, "a": 2}');
    const output = unwrapValues(input);
    assert.equal(Object.getPrototypeOf(output), Object.prototype);
    assert.deepEqual(Object.keys(output).sort(), ["__proto__", "a"]);
    assert.equal(Object.getOwnPropertyDescriptor(output, "__proto__")?.value, 1);
  });
});

describe("makeNonce", () => {
  test("is 32 lowercase hex characters", () => {
    assert.match(makeNonce(), /^[0-9a-f]{32}$/);
  });

  test("differs between calls", () => {
    const nonces = new Set(Array.from({ length: 100 }, makeNonce));
    assert.equal(nonces.size, 100);
  });
});

describe("isTargetMessage", () => {
  const base = { source: TARGET_SOURCE, nonce: NONCE };

  test("accepts ready, state (with or without id) and error", () => {
    assert.equal(isTargetMessage({ ...base, type: "ready" }, NONCE), true);
    assert.equal(isTargetMessage({ ...base, type: "state", payload: { x: 1 } }, NONCE), true);
    assert.equal(isTargetMessage({ ...base, type: "state", id: "r1-a", payload: {} }, NONCE), true);
    assert.equal(
      isTargetMessage({ ...base, type: "error", id: "r1-a", error: { code: "target_error", message: "boom" } }, NONCE),
      true,
    );
  });

  test("rejects a different nonce, and any message when the nonce is empty", () => {
    assert.equal(isTargetMessage({ ...base, type: "ready" }, "f".repeat(32)), false);
    assert.equal(isTargetMessage({ ...base, nonce: "", type: "ready" }, ""), false);
    assert.equal(isTargetMessage({ source: TARGET_SOURCE, type: "ready" }, /** @type {any} */ (undefined)), false);
  });

  test("rejects the parent's source string and other sources", () => {
    assert.equal(isTargetMessage({ ...base, source: PARENT_SOURCE, type: "ready" }, NONCE), false);
    assert.equal(isTargetMessage({ ...base, source: "other", type: "ready" }, NONCE), false);
  });

  test("rejects unknown types and parent-only types", () => {
    assert.equal(isTargetMessage({ ...base, type: "apply", payload: {} }, NONCE), false);
    assert.equal(isTargetMessage({ ...base, type: "hello" }, NONCE), false);
  });

  test("rejects an id that is not a string", () => {
    assert.equal(isTargetMessage({ ...base, type: "state", id: 3, payload: {} }, NONCE), false);
    assert.equal(isTargetMessage({ ...base, type: "state", id: null, payload: {} }, NONCE), false);
  });

  test("requires a plain-object payload on state", () => {
    assert.equal(isTargetMessage({ ...base, type: "state" }, NONCE), false);
    assert.equal(isTargetMessage({ ...base, type: "state", payload: [1] }, NONCE), false);
    assert.equal(isTargetMessage({ ...base, type: "state", payload: "x" }, NONCE), false);
  });

  test("requires string code and message on error", () => {
    assert.equal(isTargetMessage({ ...base, type: "error" }, NONCE), false);
    assert.equal(isTargetMessage({ ...base, type: "error", error: { code: "target_error" } }, NONCE), false);
    assert.equal(isTargetMessage({ ...base, type: "error", error: { code: 1, message: "m" } }, NONCE), false);
  });

  test("rejects non-objects", () => {
    for (const bad of [null, undefined, "ready", 3, [base]]) {
      assert.equal(isTargetMessage(bad, NONCE), false);
    }
  });

  test("accepts a structured clone from another realm", () => {
    const foreign = vm.runInNewContext(`({source: "${TARGET_SOURCE}", nonce: "${NONCE}", type: "state", payload: {x: 1}})`);
    assert.equal(isTargetMessage(foreign, NONCE), true);
  });
});

describe("isParentMessage", () => {
  const base = { source: PARENT_SOURCE, nonce: NONCE };

  test("accepts apply (with or without id), reset and state", () => {
    assert.equal(isParentMessage({ ...base, type: "apply", payload: { "a.b": 1 } }, NONCE), true);
    assert.equal(isParentMessage({ ...base, type: "apply", id: "r1-x", payload: {} }, NONCE), true);
    assert.equal(isParentMessage({ ...base, type: "reset", id: "r2-x", payload: { "a.b": 0 } }, NONCE), true);
    assert.equal(isParentMessage({ ...base, type: "state", id: "r3-x" }, NONCE), true);
  });

  test("accepts an action with an id and a name (1.5), and nothing short of that", () => {
    assert.equal(isParentMessage({ ...base, type: "action", id: "r4-x", payload: { name: "run" } }, NONCE), true);
    assert.equal(isParentMessage({ ...base, type: "action", payload: { name: "run" } }, NONCE), false);
    assert.equal(isParentMessage({ ...base, type: "action", id: "r4-x", payload: {} }, NONCE), false);
    assert.equal(isParentMessage({ ...base, type: "action", id: "r4-x", payload: { name: "" } }, NONCE), false);
    assert.equal(isParentMessage({ ...base, type: "action", id: "r4-x" }, NONCE), false);
    assert.equal(isParentMessage({ ...base, type: "action", id: "r4-x", payload: { name: "x".repeat(201) } }, NONCE), false);
  });

  test("rejects a different or empty nonce", () => {
    assert.equal(isParentMessage({ ...base, type: "state", id: "r" }, "nope"), false);
    assert.equal(isParentMessage({ ...base, nonce: "", type: "state", id: "r" }, ""), false);
  });

  test("rejects the target's source string", () => {
    assert.equal(isParentMessage({ ...base, source: TARGET_SOURCE, type: "state", id: "r" }, NONCE), false);
  });

  test("rejects target-only and unknown types", () => {
    assert.equal(isParentMessage({ ...base, type: "ready" }, NONCE), false);
    assert.equal(isParentMessage({ ...base, type: "error" }, NONCE), false);
  });

  test("rejects a non-string id and a payload that is not a plain object", () => {
    assert.equal(isParentMessage({ ...base, type: "apply", id: 1, payload: {} }, NONCE), false);
    assert.equal(isParentMessage({ ...base, type: "apply", payload: [1, 2] }, NONCE), false);
    assert.equal(isParentMessage({ ...base, type: "apply", payload: null }, NONCE), false);
  });
});

describe("isKernelRequest", () => {
  test("accepts the three ops", () => {
    for (const op of ["apply", "reset", "state"]) {
      assert.equal(isKernelRequest({ kind: "request", id: "r1-abc", op, payload: {} }), true);
    }
  });

  test("accepts an action with a name of at most MAX_ACTION_NAME characters (1.5)", () => {
    const action = { kind: "request", id: "r4-abc", op: "action", payload: { name: "run" } };
    assert.equal(isKernelRequest(action), true);
    assert.equal(isKernelRequest({ ...action, payload: { name: "x".repeat(200) } }), true);
    assert.equal(isKernelRequest({ ...action, payload: { name: "x".repeat(201) } }), false);
    assert.equal(isKernelRequest({ ...action, payload: {} }), false);
    assert.equal(isKernelRequest({ ...action, payload: { name: 3 } }), false);
  });

  test("rejects wrong kind, op, id or payload", () => {
    const good = { kind: "request", id: "r1-abc", op: "apply", payload: { values: {} } };
    assert.equal(isKernelRequest(good), true);
    assert.equal(isKernelRequest({ ...good, kind: "reply" }), false);
    assert.equal(isKernelRequest({ ...good, op: "delete" }), false);
    assert.equal(isKernelRequest({ ...good, id: 7 }), false);
    assert.equal(isKernelRequest({ ...good, id: "" }), false);
    assert.equal(isKernelRequest({ ...good, payload: undefined }), false);
    assert.equal(isKernelRequest({ ...good, payload: [] }), false);
    assert.equal(isKernelRequest({ ...good, payload: { values: [12] } }), false);
    assert.equal(isKernelRequest(null), false);
    assert.equal(isKernelRequest("request"), false);
  });
});

describe("the kernel's chat panel messages", () => {
  // The shapes themselves: js/tests/protocol_schema.test.mjs, against the shared examples.
  test("accept structured clones from another realm", () => {
    const event = vm.runInNewContext('({kind: "chat_event", event: {kind: "text", text: "hi"}})');
    assert.equal(protocol.isChatEventMessage(event), true);
    const prompt = vm.runInNewContext('({kind: "approval_request", id: "a1", tool: "t", arguments: {}, asking: ["x"]})');
    assert.equal(protocol.isApprovalRequest(prompt), true);
  });

  test("a chat event kind is an own key, never an inherited name", () => {
    for (const kind of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      assert.equal(protocol.isChatEventMessage({ kind: "chat_event", event: { kind, text: "x" } }), false);
    }
  });

  test("a code message holds at most MAX_CODE_TEXT characters, counted as the kernel counts them", () => {
    const fits = "x".repeat(protocol.MAX_CODE_TEXT);
    assert.equal(protocol.isCodeMessage({ kind: "code", text: fits }), true);
    assert.equal(protocol.isCodeMessage({ kind: "code", text: fits + "x" }), false);
    const astral = "😀".repeat(protocol.MAX_CODE_TEXT); // two UTF-16 units each, one character
    assert.equal(protocol.isCodeMessage({ kind: "code", text: astral }), true);
    assert.equal(protocol.isCodeMessage({ kind: "code", text: astral + "x" }), false);
    assert.deepEqual(protocol.copyCodeMessage(), { kind: "copy_code" });
  });
});

describe("errorText", () => {
  test("uses the message of a plain Error and prefixes other error names", () => {
    assert.equal(errorText(new Error("speed too high")), "speed too high");
    assert.equal(errorText(new TypeError("x is not a function")), "TypeError: x is not a function");
    assert.equal(errorText(new RangeError("")), "RangeError");
  });

  test("describes strings, objects and other thrown values", () => {
    assert.equal(errorText("plain text"), "plain text");
    assert.equal(errorText({ reason: "bad" }), '{"reason":"bad"}');
    assert.equal(errorText(42), "42");
    assert.equal(errorText(null), "null");
    assert.equal(errorText(undefined), "undefined was thrown");
    assert.equal(errorText(""), "error (empty message)");
  });

  test("never throws", () => {
    const cyclic = {};
    cyclic.self = cyclic;
    assert.equal(errorText(cyclic), "[object Object]");
    const hostile = {
      get message() {
        throw new Error("gotcha");
      },
    };
    assert.equal(errorText(hostile), "unprintable error value");
    assert.equal(errorText(Object.create(null)), "{}");
  });

  test("cuts to MAX_ERROR_TEXT characters", () => {
    const text = errorText(new Error("x".repeat(5000)));
    assert.equal(text.length, MAX_ERROR_TEXT);
    assert.equal(text, "x".repeat(MAX_ERROR_TEXT));
    assert.equal(errorText("y".repeat(MAX_ERROR_TEXT)), "y".repeat(MAX_ERROR_TEXT));
  });

  test("does not split a surrogate pair at the cut", () => {
    const text = errorText("a".repeat(MAX_ERROR_TEXT - 1) + "😀😀");
    assert.equal(text, "a".repeat(MAX_ERROR_TEXT - 1));
  });
});

// The messages outside section 1, which the schema does not cover: each builder makes exactly the
// message docs/protocol.md writes (sections 2 and 4), with an optional key absent when not given.
describe("the builders of sections 2 and 4", () => {
  test("parentMessage: no nonce, and id and payload only where given", () => {
    assert.deepEqual(protocol.parentMessage("apply", { a: 1 }), { source: PARENT_SOURCE, type: "apply", payload: { a: 1 } });
    assert.deepEqual(protocol.parentMessage("state", undefined, "r1"), { source: PARENT_SOURCE, type: "state", id: "r1" });
    const action = protocol.parentMessage("action", { name: "go" }, "r2");
    assert.deepEqual(action, { source: PARENT_SOURCE, type: "action", id: "r2", payload: { name: "go" } });
    assert.ok(isParentMessage(action, NONCE));
    assert.ok(!("id" in protocol.parentMessage("apply", {})) && !("nonce" in action));
  });

  test("targetMessage: source and nonce around the body, id only where given", () => {
    const state = protocol.targetMessage(NONCE, { type: "state", payload: { x: 1 } }, "r1");
    assert.deepEqual(state, { source: TARGET_SOURCE, nonce: NONCE, type: "state", payload: { x: 1 }, id: "r1" });
    assert.ok(isTargetMessage(state, NONCE));
    const ready = protocol.targetMessage(NONCE, { type: "ready", load: "l" });
    assert.deepEqual(ready, { source: TARGET_SOURCE, nonce: NONCE, type: "ready", load: "l" });
    assert.ok(!("id" in ready));
  });

  test("the clock's advance and halt carry no nonce", () => {
    assert.deepEqual(protocol.clockAdvanceMessage({ ms: 1000, more: true }), {
      source: PARENT_SOURCE,
      type: "advance",
      payload: { ms: 1000, more: true },
    });
    assert.deepEqual(protocol.clockAdvanceMessage({ ms: 16, more: false, token: "7" }).payload, { ms: 16, more: false, token: "7" });
    assert.deepEqual(protocol.clockHaltMessage(), { source: PARENT_SOURCE, type: "halt" });
  });

  test("the sandbox frame's messages: the view's ops and the frame's reports", () => {
    assert.deepEqual(protocol.viewOpsMessage(NONCE, [{ op: "values", values: {} }]), {
      source: protocol.VIEW_SOURCE,
      nonce: NONCE,
      ops: [{ op: "values", values: {} }],
    });
    assert.deepEqual(protocol.sandboxMessage(NONCE, { stopped: "why" }), { source: protocol.SANDBOX_SOURCE, nonce: NONCE, stopped: "why" });
  });

  test("kernelRequest: a request the kernel would send, payload {} by default", () => {
    const request = protocol.kernelRequest("r1", "state");
    assert.deepEqual(request, { kind: "request", id: "r1", op: "state", payload: {} });
    assert.ok(isKernelRequest(request));
  });

  test("the host page's answers to the engine: _advance and _samples", () => {
    const ok = { ok: /** @type {const} */ (true), states: [{ x: 1 }], samples: 2 };
    assert.deepEqual(protocol.advanceResultMessage("h-1", "a1", ok), { kind: "_advance", view_id: "h-1", token: "a1", result: ok });
    assert.deepEqual(protocol.advanceSamplesMessage("h-1", "a1", [{ x: 0 }]), {
      kind: "_samples",
      view_id: "h-1",
      token: "a1",
      states: [{ x: 0 }],
    });
  });
});
