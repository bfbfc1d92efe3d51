// Specification of js/page/clock.js, the virtual clock of headless target pages.
//
// The first groups drive the clock itself (VirtualClock: timers, frames, dates, random numbers);
// then installClock on a fake framed window (a listener list that honours
// stopImmediatePropagation, a recording parent), driven by advance messages as the host sends
// them; the last group runs the built IIFE from splitbrain_widget/static/ in a vm context.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import vm from "node:vm";

import {
  CALLBACKS_PER_TASK,
  EPOCH_MS,
  FRAME_MS,
  MAX_CALLBACKS_PER_ADVANCE,
  TASK_SLICE_MS,
  VirtualClock,
  WARM_UP_MS,
  advanceRequest,
  installClock,
  seededRandom,
  virtualDate,
} from "../page/clock.js";
import { PARENT_SOURCE, TARGET_SOURCE } from "../protocol.js";

const NONCE = "0123456789abcdef0123456789abcdef";
const bundlePath = new URL("../../splitbrain_widget/static/clock.js", import.meta.url);

describe("timers", () => {
  test("time stands still until advanced; timeouts run in due order, ties in insertion order", () => {
    const clock = new VirtualClock();
    const log = [];
    clock.addTimer(() => log.push("b"), 20, [], false);
    clock.addTimer(() => log.push("a"), 10, [], false);
    clock.addTimer(() => log.push("c"), 20, [], false);
    clock.addTimer((x, y) => log.push(`args ${x} ${y}`), 5, [1, 2], false);
    assert.equal(clock.now, 0);
    assert.deepEqual(clock.advanceSync(9), { callbacks: 1, capped: false });
    assert.deepEqual(log, ["args 1 2"]);
    assert.equal(clock.now, 9);
    clock.advanceSync(11);
    assert.deepEqual(log, ["args 1 2", "a", "b", "c"]);
    assert.equal(clock.now, 20);
  });

  test("a callback sees its own due time as now", () => {
    const clock = new VirtualClock();
    const seen = [];
    clock.addTimer(() => seen.push(clock.now), 250, [], false);
    clock.advanceSync(1000);
    assert.deepEqual(seen, [250]);
    assert.equal(clock.now, 1000);
  });

  test("intervals repeat from when they ran; clearing works from inside and outside", () => {
    const clock = new VirtualClock();
    const times = [];
    const id = clock.addTimer(() => {
      times.push(clock.now);
      if (times.length === 3) clock.clearTimer(id);
    }, 100, [], true);
    clock.advanceSync(1000);
    assert.deepEqual(times, [100, 200, 300]);
    const other = clock.addTimer(() => times.push("never"), 10, [], true);
    clock.clearTimer(other);
    clock.advanceSync(100);
    assert.equal(times.length, 3);
  });

  test("timeouts and intervals share one id space (clearTimeout clears an interval)", () => {
    const clock = new VirtualClock();
    const a = clock.addTimer(() => {}, 10, [], false);
    const b = clock.addTimer(() => assert.fail("cleared"), 10, [], true);
    assert.notEqual(a, b);
    clock.clearTimer(b);
    clock.advanceSync(100);
  });

  test("nested zero-delay timers are clamped to 4 ms past nesting level 5, as in browsers", () => {
    const clock = new VirtualClock();
    const times = [];
    const again = () => {
      times.push(clock.now);
      if (times.length < 8) clock.addTimer(again, 0, [], false);
    };
    clock.addTimer(again, 0, [], false);
    clock.advanceSync(100);
    assert.deepEqual(times, [0, 0, 0, 0, 0, 4, 8, 12]);
  });

  test("setInterval(fn, 0) cannot hold time: it runs every 4 ms after the first repeats", () => {
    const clock = new VirtualClock();
    let n = 0;
    clock.addTimer(() => (n += 1), 0, [], true);
    const { callbacks, capped } = clock.advanceSync(1000);
    assert.equal(capped, false);
    assert.ok(n > 240 && n < 260, `${n} runs`);
    assert.equal(callbacks, n);
  });

  test("bad delays: negative and NaN mean 0, overflowing ones 1 ms; non-function handlers never run", () => {
    const clock = new VirtualClock();
    const times = [];
    clock.addTimer(() => times.push(["neg", clock.now]), -5, [], false);
    clock.addTimer(() => times.push(["nan", clock.now]), "soon", [], false);
    clock.addTimer(() => times.push(["huge", clock.now]), 2 ** 32, [], false);
    const id = clock.addTimer("alert(1)", 0, [], false);
    assert.equal(typeof id, "number");
    clock.advanceSync(10);
    assert.deepEqual(times, [["neg", 0], ["nan", 0], ["huge", 1]]);
  });

  test("a throwing callback is reported and the others still run", () => {
    const errors = [];
    const clock = new VirtualClock({ onError: (err) => errors.push(String(err)) });
    const log = [];
    clock.addTimer(() => {
      throw new Error("boom");
    }, 1, [], false);
    clock.addTimer(() => log.push("after"), 2, [], false);
    clock.advanceSync(5);
    assert.deepEqual(errors, ["Error: boom"]);
    assert.deepEqual(log, ["after"]);
  });

  test("the cap stops a runaway advance and says so; the rest runs in the next one", () => {
    const clock = new VirtualClock();
    let n = 0;
    for (let i = 0; i < 100; i += 1) clock.addTimer(() => (n += 1), 1, [], true);
    const first = clock.advanceSync(1000, 5000);
    assert.deepEqual(first, { callbacks: 5000, capped: true });
    assert.equal(clock.now, 1000, "time moved on anyway");
    const second = clock.advanceSync(0, 1_000_000);
    assert.ok(second.callbacks > 0, "the overdue ones ran first");
    assert.equal(typeof MAX_CALLBACKS_PER_ADVANCE, "number");
  });
});

