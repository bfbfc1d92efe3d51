// @ts-check
/**
 * clock.js: a virtual clock for target pages run headless. The registry injects it (bundled to an
 * IIFE) only into headless pages, before target_api.js and the page's own scripts.
 *
 * It replaces requestAnimationFrame / cancelAnimationFrame, setTimeout / setInterval /
 * clearTimeout / clearInterval, Date (the constructor and Date.now), performance.now and
 * Math.random (seeded, deterministic). Time stands still until the parent advances it:
 *
 *   {source: "splitbrain-parent", nonce, type: "advance", payload: {ms, more?, token?}}
 *
 * accepted with the target API's own checks (`event.source === window.parent`, the nonce from
 * `window.name`, the envelope validated by ../protocol.js). An advance runs the timers and the
 * animation frames (one every 1000/60 ms of virtual time) in time order up to now + ms, promise
 * jobs draining between any two callbacks as in a real browser (see CALLBACKS_PER_TASK). Until
 * it is done, the clock holds every later message from the parent and then delivers them in
 * order: a `state` request posted right behind an `advance` is answered with the advanced state.
 * `more: true` says that another advance follows at once (the host splits long ones): see
 * VirtualClock#unseen, the one thing a page may ask the clock. With a `token`, the clock says when
 * it is done, before it delivers what waited: `{source: "splitbrain-target", nonce, type:
 * "advanced", token}` (the relay ignores the type; the headless host reads it).
 *
 * Why before target_api.js: listeners on `window` run in the order they were added (capture or not),
 * and the clock's must come first to hold what follows an advance. Math.random alone is seeded
 * later, by a one-line script the registry puts after the target API: the target API draws its per-load id
 * from it, and that id must differ between loads (the relay tells a page that reloaded itself by it).
 */
import { errorText, isParentMessage, targetMessage } from "../protocol.js";

/** Animation frames per virtual second, as a 60 Hz display gives them. */
export const FPS = 60;
/** Virtual time between two animation frames (ms). */
export const FRAME_MS = 1000 / FPS;
/** Date.now() at virtual time 0: fixed, so that two pages given the same calls see the same dates. */
export const EPOCH_MS = Date.UTC(2026, 0, 1);
/**
 * Most callbacks (timers and animation frames) one advance runs. Past it the clock moves time on
 * to the end of the advance without the rest (they run first in the next one) and reports it:
 * a page rescheduling a timer at the same instant must not hold the advance forever.
 */
export const MAX_CALLBACKS_PER_ADVANCE = 100_000;
/** Longest single advance message (ms); the host splits longer advances. */
export const MAX_ADVANCE_MS = 86_400_000;
/**
 * Callbacks run per task. The driver is one MessagePort message with this many listeners, each
 * running the next due callback: Chromium performs a microtask checkpoint after every listener of
 * a natively dispatched event (as after every animation-frame callback of a real frame), so promise
 * jobs, however deep their chains, still run between any two callbacks. A task hop per callback
 * cost ~10-20 µs (scheduler.postTask, measured in a sandboxed frame), a listener ~1 µs.
 */
export const CALLBACKS_PER_TASK = 64;
/** Real ms after which a task runs no further callbacks (a page whose frames are slow still yields). */
export const TASK_SLICE_MS = 50;
/**
 * Most virtual ms the clock runs by itself before the page is ready, when installed with
 * `warmUp` (the registry asks for it for a bound page: one whose manifest's ready condition may
 * wait for the page's own timers, while the host sends no advance before ready). From the load
 * event until SplitBrain.ready(), time moves on one animation frame per task, and stops at the
 * callback that made the page ready (not at the end of its frame). A page ready by its load event
 * never runs ahead. Deterministic as long as the page gets ready on virtual time alone (a page
 * waiting for real-time work, a WebAssembly compile, would see a varying number of frames: hence
 * only for bound pages, whose binding layer checks the condition on the clock).
 */
