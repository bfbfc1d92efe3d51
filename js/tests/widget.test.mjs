// The view's relay (queue before ready, flush in order, first-reply bookkeeping) and panel helpers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Relay, boundState, jsonShape, MAX_STATE_CHARS, MAX_STATE_DEPTH, MAX_STATE_VALUES, MAX_TARGET_MESSAGES_PER_S } from "../host/relay.js";
import { REFUSED_KEY } from "../protocol.js";
import {
  OBSERVABLE_WINDOW_MS,
  SAMPLE_SLOT_MS,
  SPARKLINE_HEIGHT,
  SPARKLINE_WIDTH,
  addSample,
  answerNotes,
  chipStatus,
  deadlineText,
  formatNumber,
  formatObservable,
  formatValue,
  numericValue,
  observableLabel,
  pruneSamples,
  readObservable,
  sparklinePoints,
  stepFor,
} from "../view/panel.js";

function setup() {
  const toKernel = [];
  const toTarget = [];
  const stopped = [];
  const left = [];
  const clock = { ms: 1_000_000 };
  const relay = new Relay({
    viewId: "v1",
    sendToKernel: (m) => toKernel.push(m),
    postToTarget: (m) => toTarget.push(m),
    currentValues: () => ({ "s.speed": 8 }),
    onStopped: (why) => stopped.push(why),
    onLeft: (why) => left.push(why),
    now: () => clock.ms,
  });
  return { relay, toKernel, toTarget, stopped, left, clock };
}

const req = (id, op = "apply", values = { "s.speed": Number(id.slice(1)) }) => ({ kind: "request", id, op, payload: { values } });
const fromTarget = (relay, msg) => relay.fromTarget({ source: "splitbrain-target", nonce: relay.nonce, ...msg }, true);

test("requests before ready are queued, then flushed in order after the catch-up apply", () => {
  const { relay, toKernel, toTarget } = setup();
  relay.fromKernel(req("r1"));
  relay.fromKernel(req("r2"));
  assert.equal(toTarget.length, 0);
  fromTarget(relay, { type: "ready" });
  assert.deepEqual(toKernel[0], { kind: "event", view_id: "v1", type: "ready" });
  assert.deepEqual(toTarget.map((m) => [m.type, m.id]), [["apply", undefined], ["apply", "r1"], ["apply", "r2"]]);
  // the values trait, less what the queued requests set after its last change: nothing is lost, and
  // the page never sees a value go back
  assert.deepEqual(toTarget[0].payload, {});
  assert.ok(toTarget.every((m) => m.source === "splitbrain-parent" && !("nonce" in m)), "the view sends no nonce (1.7)");
});

test("on ready, requests older than the values trait run before the catch-up, newer ones after it", () => {
  const toKernel = [];
  const toTarget = [];
  let values = { "s.speed": 1, "s.color": "red" };
  const relay = new Relay({
    viewId: "v1",
    sendToKernel: (m) => toKernel.push(m),
    postToTarget: (m) => toTarget.push(m),
    currentValues: () => values,
  });
  relay.fromKernel(req("r2")); // speed 2
  relay.fromKernel(req("r3")); // speed 3
  values = { "s.speed": 3, "s.color": "blue" }; // the echo, holding r2 and r3 (and a direct colour change)
  relay.valuesChanged(values);
  relay.fromKernel(req("r4")); // speed 4, newer than the echo
  fromTarget(relay, { type: "ready" });
  assert.deepEqual(
    toTarget.map((m) => [m.id, m.payload]),
    [
      ["r2", { "s.speed": 2 }],
      ["r3", { "s.speed": 3 }],
      [undefined, { "s.color": "blue" }],
      ["r4", { "s.speed": 4 }],
    ],
  );
});