describe("animation frames", () => {
  test("frames come every 1000/60 ms of virtual time, with that time as their timestamp", () => {
    const clock = new VirtualClock();
    const stamps = [];
    const tick = (/** @type {number} */ t) => {
      stamps.push(t);
      clock.requestFrame(tick);
    };
    clock.requestFrame(tick);
    clock.advanceSync(100);
    assert.equal(stamps.length, 7); // frames 0..6: 0, 16.7, ..., 100
    stamps.forEach((t, k) => assert.ok(Math.abs(t - k * FRAME_MS) < 1e-9, `frame ${k} at ${t}`));
    clock.advanceSync(1000);
    assert.equal(stamps.length, 67);
  });

  test("another frame rate keeps frames on exact multiples of 1000 / fps", () => {
    const clock = new VirtualClock({ fps: 10 });
    const stamps = [];
    const tick = (/** @type {number} */ t) => {
      stamps.push(t);
      clock.requestFrame(tick);
    };
    clock.requestFrame(tick);
    for (let i = 0; i < 10; i += 1) clock.advanceSync(1000);
    assert.equal(stamps.length, 101);
    assert.equal(stamps.at(-1), 10_000);
    assert.equal(new VirtualClock({ fps: -1 }).fps, 60, "a bad rate falls back to 60");
  });

  test("a callback requested inside a frame runs in the next one; cancel works for both", () => {
    const clock = new VirtualClock();
    const log = [];
    const a = clock.requestFrame(() => {
      log.push(["a", clock.now]);
      clock.requestFrame(() => log.push(["inner", clock.now]));
      clock.cancelFrame(b); // b is in this same frame: cancelled before it runs
    });
    const b = clock.requestFrame(() => log.push(["b", clock.now]));
    const c = clock.requestFrame(() => log.push(["c", clock.now]));
    clock.cancelFrame(c);
    assert.notEqual(a, b);
    clock.advanceSync(20);
    assert.deepEqual(log, [["a", 0], ["inner", FRAME_MS]]);
  });

  test("timers and frames interleave in time order", () => {
    const clock = new VirtualClock();
    const log = [];
    clock.advanceSync(5);
    clock.requestFrame((t) => log.push(`frame ${t.toFixed(1)}`));
    clock.addTimer(() => log.push(`timer ${clock.now}`), 10, [], false);
    clock.addTimer(() => log.push(`timer ${clock.now}`), 12, [], false);
    clock.advanceSync(50);
    assert.deepEqual(log, ["timer 15", "frame 16.7", "timer 17"]);
  });
});