export const WARM_UP_MS = 10_000;
/** Delays above this overflow in browsers (a 32-bit signed int) and are treated as 1 ms, as there. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * A wait the clock runs time for (`runUntil`): its condition, how it ended, and its promise's settlers.
 * @typedef {object} Wait
 * @property {() => boolean} holds
 * @property {(met: boolean) => void} resolve
 * @property {(err: unknown) => void} reject
 * @property {boolean} [met]
 * @property {unknown} [error]
 */

/**
 * Whether a wait's condition holds, false if it throws (looked at once more when its time is up).
 * @param {() => boolean} holds
 * @returns {boolean}
 */
function safeHolds(holds) {
  try {
    return holds();
  } catch {
    return false;
  }
}

/**
 * @typedef {object} Timer
 * @property {number} id
 * @property {number} due  virtual ms
 * @property {number} seq  insertion order, breaks ties of `due`
 * @property {Function} fn
 * @property {unknown[]} args
 * @property {number | null} interval  ms between repeats; null for a timeout
 * @property {number} nesting  the HTML timer nesting level
 */

/**
 * A deterministic generator in [0, 1): sfc32 seeded through splitmix32.
 * @param {number} seed  any number; its low 32 bits are used
 * @returns {() => number}
 */
export function seededRandom(seed) {
  let s = seed >>> 0;
  const split = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split();
  let b = split();
  let c = split();
  let d = split();
  return () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
}

/** A binary min-heap of timers by (due, seq). */
class TimerHeap {
  constructor() {
    /** @type {Timer[]} */
    this.items = [];
  }

  /**
   * @param {Timer} a
   * @param {Timer} b
   */
  static less(a, b) {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  /** @param {Timer} timer */
  push(timer) {
    const items = this.items;
    items.push(timer);
    let i = items.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!TimerHeap.less(items[i], items[up])) break;
      [items[i], items[up]] = [items[up], items[i]];
      i = up;
    }
  }

  /** @returns {Timer | undefined} */
  peek() {
    return this.items[0];
  }

  /** @returns {Timer | undefined} */
  pop() {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && TimerHeap.less(items[l], items[m])) m = l;
        if (r < items.length && TimerHeap.less(items[r], items[m])) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m], items[i]];
        i = m;
      }
    }
    return top;
  }
}

/**
 * The clock itself, without a window: timers, animation frames, dates and random numbers over a
 * virtual time that moves only in `runNext` / `advanceSync`. Tests drive it directly.
 */
export class VirtualClock {
  /**
   * @param {object} [opts]
   * @param {number} [opts.seed]  Math.random's seed
   * @param {number} [opts.epoch]  Date.now() at virtual time 0
   * @param {number} [opts.fps]  animation frames per virtual second (FPS)
   * @param {(err: unknown) => void} [opts.onError]  a callback threw (the page reports it)
   */
  constructor({ seed = 0, epoch = EPOCH_MS, fps = FPS, onError } = {}) {
    /** virtual ms since the page started: performance.now() */
    this.now = 0;
    this.epoch = epoch;
    this.random = seededRandom(seed);
    this.onError = onError ?? (() => {});
    this.heap = new TimerHeap();
    /** @type {Map<number, Timer>} live timers by id (a cleared one is gone from here) */
    this.timers = new Map();
    this.nextTimerId = 1;
    this.seq = 0;
    /** the nesting level of the timer callback running now (0 outside one) */
    this.nesting = 0;
    /** @type {Map<number, FrameRequestCallback>} callbacks for the next frame */
    this.frames = new Map();
    /** @type {Map<number, FrameRequestCallback>} callbacks of the frame being run */
    this.running = new Map();
    this.nextFrameId = 1;
    this.lastFrame = -1;
    /** frames per virtual second: frame k is at k * 1000 / fps ms, exactly for whole seconds */
    this.fps = Number.isFinite(fps) && fps > 0 && fps <= 1000 ? fps : FPS;
    /** where the running advance (and the ones announced to follow it) ends; -Infinity between advances */
    this.horizon = -Infinity;
    /**
     * Run time on until a condition holds (a bound action's wait step): set by `installClock`,
     * whose driver runs it.
     * @type {((holds: () => boolean, ms: number) => Promise<boolean>) | null}
     */
    this.runUntil = null;
  }