test("an action request goes to the page as an action with its name, in order with the applies (1.5)", () => {
  const { relay, toKernel, toTarget } = setup();
  relay.fromKernel(req("r1"));
  relay.fromKernel({ kind: "request", id: "r2", op: "action", payload: { name: "run" } });
  relay.fromKernel(req("r3"));
  fromTarget(relay, { type: "ready" });
  assert.deepEqual(
    toTarget.map((m) => [m.type, m.id, m.payload]),
    [
      ["apply", undefined, {}],
      ["apply", "r1", { "s.speed": 1 }],
      ["action", "r2", { name: "run" }],
      ["apply", "r3", { "s.speed": 3 }],
    ],
  );
  fromTarget(relay, { type: "state", id: "r2", payload: { running: true } });
  assert.deepEqual(toKernel.at(-1), { kind: "reply", id: "r2", view_id: "v1", ok: true, state: { running: true } });
});

test("an action request without a name is not one: the relay drops it", () => {
  const { relay, toTarget } = setup();
  fromTarget(relay, { type: "ready" });
  relay.fromKernel({ kind: "request", id: "r1", op: "action", payload: {} });
  relay.fromKernel({ kind: "request", id: "r2", op: "action", payload: { values: { "s.speed": 1 } } });
  assert.deepEqual(toTarget.filter((m) => m.id !== undefined), []);
});

test("a request id is applied at most once", () => {
  const { relay, toTarget } = setup();
  fromTarget(relay, { type: "ready" });
  relay.fromKernel(req("r1"));
  relay.fromKernel(req("r1"));
  assert.equal(toTarget.filter((m) => m.id === "r1").length, 1);
});

test("a state with an outstanding id becomes the reply; unknown ids are dropped", () => {
  const { relay, toKernel } = setup();
  fromTarget(relay, { type: "ready" });
  relay.fromKernel(req("r1"));
  fromTarget(relay, { type: "state", id: "r1", payload: { x: 1 } });
  fromTarget(relay, { type: "state", id: "r1", payload: { x: 2 } }); // a second answer: dropped
  fromTarget(relay, { type: "state", id: "r9", payload: { x: 3 } }); // never asked: dropped
  const replies = toKernel.filter((m) => m.kind === "reply");
  assert.deepEqual(replies, [{ kind: "reply", id: "r1", view_id: "v1", ok: true, state: { x: 1 } }]);
});

test("a target error becomes an error reply with bounded text", () => {
  const { relay, toKernel } = setup();
  fromTarget(relay, { type: "ready" });
  relay.fromKernel(req("r1"));
  fromTarget(relay, { type: "error", id: "r1", error: { code: "target_error", message: "x".repeat(2000) } });
  const reply = toKernel.find((m) => m.kind === "reply");
  assert.equal(reply.ok, false);
  assert.equal(reply.error.code, "target_error");
  assert.ok(reply.error.message.length <= 500);
});

test("messages not from our iframe, or with another nonce, are ignored", () => {
  const { relay, toKernel } = setup();
  relay.fromTarget({ source: "splitbrain-target", nonce: relay.nonce, type: "ready" }, false);
  relay.fromTarget({ source: "splitbrain-target", nonce: "forged", type: "ready" }, true);
  assert.equal(relay.ready, false);
  assert.equal(toKernel.length, 0);
});

test("a reload answers requests the old page never will, and waits for ready again", () => {
  const { relay, toKernel } = setup();
  fromTarget(relay, { type: "ready" });
  relay.fromKernel(req("r1"));
  const oldNonce = relay.nonce;
  relay.reload();
  assert.notEqual(relay.nonce, oldNonce);
  assert.equal(relay.ready, false);
  const reply = toKernel.find((m) => m.kind === "reply");
  assert.equal(reply.error.code, "not_ready");
});

