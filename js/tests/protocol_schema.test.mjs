// The protocol as a checked contract, JS side (docs/protocol.md, "How the translations are kept in step").
// The shared examples (tests/fixtures/protocol_examples.json) pass or fail alike in js/protocol.js and in
// the committed JSON Schema (docs/protocol.schema.json, generated from splitbrain_widget/protocol.py);
// the builders make the valid examples exactly; what the view's relay sends matches the schema.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import Ajv2020 from "ajv/dist/2020.js";

import * as protocol from "../protocol.js";
import { Relay } from "../host/relay.js";

const root = new URL("../../", import.meta.url);
const schema = JSON.parse(readFileSync(new URL("docs/protocol.schema.json", root), "utf8"));
const examples = JSON.parse(readFileSync(new URL("tests/fixtures/protocol_examples.json", root), "utf8"));

const ajv = new Ajv2020({ strict: true, allErrors: true });
ajv.addSchema(schema);
/** @type {Record<string, import("ajv").ValidateFunction>} the committed schema, per direction */
const schemaOf = {
  kernel_to_view: ajv.compile({ $ref: `${schema.$id}#/$defs/KernelToView` }),
  view_to_kernel: ajv.compile({ $ref: `${schema.$id}#/$defs/ViewToKernel` }),
  host_page_to_engine: ajv.compile({ $ref: `${schema.$id}#/$defs/HostPageToEngine` }),
};

/**
 * @param {string} direction
 * @param {unknown} message
 * @returns {string} "" when the schema accepts `message`, else what it says
 */
function schemaErrors(direction, message) {
  const validate = schemaOf[direction];
  return validate(message) ? "" : ajv.errorsText(validate.errors);
}

/**
 * The object schemas at the ends of a definition's oneOf branches.
 * @param {any} node
 * @returns {any[]}
 */
function leaves(node) {
  if (node.$ref) return leaves(schema.$defs[node.$ref.split("/").pop()]);
  if (node.oneOf) return node.oneOf.flatMap(leaves);
  return [node];
}

/** @param {any[]} shapes @param {string} field */
const constsOf = (shapes, field) => [...new Set(shapes.map((shape) => shape.properties[field].const))].sort();

// --- kernel -> view: what the view receives, it checks --------------------------------------------

/** One validator per kernel -> view kind. */
const RECEIVE = {
  request: protocol.isKernelRequest,
  chat_event: protocol.isChatEventMessage,
  approval_request: protocol.isApprovalRequest,
  approval_closed: protocol.isApprovalClosed,
  code: protocol.isCodeMessage,
};
/** @param {unknown} message */
const received = (message) => Object.values(RECEIVE).some((check) => check(message));

describe("kernel -> view", () => {
  test("every kind in the schema has a validator in protocol.js", () => {
    assert.deepEqual(constsOf(leaves(schema.$defs.KernelToView), "kind"), Object.keys(RECEIVE).sort());
  });

  for (const { note, message } of examples.kernel_to_view.valid) {
    test(`valid: ${note}`, () => {
      assert.equal(schemaErrors("kernel_to_view", message), "");
      assert.equal(RECEIVE[message.kind](message), true, "protocol.js refuses it");
    });
  }

  for (const { why, message } of examples.kernel_to_view.invalid) {
    test(`invalid: ${why}`, () => {
      assert.notEqual(schemaErrors("kernel_to_view", message), "", "the schema accepts it");
      assert.equal(received(message), false, "protocol.js accepts it");
    });
  }
});

// --- view -> kernel: what the view sends, it builds ------------------------------------------------

/** One builder per event type, called with the parts of a message of that type. */
const BUILD_EVENT = {
  attached: (/** @type {any} */ m) => protocol.attachedEvent(m.view_id, m.payload.user_agent, m.payload.visible),
  ready: (/** @type {any} */ m) => protocol.readyEvent(m.view_id),
  detached: (/** @type {any} */ m) => protocol.detachedEvent(m.view_id),
  state: (/** @type {any} */ m) => protocol.stateEvent(m.view_id, m.payload),
  error: (/** @type {any} */ m) => protocol.errorEvent(m.view_id, m.payload.code, m.payload.message),
  visibility: (/** @type {any} */ m) => protocol.visibilityEvent(m.view_id, m.payload.visible, m.payload.cause),
};

/** One builder per view -> kernel kind. */
const BUILD = {
  reply: (/** @type {any} */ m) =>
    m.ok
      ? protocol.replyMessage(m.id, m.view_id, m.state, m.picture)
      : protocol.errorReplyMessage(m.id, m.view_id, m.error.code, m.error.message, m.error.hint),
  event: (/** @type {any} */ m) => BUILD_EVENT[m.type](m),
  chat: (/** @type {any} */ m) => protocol.chatMessage(m.text),
  cancel: () => protocol.cancelMessage(),
  skip_wait: () => protocol.skipWaitMessage(),
  approval: (/** @type {any} */ m) => protocol.approvalMessage(m.id, m.approved),
  set: (/** @type {any} */ m) => protocol.setMessage(m.values),
  copy_code: () => protocol.copyCodeMessage(),
  act: (/** @type {any} */ m) => protocol.actMessage(m.name),
  picture: (/** @type {any} */ m) => protocol.pictureMessage(m.view_id, m.picture),
};