  /**
   * Whether a later animation frame of this same advance comes after the callback running now:
   * what a page draws now is then drawn over before the clock stops and anyone can look. A page
   * that redraws everything each frame may skip its drawing then (and only its drawing: the
   * frames, their times and everything else run as always). False between advances.
   * @returns {boolean}
   */
  get unseen() {
    return this.frameAt(this.nextFrame()) <= this.horizon;
  }

  /**
   * From now on `math.random` is this clock's seeded generator.
   * @param {{random: () => number}} math
   */
  seedRandom(math) {
    math.random = this.random;
  }

  /** Date.now() */
  dateNow() {
    return Math.floor(this.epoch + this.now);
  }

  /**
   * setTimeout / setInterval: the HTML rules for the delay (clamped to 4 ms past nesting level 5,
   * overflowing delays run at once), a shared id space. A non-function handler (a string, which
   * the pages' CSP would refuse to compile) never runs.
   * @param {unknown} fn
   * @param {unknown} delay
   * @param {unknown[]} args
   * @param {boolean} repeat
   * @returns {number}
   */
  addTimer(fn, delay, args, repeat) {
    const id = this.nextTimerId++;
    if (typeof fn !== "function") return id;
    let ms = Number(delay);
    if (!Number.isFinite(ms) || ms < 0 || ms > MAX_DELAY_MS) ms = ms > MAX_DELAY_MS ? 1 : 0;
    const nesting = this.nesting + 1;
    if (nesting > 5 && ms < 4) ms = 4;
    /** @type {Timer} */
    const timer = { id, due: this.now + ms, seq: this.seq++, fn, args, interval: repeat ? ms : null, nesting };
    this.timers.set(id, timer);
    this.heap.push(timer);
    return id;
  }

  /** @param {unknown} id */
  clearTimer(id) {
    if (typeof id === "number") this.timers.delete(id);
  }

  /**
   * @param {unknown} cb
   * @returns {number}
   */
  requestFrame(cb) {
    const id = this.nextFrameId++;
    if (typeof cb === "function") this.frames.set(id, /** @type {FrameRequestCallback} */ (cb));
    return id;
  }

  /** @param {unknown} id */
  cancelFrame(id) {
    if (typeof id !== "number") return;
    this.frames.delete(id);
    this.running.delete(id);
  }

  /** @returns {Timer | undefined} the next live timer (cleared ones are dropped on the way) */
  nextTimer() {
    for (let top = this.heap.peek(); top; top = this.heap.peek()) {
      if (this.timers.get(top.id) === top) return top;
      this.heap.pop();
    }
    return undefined;
  }

  /**
   * The virtual time of frame `k`.
   * @param {number} k
   */
  frameAt(k) {
    return (k * 1000) / this.fps;
  }

  /** The next frame's index: after the last one run, and not before now. */
  nextFrame() {
    return Math.max(this.lastFrame + 1, Math.ceil((this.now * this.fps) / 1000 - 1e-9));
  }

  /**
   * Run the next callback due at or before `until` (virtual ms), moving time to it.
   * @param {number} until
   * @returns {boolean} false when nothing is due by then
   */
  runNext(until) {
    const first = this.running.entries().next();
    if (!first.done) {
      const [id, cb] = first.value;
      this.running.delete(id);
      this.call(cb, [this.now], 0);
      return true;
    }
    const timer = this.nextTimer();
    let frameTime = Infinity;
    let frame = -1;
    if (this.frames.size > 0) {
      frame = this.nextFrame();
      frameTime = this.frameAt(frame);
    }
    if (timer && timer.due <= frameTime) {
      if (timer.due > until) return false;
      this.heap.pop();
      this.now = Math.max(this.now, timer.due);
      if (timer.interval === null) this.timers.delete(timer.id);
      this.call(timer.fn, timer.args, timer.nesting);
      if (timer.interval !== null && this.timers.get(timer.id) === timer) {
        // A repeat is a new timer initialisation with the same id, one nesting level deeper.
        timer.nesting += 1;
        const ms = timer.nesting > 5 && timer.interval < 4 ? 4 : timer.interval;
        timer.due = this.now + ms;
        timer.seq = this.seq++;
        this.heap.push(timer);
      }
      return true;
    }
    if (frameTime > until) return false;
    // A frame: the callbacks requested before it run in it (each one a step of its own); those
    // they request go to the next frame.
    this.now = frameTime;
    this.lastFrame = frame;
    this.running = this.frames;
    this.frames = new Map();
    return this.runNext(until);
  }