test("a page that reloads itself (same nonce, new load id) is not taken for the page: its frame is replaced", () => {
  const { relay, toKernel, toTarget, left } = setup();
  fromTarget(relay, { type: "ready", load: "load-1" });
  relay.fromKernel(req("r1"));
  toTarget.length = 0;
  const oldNonce = relay.nonce;
  fromTarget(relay, { type: "ready", load: "load-2" });
  assert.equal(left.length, 1);
  assert.match(left[0], /reloaded itself/);
  assert.equal(toKernel.filter((m) => m.type === "ready").length, 1, "the other document's ready is not passed on");
  assert.equal(toTarget.length, 0, "nothing is posted to the other document");
  // frame.js answers by loading a fresh frame: the old page's call ends, the fresh one gets a new nonce
  relay.reload(left[0]);
  const reply = toKernel.find((m) => m.kind === "reply");
  assert.equal(reply.id, "r1");
  assert.equal(reply.error.code, "not_ready");
  assert.match(reply.error.message, /reloaded itself/);
  assert.notEqual(relay.nonce, oldNonce);
  relay.fromTarget({ source: "splitbrain-target", nonce: oldNonce, type: "ready", load: "load-2" }, true);
  assert.equal(relay.ready, false, "the old nonce opens nothing");
  fromTarget(relay, { type: "ready", load: "load-3" });
  assert.deepEqual(toTarget.map((m) => [m.type, m.id, m.payload]), [["apply", undefined, { "s.speed": 8 }]]);
  relay.fromKernel(req("r2"));
  fromTarget(relay, { type: "state", id: "r2", payload: { ok: 1 } });
  assert.equal(toKernel.filter((m) => m.kind === "reply" && m.ok).length, 1);
});

test("a page that says it is leaving (pagehide) has its frame replaced; its loaded is noted", () => {
  const { relay, left } = setup();
  fromTarget(relay, { type: "ready", load: "load-1" });
  assert.equal(relay.loaded, false);
  fromTarget(relay, { type: "loaded" });
  assert.equal(relay.loaded, true);
  fromTarget(relay, { type: "leaving" });
  assert.equal(left.length, 1);
  assert.match(left[0], /left its frame/);
  relay.reload(left[0]);
  assert.equal(relay.loaded, false, "a fresh frame has yet to announce its load");
});

test("a repeated ready of the same load (or without one) is ignored: flooding readies cannot fail calls", () => {
  const { relay, toKernel, toTarget } = setup();
  fromTarget(relay, { type: "ready", load: "load-1" });
  relay.fromKernel(req("r1"));
  for (let i = 0; i < 100; i += 1) fromTarget(relay, { type: "ready", load: "load-1" });
  for (let i = 0; i < 100; i += 1) fromTarget(relay, { type: "ready" });
  assert.equal(toKernel.filter((m) => m.kind === "reply").length, 0);
  assert.equal(toKernel.filter((m) => m.type === "ready").length, 1);
  assert.equal(toTarget.filter((m) => m.id === undefined).length, 1); // one catch-up apply
  fromTarget(relay, { type: "state", id: "r1", payload: { x: 1 } });
  assert.equal(toKernel.find((m) => m.kind === "reply").ok, true);
});

test("a page past its message budget is stopped: its calls fail at once, the kernel is told once", () => {
  const { relay, toKernel, stopped, clock } = setup();
  fromTarget(relay, { type: "ready", load: "a" });
  relay.fromKernel(req("r1"));
  // the ready counts too: the page's own messages up to the budget are handled
  for (let i = 1; i < MAX_TARGET_MESSAGES_PER_S; i += 1) fromTarget(relay, { type: "state", payload: { i } });
  assert.equal(stopped.length, 0, "the budget itself is allowed");
  for (let i = 0; i < 10_000; i += 1) fromTarget(relay, { type: "state", payload: { i } });
  assert.equal(stopped.length, 1);
  assert.match(stopped[0], /more than 5000 messages within one second/);
  const replies = toKernel.filter((m) => m.kind === "reply");
  assert.deepEqual(replies.map((m) => [m.id, m.error.code]), [["r1", "not_ready"]]);
  const errors = toKernel.filter((m) => m.kind === "event" && m.type === "error");
  assert.equal(errors.length, 1);
  // later requests are answered at once, not posted to a page that is gone
  relay.fromKernel(req("r2"));
  assert.deepEqual(toKernel.at(-1), { kind: "reply", id: "r2", view_id: "v1", ok: false, error: { code: "not_ready", message: stopped[0].slice(0, 500) } });
  // a restart (a new page load) runs again with a fresh budget
  relay.reload();
  clock.ms += 10;
  fromTarget(relay, { type: "ready", load: "b" });
  assert.equal(relay.ready, true);
  assert.equal(relay.stopped, "");
});

