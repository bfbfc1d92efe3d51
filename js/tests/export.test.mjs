// @ts-check
/** An exported page's model with no kernel (js/export/local_model.js): what the kernel did, done here. */
import assert from "node:assert/strict";
import { test } from "node:test";

import { createLocalModel } from "../export/local_model.js";

test("a control's set is an apply request to the page, then the new values", async () => {
  const model = createLocalModel({ values: { "a.x": 1, "a.y": 2 }, state: {} });
  /** @type {any[]} */
  const seen = [];
  model.on("msg:custom", (/** @type {any} */ msg) => seen.push(["request", msg]));
  model.on("change:values", (/** @type {any} */ v) => seen.push(["values", v]));
  model.send({ kind: "set", values: { "a.x": 5 } });
  await Promise.resolve();
  assert.deepEqual(seen, [
    ["request", { kind: "request", id: "local-1", op: "apply", payload: { values: { "a.x": 5 } } }],
    ["values", { "a.x": 5, "a.y": 2 }],
  ]);
});

test("an action's button is an action request; the page's reports and replies are the state", async () => {
  const model = createLocalModel({ values: {}, state: {} });
  /** @type {any[]} */
  const requests = [];
  model.on("msg:custom", (/** @type {any} */ msg) => requests.push(msg));
  model.send({ kind: "act", name: "launch" });
  model.send({ kind: "event", type: "state", payload: { range: 3 } });
  await Promise.resolve();
  assert.deepEqual(requests, [{ kind: "request", id: "local-1", op: "action", payload: { name: "launch" } }]);
  assert.deepEqual(model.get("state"), { range: 3 });
  model.send({ kind: "reply", id: "local-1", ok: true, state: { range: 4 } });
  model.send({ kind: "reply", id: "local-2", ok: false, error: { code: "target_error", message: "no" } });
  await Promise.resolve();
  assert.deepEqual(model.get("state"), { range: 4 });
  assert.deepEqual(model.answered(), { ok: 1, failed: 1 });
  model.send({ kind: "set", values: "nonsense" });
  model.send(null);
  await Promise.resolve();
  assert.equal(requests.length, 1, "what is no message does nothing");
});