describe("dates and random numbers", () => {
  test("Date.now and new Date() read the virtual clock from a fixed epoch; other forms are real", () => {
    const clock = new VirtualClock();
    const VDate = virtualDate(class extends Date {}, () => clock.dateNow());
    assert.equal(VDate.now(), EPOCH_MS);
    clock.advanceSync(1500.7);
    assert.equal(VDate.now(), EPOCH_MS + 1500);
    assert.equal(new VDate().getTime(), EPOCH_MS + 1500);
    assert.equal(new VDate(0).getTime(), 0);
    assert.equal(new VDate(2020, 0, 2).getFullYear(), 2020);
    assert.equal(VDate.UTC(2026, 0, 1), EPOCH_MS);
    assert.ok(new VDate() instanceof Date);
    assert.equal(typeof VDate(), "string");
    assert.equal(new VDate().constructor, VDate);
  });

  test("seeded random: the same seed gives the same numbers in [0, 1), another seed others", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const xs = Array.from({ length: 1000 }, () => a());
    assert.deepEqual(xs, Array.from({ length: 1000 }, () => b()));
    assert.notDeepEqual(xs.slice(0, 10), Array.from({ length: 10 }, () => c()));
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
  });
});

describe("advance messages", () => {
  test("accepted only with the parent source, this nonce and a sane ms", () => {
    const ok = { source: PARENT_SOURCE, nonce: NONCE, type: "advance", payload: { ms: 250 } };
    assert.deepEqual(advanceRequest(ok, NONCE), { ms: 250, more: false, token: "" });
    assert.equal(advanceRequest({ ...ok, nonce: "f".repeat(32) }, NONCE), null);
    assert.equal(advanceRequest({ ...ok, nonce: "" }, ""), null);
    assert.equal(advanceRequest({ ...ok, source: TARGET_SOURCE }, NONCE), null);
    assert.equal(advanceRequest({ ...ok, type: "apply" }, NONCE), null);
    for (const ms of [-1, Number.NaN, Infinity, "5", null, 1e12]) {
      assert.equal(advanceRequest({ ...ok, payload: { ms } }, NONCE), null, `ms ${ms}`);
    }
    assert.equal(advanceRequest({ ...ok, payload: undefined }, NONCE), null);
    assert.equal(advanceRequest(null, NONCE), null);
    assert.equal(advanceRequest([ok], NONCE), null);
  });

  test("`more` is true only when it is exactly true; a token is a short string or none", () => {
    const ok = { source: PARENT_SOURCE, nonce: NONCE, type: "advance", payload: { ms: 5, more: true, token: "c7" } };
    assert.deepEqual(advanceRequest(ok, NONCE), { ms: 5, more: true, token: "c7" });
    for (const more of [1, "true", false, null]) {
      assert.equal(advanceRequest({ ...ok, payload: { ms: 5, more } }, NONCE)?.more, false, `more ${more}`);
    }
    for (const token of [7, null, { t: 1 }, "x".repeat(65)]) {
      assert.equal(advanceRequest({ ...ok, payload: { ms: 5, token } }, NONCE)?.token, "", `token ${token}`);
    }
  });
});