test("the budget is per second, and answers to requests do not count against it", () => {
  const { relay, stopped, clock, toKernel } = setup();
  fromTarget(relay, { type: "ready", load: "a" });
  for (let second = 0; second < 5; second += 1) {
    for (let i = 0; i < MAX_TARGET_MESSAGES_PER_S - 100; i += 1) fromTarget(relay, { type: "state", payload: { i } });
    clock.ms += 1000;
  }
  for (let i = 0; i < 2 * MAX_TARGET_MESSAGES_PER_S; i += 1) {
    relay.fromKernel(req(`r${i}`));
    fromTarget(relay, { type: "state", id: `r${i}`, payload: { i } });
  }
  assert.equal(stopped.length, 0);
  assert.equal(toKernel.filter((m) => m.kind === "reply" && m.ok).length, 2 * MAX_TARGET_MESSAGES_PER_S);
});

test("oversized or non-object states are replaced by a marker", () => {
  assert.deepEqual(boundState({ a: 1 }), { a: 1 });
  assert.equal(boundState({ a: "x".repeat(MAX_STATE_CHARS) })._truncated, true);
  assert.ok("_invalid" in boundState([1, 2]));
  const cyclic = {};
  cyclic.self = cyclic;
  assert.ok("_invalid" in boundState(cyclic));
});

test("a state nested deeper than MAX_STATE_DEPTH is replaced by the too_deep marker", () => {
  /** @param {number} n */
  const nested = (n) => {
    let v = /** @type {any} */ (1);
    for (let i = 0; i < n; i += 1) v = i % 2 ? { a: v } : [v];
    return v;
  };
  assert.deepEqual(boundState({ x: nested(MAX_STATE_DEPTH - 1) }), { x: nested(MAX_STATE_DEPTH - 1) });
  assert.deepEqual(boundState({ x: nested(MAX_STATE_DEPTH) }), { _truncated: true, code: "too_deep", limit: MAX_STATE_DEPTH });
  assert.equal(boundState({ x: nested(1000) })._truncated, true);
  assert.ok("_invalid" in boundState({ x: nested(100_000) })); // past the engine's stack: JSON.stringify throws
  // brackets inside strings are text, not nesting
  assert.equal(jsonShape(JSON.stringify({ s: "[[[[{{{{\\\"[[[[" }), 3).depth, 1);
  assert.equal(jsonShape("[[],[[]],{}]", 10).depth, 3);
});

test("a state of too many values is replaced by the marker before it crosses the comm", () => {
  // counted as _bounds.py measure counts: the whole, each element and member (keys not), strings' commas not
  assert.deepEqual(jsonShape(JSON.stringify({}), 32), { depth: 1, values: 1 });
  assert.deepEqual(jsonShape(JSON.stringify({ a: 1, b: [1, 2, []], c: { d: "x,y[" } }), 32), { depth: 3, values: 8 });
  assert.deepEqual(jsonShape(JSON.stringify([[], [[]], {}]), 32), { depth: 3, values: 5 });
  const wide = (n) => ({ energy: Array.from({ length: n }, () => []) });
  assert.equal(jsonShape(JSON.stringify(wide(MAX_STATE_VALUES - 2)), 32).values, MAX_STATE_VALUES);
  assert.deepEqual(boundState(wide(MAX_STATE_VALUES - 2)).energy.length, MAX_STATE_VALUES - 2);
  assert.deepEqual(boundState(wide(MAX_STATE_VALUES - 1)), { _truncated: true, code: "too_many_values", limit: MAX_STATE_VALUES });
  assert.deepEqual(boundState(wide(330_000)), { _truncated: true, code: "too_many_values", limit: MAX_STATE_VALUES });
});

test("unsolicited states are throttled and the latest wins", async () => {
  const { relay, toKernel } = setup();
  fromTarget(relay, { type: "ready" });
  for (let i = 0; i < 50; i++) fromTarget(relay, { type: "state", payload: { i } });
  await new Promise((r) => setTimeout(r, 150));
  const events = toKernel.filter((m) => m.kind === "event" && m.type === "state");
  assert.equal(events.length, 1);
  assert.deepEqual(events[0].payload, { i: 49 });
  relay.dispose();
});