  /**
   * @param {Function} fn
   * @param {unknown[]} args
   * @param {number} nesting
   */
  call(fn, args, nesting) {
    const outer = this.nesting;
    this.nesting = nesting;
    try {
      fn(...args);
    } catch (err) {
      this.onError(err);
    } finally {
      this.nesting = outer;
    }
  }

  /**
   * Run everything due within `ms` synchronously (no promise jobs between callbacks), then move
   * time to now + ms. For tests and for pages without a window loop.
   * @param {number} ms
   * @param {number} [cap]
   * @returns {{callbacks: number, capped: boolean}}
   */
  advanceSync(ms, cap = MAX_CALLBACKS_PER_ADVANCE) {
    const until = this.now + Math.max(0, ms);
    let callbacks = 0;
    this.horizon = until;
    while (callbacks < cap && this.runNext(until)) callbacks += 1;
    this.horizon = -Infinity;
    const capped = callbacks >= cap && this.hasDue(until);
    this.now = Math.max(this.now, until);
    return { callbacks, capped };
  }

  /**
   * @param {number} until
   * @returns {boolean} whether a callback is due at or before `until`
   */
  hasDue(until) {
    if (this.running.size > 0) return true;
    const timer = this.nextTimer();
    if (timer && timer.due <= until) return true;
    return this.frames.size > 0 && this.frameAt(this.nextFrame()) <= until;
  }
}

/**
 * A Date that reads the virtual clock: `new Date()` and `Date.now()` are virtual, everything else
 * (parsing, `new Date(y, m, d)`, the prototype) is the real Date's. `instanceof Date` still holds.
 * @param {DateConstructor} RealDate
 * @param {() => number} nowMs
 * @returns {DateConstructor}
 */
export function virtualDate(RealDate, nowMs) {
  /**
   * @this {unknown}
   * @param {...any} args
   */
  function VirtualDate(...args) {
    if (new.target === undefined) return new RealDate(nowMs()).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [nowMs()] : args, new.target);
  }
  Object.defineProperties(VirtualDate, {
    prototype: { value: RealDate.prototype, writable: false },
    now: { value: () => nowMs(), writable: true, configurable: true },
    parse: { value: RealDate.parse, writable: true, configurable: true },
    UTC: { value: RealDate.UTC, writable: true, configurable: true },
    name: { value: "Date" },
    length: { value: 7 },
  });
  Object.defineProperty(RealDate.prototype, "constructor", { value: VirtualDate, writable: true, configurable: true });
  return /** @type {DateConstructor} */ (/** @type {unknown} */ (VirtualDate));
}

/**
 * The parts of `window` the clock uses (a fake one in tests).
 * @typedef {object} ClockWindow
 * @property {string} name
 * @property {{postMessage: (message: unknown, targetOrigin: string) => void}} parent
 * @property {(type: string, listener: (event: any) => void, options?: any) => void} addEventListener
 * @property {(event: any) => boolean} dispatchEvent
 * @property {new (type: string, init: any) => any} MessageEvent
 * @property {new () => MessageChannel} MessageChannel
 * @property {any} [Date]
 * @property {any} [performance]
 * @property {any} [Math]
 * @property {any} [setTimeout]
 * @property {any} [setInterval]
 * @property {any} [clearTimeout]
 * @property {any} [clearInterval]
 * @property {any} [requestAnimationFrame]
 * @property {any} [cancelAnimationFrame]
 * @property {(err: unknown) => void} [reportError]
 */