describe("unseen frames", () => {
  test("every frame but the last one of an advance is unseen; between advances none is", () => {
    const clock = new VirtualClock();
    const log = [];
    const tick = (/** @type {number} */ t) => {
      log.push([Math.round(t), clock.unseen]);
      clock.requestFrame(tick);
    };
    clock.requestFrame(tick);
    assert.equal(clock.unseen, false);
    clock.advanceSync(50); // frames at 0, 16.7, 33.3, 50
    assert.deepEqual(log, [[0, true], [17, true], [33, true], [50, false]]);
    assert.equal(clock.unseen, false);
    clock.advanceSync(10); // no frame until 66.7: nothing runs
    clock.advanceSync(10); // the frame at 66.7 is the last of this one
    assert.deepEqual(log.slice(4), [[67, false]]);
  });

  test("a timer sees whether a frame of its advance is still to come", () => {
    const clock = new VirtualClock();
    const seen = [];
    clock.requestFrame(() => {});
    clock.addTimer(() => seen.push(["before the frame at 16.7", clock.unseen]), 10, [], false);
    clock.addTimer(() => seen.push(["after it", clock.unseen]), 20, [], false);
    clock.advanceSync(30);
    assert.deepEqual(seen, [["before the frame at 16.7", true], ["after it", false]]);
  });
});

/**
 * A MessageChannel as Chromium dispatches it: the listeners of one message in order, with promise
 * jobs drained after each one (a microtask checkpoint per listener of a native event). Node runs a
 * port's listeners back to back, so here each one gets a macrotask of its own.
 */
class CheckpointChannel {
  constructor() {
    /** @type {(() => void)[]} */
    const listeners = [];
    /** @type {(() => void)[]} one job per listener call, oldest first */
    const jobs = [];
    let running = false;
    const next = () => {
      const job = jobs.shift();
      if (!job) {
        running = false;
        return;
      }
      job();
      setImmediate(next);
    };
    this.messages = 0;
    this.port1 = {
      addEventListener: (/** @type {string} */ type, /** @type {() => void} */ fn) => {
        if (type === "message") listeners.push(fn);
      },
      start() {},
    };
    this.port2 = {
      postMessage: () => {
        this.messages += 1;
        jobs.push(...listeners);
        if (!running) {
          running = true;
          setImmediate(next);
        }
      },
    };
    channels.push(this);
  }
}
/** @type {CheckpointChannel[]} every channel made, newest last (tests count their messages) */
const channels = [];

/** A MessageEvent stand-in that records whether propagation was stopped. */
class FakeMessageEvent {
  /**
   * @param {string} type
   * @param {{data: unknown, origin?: string, source?: unknown}} init
   */
  constructor(type, init) {
    this.type = type;
    this.data = init.data;
    this.origin = init.origin ?? "";
    this.source = init.source ?? null;
    this.stopped = false;
  }

  stopImmediatePropagation() {
    this.stopped = true;
  }
}

/** A fake framed window: listeners in the order added (as Chromium runs them on window). */
function makeWindow() {
  const posted = [];
  const parent = { postMessage: (message, targetOrigin) => posted.push({ message: structuredClone(message), targetOrigin }) };
  /** @type {((event: any) => void)[]} */
  const listeners = [];
  /** @type {Map<string, (() => void)[]>} listeners of other events ("load") */
  const others = new Map();
  /** @type {any} */
  const win = {
    name: NONCE,
    parent,
    Date,
    performance: { now: () => 0 },
    Math: { random: Math.random },
    MessageChannel: CheckpointChannel,
    MessageEvent: FakeMessageEvent,
    addEventListener(type, listener) {
      if (type === "message") listeners.push(listener);
      else others.set(type, [...(others.get(type) ?? []), listener]);
    },
    dispatchEvent(event) {
      for (const listener of listeners) {
        if (event.stopped) break;
        listener(event);
      }
      return true;
    },
    reportError: () => {},
  };
  /**
   * @param {unknown} data
   * @param {unknown} [source]
   */
  const deliver = (data, source = parent) => win.dispatchEvent(new FakeMessageEvent("message", { data, origin: "null", source }));
  const advance = (ms, nonce = NONCE) => deliver({ source: PARENT_SOURCE, nonce, type: "advance", payload: { ms } });
  /** @param {string} type */
  const fire = (type) => {
    for (const listener of others.get(type) ?? []) listener();
  };
  return { win, parent, posted, deliver, advance, fire };
}