test("an answer's notes say no change was made and why it stopped, never for a plain answer", () => {
  assert.deepEqual(answerNotes({}), []);
  assert.deepEqual(answerNotes({ stopped: "cancelled" }), []);
  assert.deepEqual(answerNotes({ no_change: true }).map((n) => n.text), ["no change was made"]);
  assert.deepEqual(answerNotes({ no_change: true, stopped: "length" }).map((n) => n.kind), ["no-change", "cut-off"]);
  assert.deepEqual(answerNotes({ stopped: "deadline: the answer took longer than its run_timeout of 5 s" }).map((n) => n.kind), ["deadline"]);
  assert.deepEqual(answerNotes({ stopped: "context overflow: ..." }).map((n) => n.kind), ["stopped"]);
});

test("a deadline's time left reads as minutes and seconds, or seconds", () => {
  assert.equal(deadlineText(300), "5:00");
  assert.equal(deadlineText(245.2), "4:06");
  assert.equal(deadlineText(59.1), "1:00");
  assert.equal(deadlineText(42), "42 s");
  assert.equal(deadlineText(0), "0 s");
});

test("panel helpers tell a chip's status", () => {
  assert.equal(chipStatus({ ok: true }), "ok");
  assert.equal(chipStatus({ ok: false, result: { error: { code: "cancelled" } } }), "cancelled");
  assert.equal(chipStatus({ ok: false, result: { error: { code: "timeout" } } }), "error");
  assert.equal(stepFor({ type: "integer" }), 1);
  assert.equal(stepFor({ type: "number", min: 0, max: 50 }), 0.25);
  assert.equal(stepFor({ type: "number", step: 0.5 }), 0.5);
});

test("a values-trait change the page has not seen is applied; the echo of a request is not", () => {
  const { relay, toTarget } = setup();
  fromTarget(relay, { type: "ready" });
  relay.fromKernel(req("r5", "apply", { "s.speed": 5 }));
  const before = toTarget.length;
  relay.valuesChanged({ "s.speed": 5 }); // the trait echo of r5
  assert.equal(toTarget.length, before);
  relay.valuesChanged({ "s.speed": 5, "d.color": "red" }); // someone assigned sim.values directly
  assert.deepEqual(toTarget.at(-1).payload, { "d.color": "red" });
  assert.equal(toTarget.at(-1).id, undefined);
});

test("errors outside requests are coalesced", async () => {
  const { relay, toKernel } = setup();
  fromTarget(relay, { type: "ready" });
  for (let i = 0; i < 1000; i++) fromTarget(relay, { type: "error", error: { code: "target_error", message: `boom ${i}` } });
  await new Promise((r) => setTimeout(r, 50));
  const errors = toKernel.filter((m) => m.type === "error");
  assert.equal(errors.length, 1);
  assert.match(errors[0].payload.message, /boom 999 \(and 999 more errors\)/);
  relay.dispose();
});

// -- the observables section's helpers --------------------------------------------------------------

test("an observable is read at the top of a state first, then under observables, values or params", () => {
  assert.deepEqual(readObservable({ angle: 12.5 }, "angle"), { reported: true, value: 12.5 });
  assert.deepEqual(readObservable({ observables: { angle: 3 } }, "angle"), { reported: true, value: 3 });
  assert.deepEqual(readObservable({ values: { angle: 4 } }, "angle"), { reported: true, value: 4 });
  assert.deepEqual(readObservable({ params: { angle: 5 } }, "angle"), { reported: true, value: 5 });
  assert.deepEqual(readObservable({ angle: 1, observables: { angle: 2 } }, "angle"), { reported: true, value: 1 });
  assert.deepEqual(readObservable({ period: null }, "period"), { reported: true, value: null }); // reported, unknown yet
  assert.deepEqual(readObservable({ observables: [1, 2] }, "0"), { reported: false, value: undefined });
  assert.deepEqual(readObservable({}, "angle"), { reported: false, value: undefined });
  assert.deepEqual(readObservable(undefined, "angle"), { reported: false, value: undefined });
  assert.deepEqual(readObservable({ toString: 1 }, "hasOwnProperty"), { reported: false, value: undefined });
});