/** Longest `token` of an advance message. */
const MAX_TOKEN_CHARS = 64;

/**
 * The advance `data` asks for, if it is an advance message for `nonce` (the envelope checked by the
 * target API's validator): `ms` to run, whether `more` advances follow at once, and the `token` to
 * answer with when done ("" for none).
 * @param {unknown} data
 * @param {string} nonce
 * @returns {{ms: number, more: boolean, token: string} | null}
 */
export function advanceRequest(data, nonce) {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return null;
  const msg = /** @type {Record<string, unknown>} */ (data);
  if (msg.type !== "advance" || !isParentMessage({ source: msg.source, nonce: msg.nonce, type: "state" }, nonce)) {
    return null;
  }
  const payload = msg.payload;
  if (typeof payload !== "object" || payload === null) return null;
  const { ms, more, token } = /** @type {Record<string, unknown>} */ (payload);
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0 || ms > MAX_ADVANCE_MS) return null;
  const answer = typeof token === "string" && token.length <= MAX_TOKEN_CHARS ? token : "";
  return { ms, more: more === true, token: answer };
}

/**
 * Whether `data` is a halt message for `nonce`: `{source: "splitbrain-parent", nonce, type: "halt"}`,
 * which ends the running advance where it is and drops the advances posted behind it (the host's
 * advance was cancelled or timed out: nothing of it may run on).
 * @param {unknown} data
 * @param {string} nonce
 */
export function isHalt(data, nonce) {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return false;
  const msg = /** @type {Record<string, unknown>} */ (data);
  return msg.type === "halt" && isParentMessage({ source: msg.source, nonce: msg.nonce, type: "state" }, nonce);
}

/**
 * Install the virtual clock on `win` and return it (also as `win.__splitbrainClock`). A second
 * install returns the first clock. Math.random is seeded at once unless `laterRandom`: then
 * `clock.seedRandom(Math)` does it (the registry's script after the target API). `maxCallbacks`
 * lowers MAX_CALLBACKS_PER_ADVANCE (tests); `warmUp` runs time until the page is ready (WARM_UP_MS).
 * @param {ClockWindow} win
 * @param {{seed?: number, epoch?: number, fps?: number, laterRandom?: boolean, maxCallbacks?: number, warmUp?: boolean}} [opts]
 * @returns {VirtualClock}
 */