/** @param {() => boolean} predicate */
async function until(predicate, ms = 20_000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("installClock on a window", () => {
  test("with warmUp, until the page is ready time runs a frame per task from its load event, to the callback that made it ready", async () => {
    const { win, fire } = makeWindow();
    const clock = installClock(win, { warmUp: true });
    let isReady = false;
    win.SplitBrain = { get isReady() { return isReady; } };
    win.setTimeout(() => { isReady = true; }, 250); // a page that gets ready in a timer of its own
    assert.equal(clock.now, 0);
    fire("load");
    await until(() => isReady);
    await new Promise((resolve) => setTimeout(resolve, 50)); // a warm-up frame would run by now
    assert.equal(clock.now, 250);
  });

  test("without warmUp nothing runs before the first advance, ready or not", async () => {
    const { win, fire } = makeWindow();
    const clock = installClock(win);
    let ran = 0;
    win.setTimeout(() => (ran += 1), 10);
    win.SplitBrain = { isReady: false };
    fire("load");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual([clock.now, ran], [0, 0]);
  });

  test("a page ready by its load event never runs ahead; one that never gets ready stops at WARM_UP_MS", async () => {
    const ready = makeWindow();
    const clock = installClock(ready.win, { warmUp: true });
    let frames = 0;
    ready.win.requestAnimationFrame(() => (frames += 1));
    ready.win.SplitBrain = { isReady: false };
    ready.win.addEventListener("load", () => (ready.win.SplitBrain = { isReady: true }));
    ready.fire("load");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual([clock.now, frames], [0, 0]);

    const never = makeWindow();
    const stuck = installClock(never.win, { warmUp: true });
    never.fire("load");
    await until(() => stuck.now >= WARM_UP_MS);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(stuck.now < WARM_UP_MS + FRAME_MS, `${stuck.now}`);
  });

  test("replaces the time sources; Math.random is seeded now or when asked", () => {
    const { win } = makeWindow();
    const realRandom = win.Math.random;
    const clock = installClock(win, { seed: 5, laterRandom: true });
    assert.equal(win.__splitbrainClock, clock);
    assert.equal(installClock(win), clock, "a second install is the first clock");
    assert.equal(win.Math.random, realRandom, "kept until seeded");
    clock.seedRandom(win.Math);
    const expected = seededRandom(5);
    assert.deepEqual([win.Math.random(), win.Math.random()], [expected(), expected()]);
    assert.equal(win.performance.now(), 0);
    assert.equal(win.Date.now(), EPOCH_MS);
    let ran = false;
    win.setTimeout(() => (ran = true), 0);
    assert.equal(ran, false, "time stands still");
  });

  test("an advance runs the page's timers and frames, then delivers what followed it, in order", async () => {
    const { win, deliver, advance } = makeWindow();
    installClock(win);
    let frames = 0;
    const tick = () => {
      frames += 1;
      win.requestAnimationFrame(tick);
    };
    win.requestAnimationFrame(tick);
    const seen = [];
    // the target API's listener comes after the clock's, as in a page
    win.addEventListener("message", (event) => seen.push([event.data.type, win.performance.now(), frames]));
    advance(500);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s1" });
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "apply", id: "a1", payload: {} });
    assert.deepEqual(seen.map((s) => s[0]), ["advance"], "the later messages wait");
    await until(() => seen.length === 3);
    assert.deepEqual(seen.slice(1), [
      ["state", 500, 31],
      ["apply", 500, 31],
    ]);
  });

  test("promise jobs run between callbacks: an async loop with awaited timeouts keeps up", async () => {
    const { win, deliver, advance } = makeWindow();
    installClock(win);
    let laps = 0;
    const sleep = (ms) => new Promise((resolve) => win.setTimeout(resolve, ms));
    void (async () => {
      for (;;) {
        await sleep(100);
        laps += 1;
      }
    })();
    let answered = -1;
    win.addEventListener("message", (event) => {
      if (event.data.type === "state") answered = laps;
    });
    advance(1000);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s" });
    await until(() => answered >= 0);
    assert.equal(answered, 10);
  });

  test("promise chains of any depth finish before the next callback, many callbacks to a task", async () => {
    const { win, deliver, advance } = makeWindow();
    installClock(win);
    const log = [];
    let frames = 0;
    const tick = () => {
      frames += 1;
      const frame = frames;
      void (async () => {
        for (let i = 0; i < 50; i += 1) await null;
        log.push(`chain ${frame}`);
      })();
      log.push(`frame ${frame}`);
      if (frames < 200) win.requestAnimationFrame(tick);
    };
    win.requestAnimationFrame(tick);
    let answered = false;
    win.addEventListener("message", (event) => {
      if (event.data.type === "state") answered = true;
    });
    const before = channels.at(-1)?.messages ?? 0;
    advance(10_000);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s" });
    await until(() => answered);
    assert.equal(frames, 200);
    assert.deepEqual(log, Array.from({ length: 200 }, (_, k) => [`frame ${k + 1}`, `chain ${k + 1}`]).flat());
    const messages = (channels.at(-1)?.messages ?? 0) - before;
    assert.ok(messages <= Math.ceil(200 / CALLBACKS_PER_TASK) + 1, `${messages} driver messages for 200 frames`);
  });

  test("a task stops running callbacks once TASK_SLICE_MS of real time have passed", async () => {
    const { win, deliver, advance } = makeWindow();
    let real = 0;
    win.performance = { now: () => (real += TASK_SLICE_MS * 0.8) }; // each reading: 0.8 slices later
    installClock(win);
    let frames = 0;
    const tick = () => {
      frames += 1;
      if (frames < 20) win.requestAnimationFrame(tick);
    };
    win.requestAnimationFrame(tick);
    let answered = false;
    win.addEventListener("message", (event) => {
      if (event.data.type === "state") answered = true;
    });
    const before = channels.at(-1)?.messages ?? 0;
    advance(1000);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s" });
    await until(() => answered);
    assert.equal(frames, 20);
    const messages = (channels.at(-1)?.messages ?? 0) - before;
    assert.ok(messages >= 9, `${messages} driver messages for 20 frames of 0.8 slices each`);
  });

  test("`unseen` holds over advances announced with `more`, to the last frame of the last one", async () => {
    const { win, deliver } = makeWindow();
    const clock = installClock(win);
    const unseen = [];
    const tick = () => {
      unseen.push(clock.unseen);
      win.requestAnimationFrame(tick);
    };
    win.requestAnimationFrame(tick);
    let answers = 0;
    win.addEventListener("message", (event) => {
      if (event.data.type === "state") answers += 1;
    });
    for (const more of [true, false]) {
      deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "advance", payload: { ms: 100, more } });
      deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: `s${answers}` });
    }
    await until(() => answers === 2);
    assert.equal(unseen.length, 13); // frames 0..12: 0, 16.7, ..., 200
    assert.deepEqual(unseen, [...Array(12).fill(true), false]);
    assert.equal(clock.unseen, false);
  });

  test("an advance that waited behind another starts after the promise jobs of what came before it", async () => {
    const { win, deliver } = makeWindow();
    installClock(win);
    const log = [];
    win.requestAnimationFrame(() => {}); // the first advance has a callback: what follows waits behind it
    win.setTimeout(() => log.push(`timer at ${win.performance.now()}`), 150);
    // a target-API-like listener: answers a state request in a promise job
    win.addEventListener("message", (event) => {
      if (event.data.type === "state") void Promise.resolve().then(() => log.push(`state at ${win.performance.now()}`));
    });
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "advance", payload: { ms: 100, more: true } });
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s1" });
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "advance", payload: { ms: 100 } });
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s2" });
    await until(() => log.length === 3);
    assert.deepEqual(log, ["state at 100", "timer at 150", "state at 200"]);
  });

  test("with a token the clock says it is done, before it delivers what waited", async () => {
    const { win, deliver, posted } = makeWindow();
    installClock(win);
    win.requestAnimationFrame(() => {});
    const order = [];
    win.addEventListener("message", (event) => {
      if (event.data.type === "state") order.push(`state after ${posted.length} posted`);
    });
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "advance", payload: { ms: 100, token: "c1" } });
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s" });
    await until(() => order.length === 1);
    assert.deepEqual(posted.map((p) => p.message), [{ source: TARGET_SOURCE, nonce: NONCE, type: "advanced", token: "c1" }]);
    assert.deepEqual(order, ["state after 1 posted"]);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "advance", payload: { ms: 100 } });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(posted.length, 1, "no token, no word");
  });

  test("advances queue behind each other; time adds up", async () => {
    const { win, deliver, advance } = makeWindow();
    installClock(win);
    const seen = [];
    win.addEventListener("message", (event) => seen.push([event.data.type, win.performance.now()]));
    advance(100);
    advance(200);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s" });
    await until(() => seen.length === 3);
    // nothing was due: each advance ended within its own message, before the later listener ran
    assert.deepEqual(seen, [["advance", 100], ["advance", 300], ["state", 300]]);
  });

  test("a halt ends the running advance where it is and drops the advances behind it, not the rest", async () => {
    const { win, deliver, advance } = makeWindow();
    installClock(win);
    const seen = [];
    let ticks = 0;
    win.setInterval(() => {
      ticks += 1;
    }, 1);
    win.addEventListener("message", (event) => seen.push([event.data.type, win.performance.now()]));
    advance(100_000); // long enough to be running (in slices) when the halt comes
    advance(5_000); // waiting behind it: dropped
    deliver({ source: PARENT_SOURCE, type: "state", id: "s" }); // waiting too: delivered
    deliver({ source: PARENT_SOURCE, type: "halt" });
    await until(() => seen.some(([type]) => type === "state"));
    const [, at] = /** @type {[string, number]} */ (seen.find(([type]) => type === "state"));
    assert.ok(at < 100_000, `the halted advance stopped where it was (at ${at} ms)`);
    assert.ok(!seen.some(([type, t]) => type === "advance" && t > 100_000), "the advance behind it never ran");
    const after = ticks;
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(ticks, after, "nothing runs on after the halt");
    assert.equal(win.performance.now(), at);
  });

  test("runUntil runs time on until the condition holds, holding the parent's messages meanwhile", async () => {
    const { win, deliver } = makeWindow();
    const clock = installClock(win);
    let height = 10;
    const fall = () => {
      height -= 1;
      if (height > 0) win.setTimeout(fall, 100);
    };
    win.setTimeout(fall, 100);
    const seen = [];
    win.addEventListener("message", (event) => seen.push([event.data.type, win.performance.now()]));
    const landed = clock.runUntil(() => height <= 0, 5_000);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s" }); // held until the wait ends
    assert.deepEqual(seen, []);
    assert.equal(await landed, true);
    assert.equal(win.performance.now(), 1_000, "time stops the moment the condition holds");
    await until(() => seen.length === 1);
    assert.deepEqual(seen, [["state", 1_000]]);
    // one that never holds ends at its time, false; and a throwing condition rejects
    assert.equal(await clock.runUntil(() => false, 250), false);
    assert.equal(win.performance.now(), 1_250);
    await assert.rejects(
      clock.runUntil(() => {
        throw new Error("no such ball");
      }, 250),
      { message: "no such ball" },
    );
  });

  test("a halt ends a runUntil at once, unmet", async () => {
    const { win, deliver } = makeWindow();
    const clock = installClock(win);
    win.setInterval(() => {}, 1);
    const waiting = clock.runUntil(() => false, 1_000_000);
    deliver({ source: PARENT_SOURCE, type: "halt" });
    assert.equal(await waiting, false);
    assert.ok(win.performance.now() < 1_000_000);
  });

  test("ignores advances from another window or with another nonce", async () => {
    const { win, deliver } = makeWindow();
    installClock(win);
    const sibling = { postMessage() {} };
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "advance", payload: { ms: 1000 } }, sibling);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "advance", payload: { ms: 1000 } }, win);
    deliver({ source: PARENT_SOURCE, nonce: "e".repeat(32), type: "advance", payload: { ms: 1000 } });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(win.performance.now(), 0);
    // The view sends no nonce (protocol 1.7): from the parent, one without is taken.
    deliver({ source: PARENT_SOURCE, type: "advance", payload: { ms: 1000 } });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(win.performance.now(), 1000);
  });

  test("messages from other windows are never held", () => {
    const { win, deliver, advance } = makeWindow();
    installClock(win);
    win.setInterval(() => {}, 1);
    const seen = [];
    win.addEventListener("message", (event) => seen.push(event.data));
    advance(1000);
    deliver("from a sibling", { postMessage() {} });
    assert.deepEqual(seen.slice(-1), ["from a sibling"]);
  });

  test("past its cap an advance ends, reports a target_error to the parent, and the next one works", async () => {
    const { win, deliver, advance, posted } = makeWindow();
    installClock(win, { maxCallbacks: 300 });
    let n = 0;
    for (let i = 0; i < 10; i += 1) win.setInterval(() => (n += 1), 0);
    let answeredAt = -1;
    win.addEventListener("message", (event) => {
      if (event.data.type === "state") answeredAt = win.performance.now();
    });
    advance(1000);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s" });
    await until(() => answeredAt >= 0);
    assert.equal(answeredAt, 1000);
    assert.equal(n, 300);
    const errors = posted.filter((p) => p.message.type === "error");
    assert.equal(errors.length, 1);
    assert.equal(errors[0].message.source, TARGET_SOURCE);
    assert.equal(errors[0].message.nonce, NONCE);
    assert.equal(errors[0].message.error.code, "target_error");
    assert.match(errors[0].message.error.message, /more than 300 .*callbacks/);
    answeredAt = -1;
    advance(10);
    deliver({ source: PARENT_SOURCE, nonce: NONCE, type: "state", id: "s2" });
    await until(() => answeredAt >= 0);
    assert.equal(answeredAt, 1010);
  });
});

describe("the built bundle (splitbrain_widget/static/clock.js)", () => {
  test("installs from its script element's data-seed and keeps Math.random until seeded", () => {
    const { win } = makeWindow();
    const context = vm.createContext({ window: win, document: { currentScript: { dataset: { seed: "7" } } }, console });
    win.Math = vm.runInContext("Math", context);
    win.Date = vm.runInContext("Date", context);
    const realRandom = win.Math.random;
    const before = new Set(Object.getOwnPropertyNames(context));
    vm.runInContext(readFileSync(bundlePath, "utf8"), context, { filename: "clock.js" });
    assert.deepEqual(Object.getOwnPropertyNames(context).filter((name) => !before.has(name)), [], "no globals");
    const clock = win.__splitbrainClock;
    assert.ok(clock);
    assert.equal(win.Math.random, realRandom);
    vm.runInContext("window.__splitbrainClock.seedRandom(Math)", context);
    const expected = seededRandom(7);
    assert.equal(vm.runInContext("Math.random()", context), expected());
    assert.equal(win.Date.now(), EPOCH_MS);
  });
});