test("only finite numbers are numeric", () => {
  assert.equal(numericValue(2.5), 2.5);
  assert.equal(numericValue(0), 0);
  for (const other of [null, undefined, "3", true, NaN, Infinity, [1]]) assert.equal(numericValue(other), null);
});

test("numbers show about four significant digits and no more decimals than they need", () => {
  assert.equal(formatNumber(2.00641), "2.006");
  assert.equal(formatNumber(-19.87), "-19.87");
  assert.equal(formatNumber(0.123456), "0.1235");
  assert.equal(formatNumber(12345.6), "12346");
  assert.equal(formatNumber(1.5), "1.5");
  assert.equal(formatNumber(42), "42");
  assert.equal(formatNumber(0), "0");
  assert.equal(formatNumber(-0), "0");
  assert.equal(formatNumber(0.000012), "1.2e-5");
  assert.equal(formatNumber(3e20), "3e20");
  assert.equal(formatNumber(-1.23456e16), "-1.235e16");
  assert.equal(formatNumber(NaN), "NaN");
});

test("a value shows with its unit when it is a number, as text otherwise", () => {
  assert.equal(formatObservable(19.874, "deg"), "19.87 deg");
  assert.equal(formatObservable(2, "s"), "2 s");
  assert.equal(formatObservable([1, 2.5], "m"), "[1, 2.5] m");
  assert.equal(formatObservable(7, undefined), "7");
  assert.equal(formatObservable(null, "s"), "—");
  assert.equal(formatObservable("landed", "s"), "landed");
  assert.equal(formatObservable(true, "s"), "true");
  assert.equal(formatValue({ a: 1 }), '{"a":1}');
  assert.equal(formatValue("x".repeat(100)).length, 60);
  assert.ok(formatValue("x".repeat(100)).endsWith("…"));
});

test("a row's accessible label says the name, the value and the unit", () => {
  assert.equal(observableLabel("angle", { reported: true, value: -3.25 }, "deg"), "angle: -3.25 deg");
  assert.equal(observableLabel("period", { reported: true, value: null }, "s"), "period: no value");
  assert.equal(observableLabel("echo", { reported: false, value: undefined }, undefined), "echo: not reported");
  assert.equal(observableLabel("status", { reported: true, value: "flying" }, undefined), "status: flying");
});

test("samples older than the window are pruned; the array is kept when none is", () => {
  const samples = [{ t: 0, v: 1 }, { t: 10_000, v: 2 }, { t: 20_000, v: 3 }];
  assert.equal(pruneSamples(samples, 25_000), samples);
  assert.deepEqual(pruneSamples(samples, 35_000), samples.slice(1));
  assert.deepEqual(pruneSamples(samples, 100_000), []);
  assert.deepEqual(pruneSamples(samples, 21_000, 5_000), [{ t: 20_000, v: 3 }]);
  assert.equal(samples.length, 3); // never modified
});

test("adding a sample keeps at most one per slot and at most the window's worth", () => {
  let samples = [];
  for (let t = 0; t < 2 * OBSERVABLE_WINDOW_MS; t += 10) samples = addSample(samples, { t, v: t }); // 100 reports a second
  assert.ok(samples.length <= OBSERVABLE_WINDOW_MS / SAMPLE_SLOT_MS + 1, `${samples.length} samples`);
  assert.ok(samples[0].t >= OBSERVABLE_WINDOW_MS - 10);
  assert.deepEqual(samples.at(-1), { t: 2 * OBSERVABLE_WINDOW_MS - 10, v: 2 * OBSERVABLE_WINDOW_MS - 10 }); // the latest wins its slot
  const before = [{ t: 0, v: 1 }];
  const after = addSample(before, { t: 150, v: 2 });
  assert.deepEqual(after, [{ t: 0, v: 1 }, { t: 150, v: 2 }]);
  assert.deepEqual(before, [{ t: 0, v: 1 }]); // a new array
});

/** @param {string} points */
const parsePoints = (points) => points.split(" ").map((p) => p.split(",").map(Number));