describe("view -> kernel", () => {
  const shapes = leaves(schema.$defs.ViewToKernel);

  test("every kind and event type in the schema has a builder in protocol.js", () => {
    assert.deepEqual(constsOf(shapes, "kind"), Object.keys(BUILD).sort());
    const events = shapes.filter((shape) => shape.properties.kind.const === "event");
    assert.deepEqual(constsOf(events, "type"), Object.keys(BUILD_EVENT).sort());
  });

  test("the handshake announces this module's major version", () => {
    assert.deepEqual(protocol.attachedEvent("v1").payload, { protocol: protocol.PROTOCOL_VERSION });
  });

  for (const { note, message, other_version: otherVersion } of examples.view_to_kernel.valid) {
    test(`valid: ${note}`, () => {
      assert.equal(schemaErrors("view_to_kernel", message), "");
      if (!otherVersion) assert.deepEqual(BUILD[message.kind](message), message, "the builder makes another message");
    });
  }

  for (const { why, message } of examples.view_to_kernel.invalid) {
    test(`invalid: ${why}`, () => {
      assert.notEqual(schemaErrors("view_to_kernel", message), "", "the schema accepts it");
    });
  }
});

describe("the two translations agree", () => {
  test("on the version", () => {
    assert.equal(schema.$id, `urn:splitbrain-widget:protocol:${protocol.PROTOCOL_VERSION}.${protocol.PROTOCOL_MINOR}`);
  });

  test("on the error codes, in the table's order", () => {
    assert.deepEqual(protocol.ERROR_CODES, schema.$defs.ErrorInfo.properties.code.enum);
  });
});

test("everything the view's relay sends the kernel matches the schema", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  /** @type {any[]} */
  const toKernel = [];
  const relay = new Relay({
    viewId: "v1",
    sendToKernel: (m) => toKernel.push(m),
    postToTarget: () => {},
    currentValues: () => ({ "s.speed": 8 }),
  });
  const fromTarget = (/** @type {object} */ msg) =>
    relay.fromTarget({ source: protocol.TARGET_SOURCE, nonce: relay.nonce, ...msg }, true);
  const request = (/** @type {string} */ id, /** @type {string} */ op = "apply") => ({
    kind: "request",
    id,
    op,
    payload: op === "state" ? {} : { values: { "s.speed": 3 } },
  });

  relay.fromKernel(request("r1"));
  relay.fromKernel(request("r2", "state"));
  fromTarget({ type: "ready", load: "l1" }); // the ready event, then r1 and r2 go to the page
  fromTarget({ type: "state", id: "r1", payload: { x: 1 } }); // a reply
  fromTarget({ type: "error", id: "r2", error: { code: "target_error", message: "boom" } }); // an error reply
  fromTarget({ type: "state", payload: { x: 2 } }); // a state event, on the next timer
  fromTarget({ type: "error", error: { code: "target_error", message: "later" } }); // an error event, likewise
  t.mock.timers.tick(1000);
  relay.fromKernel(request("r3"));
  relay.reload(); // r3: not_ready
  relay.fromKernel(request("r4"));
  relay.stop("the target was stopped"); // r4: not_ready, and one error event
  relay.dispose();

  const seen = toKernel.map((m) => (m.kind === "event" ? `event:${m.type}` : `reply:${m.ok}`));
  assert.deepEqual([...new Set(seen)].sort(), ["event:error", "event:ready", "event:state", "reply:false", "reply:true"]);
  for (const message of toKernel) assert.equal(schemaErrors("view_to_kernel", message), "", JSON.stringify(message));
});

describe("the host page's messages to the headless engine (section 4)", () => {
  test("the builders make what the schema's HostPageToEngine accepts", () => {
    const made = [
      protocol.advanceResultMessage("h-1", "a1", { ok: true, state: { x: 1 } }),
      protocol.advanceResultMessage("h-1", "a2", { ok: true, states: [{ x: 1 }], samples: 3 }),
      protocol.advanceResultMessage("h-1", "a3", { ok: false, error: { code: "timeout", message: "cancelled" } }),
      protocol.advanceSamplesMessage("h-1", "a2", [{ x: 0 }, { x: 0.5 }]),
    ];
    for (const message of made) assert.equal(schemaErrors("host_page_to_engine", message), "", JSON.stringify(message));
    const bad = protocol.advanceResultMessage("h-1", "a4", { ok: true, states: [], samples: 0 });
    assert.notEqual(schemaErrors("host_page_to_engine", bad), "", "no steps is no sampled advance");
  });
});
