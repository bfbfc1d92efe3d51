// Random messages (seeded, reproducible) thrown at the view's relay and at the target API:
// nothing throws, nothing forged reaches the kernel or the target's handlers, memory stays bounded.
import assert from "node:assert/strict";
import { test } from "node:test";

import { installTargetApi } from "../page/target_api.js";
import { Relay } from "../host/relay.js";

/** A small seeded PRNG (mulberry32), so a failure can be replayed from its seed. */
function rng(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomValue(r, depth = 0) {
  const pick = Math.floor(r() * (depth > 3 ? 7 : 10));
  switch (pick) {
    case 0: return null;
    case 1: return r() < 0.5;
    case 2: return (r() - 0.5) * 1e12;
    case 3: return [NaN, Infinity, -Infinity, -0][Math.floor(r() * 4)];
    case 4: return "x".repeat(Math.floor(r() * 50));
    case 5: return ["ready", "state", "error", "apply", "reset", "splitbrain-target", "splitbrain-parent"][Math.floor(r() * 7)];
    case 6: return undefined;
    case 7: return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    default: {
      const o = {};
      for (const k of ["source", "nonce", "type", "id", "payload", "error", "kind", "op"]) if (r() < 0.5) o[k] = randomValue(r, depth + 1);
      return o;
    }
  }
}

test("the relay survives 20,000 random target messages and forwards nothing forged", () => {
  for (const seed of [1, 2, 3, 4]) {
    const r = rng(seed);
    const toKernel = [];
    const relay = new Relay({ viewId: "v", sendToKernel: (m) => toKernel.push(m), postToTarget: () => {}, currentValues: () => ({}) });
    for (let i = 0; i < 5000; i++) {
      const msg = randomValue(r);
      if (msg && typeof msg === "object" && r() < 0.3) msg.nonce = relay.nonce; // sometimes the right nonce...
      relay.fromTarget(msg, r() < 0.5); // ...from our frame or not
    }
    // Only well-formed messages (our nonce, from our frame) may become events; replies need an outstanding id.
    assert.ok(toKernel.every((m) => m.kind === "event" && ["ready", "error", "state"].includes(m.type)));
    assert.equal(toKernel.filter((m) => m.kind === "reply").length, 0, `seed ${seed}: a reply for a request never made`);
    assert.equal(relay.outstanding.size, 0);
    relay.dispose();
  }
});

test("the relay survives random kernel messages and keeps its queue bounded to real requests", () => {
  const r = rng(7);
  const relay = new Relay({ viewId: "v", sendToKernel: () => {}, postToTarget: () => {}, currentValues: () => ({}) });
  for (let i = 0; i < 20000; i++) relay.fromKernel(randomValue(r));
  assert.equal(relay.queue.length, 0); // random junk is never a valid request
  for (let i = 0; i < 30000; i++) relay.fromKernel({ kind: "request", id: `r${i}`, op: "apply", payload: { values: {} } });
  assert.equal(relay.queue.length, 30000);
  assert.ok(relay.seen.size <= 20000, "the seen-id set is bounded");
});

test("the target API survives random parent messages; handlers see only well-formed ones", () => {
  const r = rng(11);
  const listeners = [];
  const parent = { postMessage: () => {} };
  const win = { name: "n".repeat(32), parent, addEventListener: (t, l) => t === "message" && listeners.push(l) };
  const api = installTargetApi(win);
  let applied = 0;
  api.onApply((values) => {
    assert.equal(typeof values, "object");
    applied += 1;
  });
  api.ready();
  for (let i = 0; i < 20000; i++) {
    const data = randomValue(r);
    if (data && typeof data === "object" && r() < 0.3) data.nonce = win.name;
    for (const l of listeners) l({ source: r() < 0.5 ? parent : {}, origin: "null", data });
  }
  assert.ok(applied < 20000);
});