test("a sparkline runs from its oldest sample to now and fills the height with the values' range", () => {
  const now = 60_000;
  const samples = [{ t: now - 30_000, v: -10 }, { t: now - 15_000, v: 0 }, { t: now, v: 10 }];
  const points = parsePoints(sparklinePoints(samples, { now }));
  assert.equal(points.length, 3);
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  assert.ok(xs[0] >= 0 && xs[0] < 2, `${xs}`); // the window's start, left
  assert.ok(Math.abs(xs[1] - SPARKLINE_WIDTH / 2) < 0.1, `${xs}`);
  assert.ok(xs[2] <= SPARKLINE_WIDTH && xs[2] > SPARKLINE_WIDTH - 2, `${xs}`); // now, right
  assert.ok(ys[0] > ys[1] && ys[1] > ys[2], `${ys}`); // larger values higher up
  assert.ok(ys[0] <= SPARKLINE_HEIGHT && ys[2] >= 0);
  assert.equal(ys[1], SPARKLINE_HEIGHT / 2);
});

test("a history shorter than the window fills the width; a longer one shows the window's end", () => {
  const young = parsePoints(sparklinePoints([{ t: 1000, v: 1 }, { t: 2000, v: 2 }, { t: 3000, v: 3 }], { now: 3000 }));
  assert.ok(young[0][0] < 2 && Math.abs(young[1][0] - SPARKLINE_WIDTH / 2) < 0.1 && young[2][0] > SPARKLINE_WIDTH - 2, `${young}`);
  const old = [];
  for (let t = 0; t <= 60_000; t += 1000) old.push({ t, v: t });
  const points = parsePoints(sparklinePoints(old, { now: 60_000 }));
  assert.equal(points.length, 31); // 30 s to 60 s, ends included
  assert.ok(points[0][0] < 2 && points[30][0] > SPARKLINE_WIDTH - 2, `${points}`);
});

test("a constant value is a line across the middle; fewer than two samples draw nothing", () => {
  const flat = parsePoints(sparklinePoints([{ t: 0, v: 5 }, { t: 1000, v: 5 }], { now: 1000 }));
  assert.deepEqual(flat.map(([, y]) => y), [SPARKLINE_HEIGHT / 2, SPARKLINE_HEIGHT / 2]);
  assert.equal(sparklinePoints([{ t: 0, v: 5 }], { now: 0 }), "");
  assert.equal(sparklinePoints([], { now: 0 }), "");
  assert.equal(sparklinePoints([{ t: 0, v: 1 }, { t: 10, v: 2 }], { now: 60_000 }), ""); // both too old
  const small = parsePoints(sparklinePoints([{ t: 0, v: 1 }, { t: 10, v: 2 }], { now: 10, width: 20, height: 10, windowMs: 10 }));
  assert.ok(small.every(([x, y]) => x >= 0 && x <= 20 && y >= 0 && y <= 10), `${small}`);
});

test("a snapshot goes to the page without values and its picture comes back checked (1.8)", () => {
  const { relay, toKernel, toTarget } = setup();
  fromTarget(relay, { type: "ready" });
  const png = "iVBORw0KGgo=";
  relay.fromKernel({ kind: "request", id: "p1", op: "snapshot", payload: {} });
  const asked = toTarget.at(-1);
  assert.deepEqual([asked.type, asked.id, asked.payload], ["snapshot", "p1", undefined]);
  fromTarget(relay, { type: "state", id: "p1", payload: { x: 1 }, picture: { png, width: 4, height: 3, extra: 1 } });
  assert.deepEqual(toKernel.at(-1), {
    kind: "reply",
    id: "p1",
    view_id: "v1",
    ok: true,
    state: { x: 1 },
    picture: { png, width: 4, height: 3 },
  });
  // a picture that is no picture answers target_error, saying what is wrong
  for (const [id, picture, words] of [
    ["p2", undefined, "not an object"],
    ["p3", { png: "not base64!", width: 4, height: 3 }, "not base64"],
    ["p4", { png, width: 4000, height: 3 }, "1 to 1024"],
    ["p5", { png: "A".repeat(699053), width: 4, height: 3 }, "more than 524288 bytes"],
  ]) {
    relay.fromKernel({ kind: "request", id, op: "snapshot", payload: {} });
    fromTarget(relay, { type: "state", id, payload: {}, picture });
    const reply = toKernel.at(-1);
    assert.equal(reply.id, id);
    assert.equal(reply.error.code, "target_error");
    assert.match(reply.error.message, new RegExp(words));
  }
  // a state answer to an apply never carries a picture, whatever the page adds
  relay.fromKernel(req("r9"));
  fromTarget(relay, { type: "state", id: "r9", payload: {}, picture: { png, width: 4, height: 3 } });
  assert.equal("picture" in toKernel.at(-1), false);
});