export function installClock(win, opts = {}) {
  const anyWin = /** @type {any} */ (win);
  if (anyWin.__splitbrainClock) return anyWin.__splitbrainClock;
  const nonce = typeof win.name === "string" ? win.name : "";
  const parentWindow = win.parent;
  const report = (/** @type {unknown} */ err) => {
    if (typeof win.reportError === "function") win.reportError(err);
    else console.error(err);
  };
  const clock = new VirtualClock({ seed: opts.seed, epoch: opts.epoch, fps: opts.fps, onError: report });
  const maxCallbacks = Math.max(1, Math.min(opts.maxCallbacks ?? MAX_CALLBACKS_PER_ADVANCE, MAX_CALLBACKS_PER_ADVANCE));
  Object.defineProperty(win, "__splitbrainClock", { value: clock });
  const realPerformance = win.performance;
  const realNow = typeof realPerformance?.now === "function" ? realPerformance.now.bind(realPerformance) : Date.now;

  win.Date = virtualDate(win.Date ?? Date, () => clock.dateNow());
  if (win.performance) win.performance.now = () => clock.now;
  if (win.Math && !opts.laterRandom) clock.seedRandom(win.Math);
  win.setTimeout = (/** @type {unknown} */ fn, /** @type {unknown} */ delay, /** @type {unknown[]} */ ...args) =>
    clock.addTimer(fn, delay, args, false);
  win.setInterval = (/** @type {unknown} */ fn, /** @type {unknown} */ delay, /** @type {unknown[]} */ ...args) =>
    clock.addTimer(fn, delay, args, true);
  win.clearTimeout = (/** @type {unknown} */ id) => clock.clearTimer(id);
  win.clearInterval = (/** @type {unknown} */ id) => clock.clearTimer(id);
  win.requestAnimationFrame = (/** @type {unknown} */ cb) => clock.requestFrame(cb);
  win.cancelAnimationFrame = (/** @type {unknown} */ id) => clock.cancelFrame(id);

  // Until the page is ready: one frame per task from its load event (see WARM_UP_MS). Each frame is
  // an advance of its own, so a parent message that comes meanwhile waits for the frame's end.
  const warmUp = new win.MessageChannel();
  // (Made before the driver's channel, whose messages the tests count as the last channel made.)
  const pageReady = () => /** @type {any} */ (win).SplitBrain?.isReady === true;
  warmUp.port1.addEventListener("message", () => {
    if (advancing || pageReady() || clock.now >= WARM_UP_MS) return;
    const frameMs = 1000 / clock.fps;
    advancing = { until: clock.now + frameMs, ms: frameMs, callbacks: 0, token: "", warm: true };
    clock.horizon = advancing.until;
    step();
    if (advancing) drive();
  });
  warmUp.port1.start();

  // The driver: CALLBACKS_PER_TASK listeners on one port, never clamped like setTimeout. A message
  // runs up to that many callbacks (one per listener) within TASK_SLICE_MS; then it posts the next.
  const channel = new win.MessageChannel();
  let driving = false;
  let sliceOver = false;
  let sliceEnds = 0;
  const drive = () => {
    if (driving) return;
    driving = true;
    channel.port2.postMessage(null);
  };
  for (let i = 0; i < CALLBACKS_PER_TASK; i += 1) {
    const first = i === 0;
    const last = i === CALLBACKS_PER_TASK - 1;
    channel.port1.addEventListener("message", () => {
      if (first) {
        driving = sliceOver = false;
        sliceEnds = realNow() + TASK_SLICE_MS;
      }
      if (sliceOver) return;
      step();
      if (advancing && (last || realNow() > sliceEnds)) {
        sliceOver = true;
        drive();
      }
    });
  }
  channel.port1.start();
  /** @type {{until: number, ms: number, callbacks: number, token: string, warm?: boolean, wait?: Wait} | null} */
  let advancing = null;
  /** @type {any[]} messages from the parent that arrived during an advance, oldest first */
  const held = [];
  /** @type {WeakSet<object>} */
  const redelivered = new WeakSet();

  function finish() {
    if (!advancing) return;
    const { until, ms, callbacks, token, warm, wait } = advancing;
    const capped = callbacks >= maxCallbacks && clock.hasDue(until);
    clock.now = Math.max(clock.now, until);
    clock.horizon = -Infinity;
    advancing = null;
    /** @param {Record<string, unknown>} body */
    const post = (body) => {
      try {
        parentWindow.postMessage(targetMessage(nonce, body), "*");
      } catch (err) {
        console.error(`splitbrain clock: ${errorText(err)}`);
      }
    };
    if (capped) {
      const message =
        `virtual clock: more than ${maxCallbacks} timer and animation-frame callbacks ` +
        `within one advance of ${ms} ms (a timer that keeps rescheduling itself?); time moved on ` +
        "without the rest, which run first in the next advance";
      post({ type: "error", error: { code: "target_error", message } });
    }
    // Before what waited: a handler still waiting on virtual time must not hold the next advance.
    if (token) post({ type: "advanced", token });
    if (warm) warmUp.port2.postMessage(null);
    if (wait) {
      if (wait.error !== undefined) wait.reject(wait.error);
      else wait.resolve(wait.met === true || safeHolds(wait.holds));
    }
    // Deliver what waited, in order, until one of them starts another advance.
    while (!advancing && held.length > 0) {
      const event = held.shift();
      const copy = new win.MessageEvent("message", { data: event.data, origin: event.origin, source: event.source });
      redelivered.add(copy);
      win.dispatchEvent(copy);
    }
  }

  /**
   * Run virtual time on until `holds()` is true, for at most `ms` (a bound action's wait step: time
   * stands still between the host's advances, so a wait would never end otherwise). It runs as an
   * advance does, through the driver, the parent's messages held until it ends; the condition is
   * looked at before every callback. Fulfils with whether it held; rejects with what it threw.
   * @param {() => boolean} holds
   * @param {number} ms
   * @returns {Promise<boolean>}
   */
  clock.runUntil = (holds, ms) =>
    new Promise((resolve, reject) => {
      if (advancing) {
        reject(new Error("virtual clock: a wait cannot start during an advance"));
        return;
      }
      advancing = { until: clock.now + Math.max(0, ms), ms, callbacks: 0, token: "", wait: { holds, resolve, reject } };
      clock.horizon = advancing.until;
      drive();
    });

  /** Run the next due callback of the advance, or end it. */
  function step() {
    if (!advancing) return;
    if (advancing.warm && pageReady()) {
      advancing.until = clock.now; // the page got ready in the last callback: time stops there
      finish();
      return;
    }
    const wait = advancing.wait;
    if (wait) {
      try {
        wait.met = wait.holds();
      } catch (err) {
        wait.error = err;
      }
      if (wait.met || wait.error !== undefined) {
        advancing.until = clock.now; // a wait ends the moment its condition holds
        finish();
        return;
      }
    }
    if (advancing.callbacks < maxCallbacks && clock.runNext(advancing.until)) advancing.callbacks += 1;
    else finish();
  }

  /** @param {any} event */
  function onMessage(event) {
    if (event.source !== /** @type {unknown} */ (parentWindow)) return;
    if (isHalt(event.data, nonce)) {
      // Seen even while an advance holds every other message: the advances waiting behind it go,
      // the rest (state requests, applies) are delivered as the running one ends here.
      event.stopImmediatePropagation();
      for (let i = held.length - 1; i >= 0; i -= 1) if (advanceRequest(held[i].data, nonce)) held.splice(i, 1);
      if (advancing) {
        advancing.until = clock.now;
        clock.horizon = clock.now;
        finish();
      }
      return;
    }
    if (advancing && !redelivered.has(event)) {
      // Later messages wait for the advance, so that they see its end (a state request above all).
      event.stopImmediatePropagation();
      held.push(event);
      return;
    }
    const request = advanceRequest(event.data, nonce);
    if (request === null) return;
    const { ms, more, token } = request;
    advancing = { until: clock.now + ms, ms, callbacks: 0, token };
    clock.horizon = more ? Infinity : advancing.until;
    // The first callback in this task (an advance with nothing due ends here), unless the message
    // waited behind another advance: the promise jobs of what was delivered before it (the target API
    // answering a state request) must run first, so the next task starts it.
    if (!redelivered.has(event)) step();
    if (advancing) drive();
  }
  if (parentWindow != null && parentWindow !== /** @type {unknown} */ (win)) {
    win.addEventListener("message", onMessage, { capture: true });
    // A task after the load event, so that the page's own load listeners (a ready() there) run first.
    if (opts.warmUp) win.addEventListener("load", () => warmUp.port2.postMessage(null), { once: true });
  }
  return clock;
}

if (typeof window !== "undefined") {
  // The registry's <script data-splitbrain-clock data-seed="..."> carries the settings.
  const data = (typeof document !== "undefined" ? document.currentScript?.dataset : undefined) ?? {};
  const seed = Number(data.seed ?? 0);
  const maxCallbacks = Number(data.maxCallbacks ?? MAX_CALLBACKS_PER_ADVANCE);
  installClock(/** @type {any} */ (window), {
    seed: Number.isFinite(seed) ? seed : 0,
    fps: Number(data.fps ?? FPS),
    maxCallbacks: Number.isFinite(maxCallbacks) ? maxCallbacks : MAX_CALLBACKS_PER_ADVANCE,
    laterRandom: true,
    warmUp: data.warmUp === "1",
  });
}