test("a picture too big to go beside the state goes without it (an empty state)", () => {
  const { relay, toKernel } = setup();
  fromTarget(relay, { type: "ready" });
  relay.fromKernel({ kind: "request", id: "p1", op: "snapshot", payload: {} });
  const big = { blob: "x".repeat(600_000) };
  fromTarget(relay, { type: "state", id: "p1", payload: big, picture: { png: "A".repeat(600_000), width: 4, height: 3 } });
  assert.deepEqual(toKernel.at(-1).state, {});
  assert.equal(toKernel.at(-1).picture.width, 4);
});

test("a picture is not a call answered: a page that reloads after each one stays under the brief-leave rule", () => {
  const { relay } = setup();
  fromTarget(relay, { type: "ready" });
  relay.fromKernel({ kind: "request", id: "view-picture-v1-1", op: "snapshot", payload: {} });
  fromTarget(relay, { type: "state", id: "view-picture-v1-1", payload: {}, picture: { png: "iVBORw0KGgo=", width: 4, height: 3 } });
  assert.equal(relay.answered, false);
  relay.fromKernel({ kind: "request", id: "p2", op: "snapshot", payload: {} });
  fromTarget(relay, { type: "error", id: "p2", error: { code: "target_error", message: "no canvas" } });
  assert.equal(relay.answered, false);
  relay.fromKernel(req("r3"));
  fromTarget(relay, { type: "state", id: "r3", payload: {} });
  assert.equal(relay.answered, true);
});

test("a bound page's news of values it did not take goes to the kernel at once, ahead of later replies", () => {
  const { relay, toKernel } = setup();
  fromTarget(relay, { type: "ready", load: "a" }); // the catch-up apply: values without an id
  relay.fromKernel(req("r1"));
  const refused = { "board.occupied": { asked: 90, held: 80 } };
  fromTarget(relay, { type: "state", payload: { x: 1, [REFUSED_KEY]: refused } }); // the catch-up's answer
  fromTarget(relay, { type: "state", id: "r1", payload: { x: 2 } });
  const order = toKernel.filter((m) => m.kind === "reply" || m.type === "state").map((m) => (m.kind === "reply" ? m.id : m.payload));
  assert.deepEqual(order, [{ x: 1, [REFUSED_KEY]: refused }, "r1"]);
});

test("a later state never drops a bound page's news before it reached the kernel, nor lets it pass the pace", async () => {
  const { relay, toKernel } = setup();
  fromTarget(relay, { type: "ready", load: "a" });
  const refused = { "board.occupied": { asked: 90, held: 80 } };
  const states = () => toKernel.filter((m) => m.kind === "event" && m.type === "state");
  fromTarget(relay, { type: "state", payload: { x: 0, [REFUSED_KEY]: refused } }); // answers the catch-up: at once
  assert.equal(states().length, 1);
  // news the page makes up on its own (no values were sent without an id since) waits its turn
  fromTarget(relay, { type: "state", payload: { x: 1, [REFUSED_KEY]: refused } });
  fromTarget(relay, { type: "state", payload: { x: 2 } }); // the page's own report, within the interval
  fromTarget(relay, { type: "state", payload: { x: 3 } });
  assert.equal(states().length, 1);
  for (const until = Date.now() + 5000; states().length < 2 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(states()[1].payload, { x: 3, [REFUSED_KEY]: refused }); // the latest, with the news
  fromTarget(relay, { type: "state", payload: { x: 4 } });
  for (const until = Date.now() + 5000; states().length < 3 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(states()[2].payload, { x: 4 }); // once
});
