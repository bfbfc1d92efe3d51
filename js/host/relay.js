// @ts-check
/**
 * The relay between the kernel (anywidget custom messages, or a headless host's binding) and one
 * target page (postMessage): the ready-handshake queue, the catch-up apply, the message budget.
 * Pure logic, no DOM: the view (../view/widget.js) wires it to a real iframe, tests to fakes.
 *
 * Wire formats: docs/protocol.md. Shapes and validators: ../protocol.js.
 */
import {
  REFUSED_KEY,
  MAX_ERROR_TEXT,
  errorEvent,
  errorReplyMessage,
  errorText,
  isKernelRequest,
  isTargetMessage,
  makeNonce,
  parentMessage,
  pictureProblem,
  readyEvent,
  replyMessage,
  stateEvent,
} from "../protocol.js";

/** Largest state (as JSON text) forwarded to the kernel; bigger ones are replaced by a marker. */
export const MAX_STATE_CHARS = 1_000_000;
/** Deepest nesting of a state forwarded to the kernel (the state itself is level 1; protocol.md, *Bounds*). */
export const MAX_STATE_DEPTH = 32;
/** Most values in a state forwarded to the kernel (_bounds.py MAX_NODES: every object, array and
 * scalar, keys not counted). A mebibyte of `[[],[],...]` is 350,000 of them, seconds of Python's time
 * to parse and walk: it is replaced by the marker here, before it crosses the comm. */
export const MAX_STATE_VALUES = 100_000;
/** Unsolicited states are forwarded at most this often (ms); the latest one wins. */
export const STATE_EVENT_INTERVAL_MS = 100;
/** ... and at most this many characters of them a second (a state of 1,000,000: one a second). */
export const STATE_EVENT_CHARS_PER_S = 1_000_000;
/** How long a target may take to call SplitBrain.ready() before the view reports it. */
export const READY_TIMEOUT_MS = 15_000;
/**
 * Messages a target may post in one second, besides answers to requests it was sent. Past it the
 * view stops the page (unloads it) and says so once: message events run on the notebook page's
 * own thread, so a page posting without pause would starve every other widget of the page.
 * An honest target posts a state per frame (60 a second).
 */
export const MAX_TARGET_MESSAGES_PER_S = 5_000;
/** Request ids remembered per view, so that each is applied at most once. */
const SEEN_IDS = 20_000;

/**
 * Hop timestamps for benchmarks: when a page sets `globalThis.__splitbrainTrace = []`, each request
 * records when it reached the view, was posted to the target, was answered, and was replied.
 * @param {string} id
 * @param {"in" | "post" | "state" | "out"} hop
 */
function trace(id, hop) {
  const log = /** @type {any} */ (globalThis).__splitbrainTrace;
  if (!Array.isArray(log) || log.length > 100_000) return;
  log.push([id, hop, performance.now()]);
}

/**
 * The widget's synced traits (splitbrain_widget/widget.py, ``sync=True``), as the view reads them.
 * @typedef {object} Traits
 * @property {string} target_id
 * @property {Record<string, any>} manifest  the active manifest (parameters, observables, ...)
 * @property {string} _html  the target page, target API injected
 * @property {string} _sandbox  the sandbox frame the view loads the target into (./sandbox.js)
 * @property {Record<string, unknown>} values  dotted path -> the kernel's value
 * @property {Record<string, unknown>} state  the last state a page reported
 * @property {number} height
 * @property {number} protocol_version
 * @property {boolean} chat_enabled
 * @property {boolean} chat_busy
 * @property {string} chat_model
 * @property {string} chat_lesson
 * @property {Record<string, any>[]} transcript
 * @property {Record<string, string>} approval
 * @property {boolean} _snapshots  whether the view takes pictures of its page for the saved outputs (1.8)
 */

/** @typedef {import("@anywidget/types").AnyModel<Traits>} Model  anywidget's model of this widget */

/**
 * Bound a state for the trip to the kernel.
 * @param {unknown} state
 * @returns {Record<string, unknown>}
 */
export function boundState(state) {
  return sizedState(state).state;
}

/**
 * {@link boundState}, with the length of the state's JSON (what the page sent, as the kernel counts it).
 * @param {unknown} state
 * @returns {{state: Record<string, unknown>, chars: number}}
 */
export function sizedState(state) {
  if (!state || typeof state !== "object" || Array.isArray(state)) return { state: { _invalid: "expected an object" }, chars: 0 };
  let text;
  try {
    text = JSON.stringify(state);
  } catch (err) {
    return { state: { _invalid: errorText(err) }, chars: 0 };
  }
  const chars = text.length;
  if (chars > MAX_STATE_CHARS) return { state: { _truncated: true, bytes: chars }, chars };
  const shape = jsonShape(text, MAX_STATE_DEPTH);
  if (shape.depth > MAX_STATE_DEPTH) return { state: { _truncated: true, code: "too_deep", limit: MAX_STATE_DEPTH }, chars };
  if (shape.values > MAX_STATE_VALUES) {
    return { state: { _truncated: true, code: "too_many_values", limit: MAX_STATE_VALUES }, chars };
  }
  return { state: /** @type {Record<string, unknown>} */ (state), chars };
}

/**
 * The depth (counted no further than one past `depthLimit`) and the number of values of the JSON
 * `text` as `JSON.stringify` writes it (no whitespace): a scan of the text (strings skipped), not a
 * walk of the value, so no nesting exhausts the stack. Values are counted as _bounds.py `measure`
 * counts them: one for the whole, one per array element and per object member (keys not counted),
 * that is one plus every comma plus every container that is not empty.
 * @param {string} text
 * @param {number} depthLimit
 * @returns {{depth: number, values: number}}
 */
export function jsonShape(text, depthLimit) {
  let depth = 0;
  let deepest = 0;
  let values = 1;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i += 1; // a backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 44) values += 1;
    else if (c === 91 || c === 123) {
      const next = text.charCodeAt(i + 1);
      if (next !== 93 && next !== 125) values += 1;
      depth += 1;
      if (depth > deepest && (deepest = depth) > depthLimit) return { depth: deepest, values };
    } else if (c === 93 || c === 125) depth -= 1;
  }
  return { depth: deepest, values };
}

/**
 * The relay between one view's model messages and its iframe. Pure logic, no DOM: widget
 * rendering wires it to a real iframe; tests wire it to fakes.
 */
export class Relay {
  /**
   * @param {object} opts
   * @param {string} opts.viewId
   * @param {(msg: any) => void} opts.sendToKernel
   * @param {(msg: any) => void} opts.postToTarget  posts to the iframe (targetOrigin '*')
   * @param {() => Record<string, unknown>} opts.currentValues  the `values` trait
   * @param {(status: "loading" | "ready" | "error", detail?: string) => void} [opts.onStatus]
   * @param {(why: string) => void} [opts.onStopped]  the page broke its message budget: unload it
   * @param {(why: string) => void} [opts.onLeft]  another document announced itself in the frame: replace it
   * @param {() => number} [opts.now]  a clock in ms (tests)
   */
  constructor({ viewId, sendToKernel, postToTarget, currentValues, onStatus, onStopped, onLeft, now }) {
    this.viewId = viewId;
    this.sendToKernel = sendToKernel;
    this.postToTarget = postToTarget;
    this.currentValues = currentValues;
    this.onStatus = onStatus ?? (() => {});
    this.onStopped = onStopped ?? (() => {});
    this.onLeft = onLeft ?? (() => {});
    this.now = now ?? (() => Date.now());
    this.nonce = makeNonce();
    this.ready = false;
    /** whether the page announced its own load event (./frame.js checks the frame's against it) */
    this.loaded = false;
    /** whether this page load answered a request (./frame.js: a page that leaves before it does) */
    this.answered = false;
    /** the `load` id of the page's ready ("" before it, or from a target API that sends none) */
    this.loadId = "";
    /** why the page was stopped ("" while it runs) */
    this.stopped = "";
    this.budgetStart = 0;
    this.budgetUsed = 0;
    /** @type {import("../protocol.js").KernelRequest[]} */
    this.queue = [];
    /** how many queued requests came before the last `values` trait change (that change includes them) */
    this.queuedBeforeValues = 0;
    /** @type {Set<string>} ids already accepted from the kernel */
    this.seen = new Set();
    /** @type {Set<string>} ids posted to the target and not answered yet */
    this.outstanding = new Set();
    /** @type {Set<string>} the outstanding ids that ask for a picture (1.8) */
    this.snapshots = new Set();
    /** @type {Map<string, string>} the value (as JSON) last posted to the page, per path */
    this.posted = new Map();
    /** @type {Record<string, unknown> | null} */
    this.pendingStateEvent = null;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.stateTimer = null;
    /** applies posted without an id whose answer (a state naming values the page did not take) goes
     * to the kernel at once, in order with the replies after it: one each, so a page cannot use it
     * to pass the state events' pace */
    this.unansweredValues = 0;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.errorTimer = null;
    /** @type {string} */
    this.pendingError = "";
    this.errorsSince = 0;
    this.lastErrorEventAt = 0;
    this.lastStateEventAt = 0;
    /** the JSON length of the last state event sent, and of the one waiting */
    this.lastStateChars = 0;
    this.pendingStateChars = 0;
  }

  /**
   * A new page load: fresh nonce, not ready; queued requests stay queued.
   * @param {string} [why]  why the old page will not answer what it was sent
   */
  reload(why = "the target page was reloaded") {
    this.nonce = makeNonce();
    this.ready = false;
    this.loaded = false;
    this.answered = false;
    this.loadId = "";
    this.stopped = "";
    this.budgetUsed = 0;
    this.unansweredValues = 0;
    this.posted.clear();
    // Requests posted to the old page will never be answered by it: answer them now.
    for (const id of this.outstanding) this.replyError(id, "not_ready", why);
    this.outstanding.clear();
    this.snapshots.clear();
    this.onStatus("loading");
  }

  /** @param {unknown} msg  a custom message from the kernel */
  fromKernel(msg) {
    if (!isKernelRequest(msg)) return;
    const request = /** @type {import("../protocol.js").KernelRequest} */ (msg);
    trace(request.id, "in");
    if (this.seen.has(request.id)) return;
    this.seen.add(request.id);
    if (this.seen.size > SEEN_IDS) this.seen.delete(this.seen.values().next().value ?? "");
    if (this.stopped) this.replyError(request.id, "not_ready", this.stopped);
    else if (this.ready) this.post(request);
    else this.queue.push(request);
  }

  /**
   * Remember what the page was given, so a `values` trait change can be told apart from its echo.
   * @param {Record<string, unknown>} values
   */
  remember(values) {
    for (const [path, value] of Object.entries(values)) this.posted.set(path, JSON.stringify(value));
  }

  /**
   * The `values` trait changed: post (without an id) whatever differs from what the page has, e.g. a
   * value assigned to `sim.values` directly. The echo of a request's own values differs in nothing.
   * @param {Record<string, unknown>} values
   */
  valuesChanged(values) {
    if (!this.ready) {
      this.queuedBeforeValues = this.queue.length; // the catch-up apply on ready sends them
      return;
    }
    /** @type {Record<string, unknown>} */
    const changed = {};
    for (const [path, value] of Object.entries(values ?? {})) {
      if (this.posted.get(path) !== JSON.stringify(value)) changed[path] = value;
    }
    if (Object.keys(changed).length === 0) return;
    this.remember(changed);
    this.unansweredValues += 1;
    this.postToTarget(parentMessage("apply", changed));
  }

  /** @param {import("../protocol.js").KernelRequest} request */
  post(request) {
    this.outstanding.add(request.id);
    const type = request.op;
    /** @type {Record<string, unknown> | undefined} what the page gets: values, or an action's name */
    let payload;
    if (type === "action") {
      payload = { name: request.payload.name };
    } else if (type === "snapshot") {
      this.snapshots.add(request.id);
    } else if (type !== "state") {
      payload = request.payload.values ?? {};
      this.remember(payload);
    }
    this.postToTarget(parentMessage(type, payload, request.id));
    trace(request.id, "post");
  }

  /**
   * A message event from the iframe; `fromFrame` says whether `event.source` is our iframe.
   * @param {unknown} data
   * @param {boolean} fromFrame
   */
  fromTarget(data, fromFrame) {
    if (!fromFrame || this.stopped) return;
    const valid = isTargetMessage(data, this.nonce);
    // a ready carries no id: only a state or an error can answer an outstanding request
    const id = valid && "id" in data ? data.id : undefined;
    const answers = typeof id === "string" && this.outstanding.has(id);
    if (!answers && !this.withinBudget()) return;
    if (!valid) return;
    const msg = /** @type {any} */ (data);
    if (msg.type === "ready") {
      const load = typeof msg.load === "string" ? msg.load : "";
      if (this.ready) {
        // The same load again: ignored, so a page repeating ready cannot disturb its calls. A new
        // load: the frame holds another document now (a reload; the page's nonce survived in
        // window.name). It is not taken for the page: the frame is replaced by a fresh one, with a
        // fresh nonce, which gets every current value once it is ready (./frame.js).
        if (load !== "" && load !== this.loadId) this.onLeft("the target page reloaded itself before answering");
        return;
      }
      this.loadId = load;
      this.ready = true;
      this.onStatus("ready");
      this.sendToKernel(readyEvent(this.viewId));
      // Catch up with everything set while no page listened, and run what was queued, in the order
      // the kernel made them: the `values` trait holds every request that came before its last
      // change, so those run first, then the catch-up apply (less what later requests set), then
      // the later requests. The page never sees a value go back.
      const current = this.currentValues();
      const queued = this.queue;
      const split = Math.min(this.queuedBeforeValues, queued.length);
      this.queue = [];
      this.queuedBeforeValues = 0;
      for (const request of queued.slice(0, split)) this.post(request);
      const later = new Set(queued.slice(split).flatMap((r) => Object.keys(r.payload.values ?? {})));
      const catchUp = Object.fromEntries(Object.entries(current).filter(([path]) => !later.has(path)));
      this.remember(catchUp);
      this.unansweredValues += 1;
      this.postToTarget(parentMessage("apply", catchUp));
      for (const request of queued.slice(split)) this.post(request);
    } else if (msg.type === "loaded") {
      this.loaded = true;
    } else if (msg.type === "leaving") {
      // the page's document is going (pagehide): whatever comes into the frame next is not the page
      this.onLeft("the target page left its frame (it navigated or reloaded itself)");
    } else if (msg.type === "state") {
      const { state, chars } = sizedState(msg.payload);
      if (typeof msg.id === "string") {
        if (!this.outstanding.delete(msg.id)) return;
        trace(msg.id, "state");
        // A picture is not a call answered: a page that reloads itself after each one is still stopped
        // (./frame.js MAX_BRIEF_LEAVES); the view asks for one on its own after every load.
        if (this.snapshots.delete(msg.id)) {
          this.replyPicture(msg.id, state, chars, msg.picture);
          return;
        }
        this.answered = true;
        this.sendToKernel(replyMessage(msg.id, this.viewId, state));
        trace(msg.id, "out");
      } else {
        this.stateEvent(state, chars);
      }
    } else if (msg.type === "error") {
      const message = errorText(msg.error?.message ?? msg.error ?? "target error");
      if (typeof msg.id === "string") {
        if (!this.outstanding.delete(msg.id)) return;
        if (!this.snapshots.delete(msg.id)) this.answered = true;
        this.replyError(msg.id, "target_error", message);
      } else {
        this.errorEvent(message);
      }
    }
  }

  /**
   * Answer a snapshot with the page's picture: checked (pictureProblem), and beside the state only
   * when both fit in one message (else the state is left out: `{}`, which the kernel does not keep).
   * @param {string} id
   * @param {Record<string, unknown>} state
   * @param {number} chars  the state's size as JSON
   * @param {unknown} picture
   */
  replyPicture(id, state, chars, picture) {
    const problem = pictureProblem(picture);
    if (problem !== null) {
      this.replyError(id, "target_error", `${problem}; no picture was taken`);
      return;
    }
    const png = /** @type {import("../protocol.js").Picture} */ (picture);
    const fits = chars + png.png.length <= MAX_STATE_CHARS;
    this.sendToKernel(
      replyMessage(id, this.viewId, fits ? state : {}, { png: png.png, width: png.width, height: png.height }),
    );
  }

  /**
   * Count one message the page posted on its own (not an answer to a request). Past
   * MAX_TARGET_MESSAGES_PER_S in a second the page is stopped: every request it holds or will get
   * is answered with `not_ready` (saying why), the kernel is told once, and `onStopped` unloads it.
   * @returns {boolean} whether the message may be handled
   */
  withinBudget() {
    const now = this.now();
    if (now - this.budgetStart >= 1000) {
      this.budgetStart = now;
      this.budgetUsed = 0;
    }
    this.budgetUsed += 1;
    if (this.budgetUsed <= MAX_TARGET_MESSAGES_PER_S) return true;
    this.stop(
      `the target was stopped: it posted more than ${MAX_TARGET_MESSAGES_PER_S} messages within one second. ` +
        "The change is kept and applies once it is restarted (the status bar's Restart button, or display the widget again)",
    );
    return false;
  }

  /** @param {string} why */
  stop(why) {
    if (this.stopped) return;
    this.stopped = why;
    this.ready = false;
    // not_ready, not target_error: the page did not refuse these values, so the kernel keeps them
    // and the restarted page gets them with its catch-up apply.
    for (const id of this.outstanding) this.replyError(id, "not_ready", why);
    this.outstanding.clear();
    this.snapshots.clear();
    for (const request of this.queue.splice(0)) this.replyError(request.id, "not_ready", why);
    this.posted.clear();
    this.sendToKernel(errorEvent(this.viewId, "target_error", why));
    this.onStatus("error", why);
    this.onStopped(why);
  }

  /**
   * @param {string} id
   * @param {import("../protocol.js").ErrorCode} code
   * @param {string} message
   */
  replyError(id, code, message) {
    this.sendToKernel(errorReplyMessage(id, this.viewId, code, message.slice(0, MAX_ERROR_TEXT)));
  }

  /**
   * Forward an unsolicited state, at most once per STATE_EVENT_INTERVAL_MS (and by its size, at most
   * STATE_EVENT_CHARS_PER_S characters a second); the latest wins.
   * @param {Record<string, unknown>} state
   * @param {number} [chars]  the length of its JSON
   */
  stateEvent(state, chars = 0) {
    if (REFUSED_KEY in state && this.unansweredValues > 0) {
      // The answer to values the page got without an id, naming some it did not take: at once, so
      // that it reaches the kernel before the replies to later calls (news that came after them
      // would be taken for news of them). It is the latest state: a pending one is superseded.
      this.unansweredValues -= 1;
      this.pendingStateEvent = null;
      this.lastStateEventAt = Date.now();
      this.lastStateChars = chars;
      this.sendToKernel(stateEvent(this.viewId, state));
      return;
    }
    // the latest wins, but not over a bound page's news of values it did not take (REFUSED_KEY):
    // that goes with it, once
    const refused = this.pendingStateEvent?.[REFUSED_KEY];
    this.pendingStateEvent = refused !== undefined && !(REFUSED_KEY in state) ? { ...state, [REFUSED_KEY]: refused } : state;
    this.pendingStateChars = chars;
    if (this.stateTimer) return;
    // At most STATE_EVENT_INTERVAL_MS apart, and no more than STATE_EVENT_CHARS_PER_S of them: a page
    // reporting a mebibyte ten times a second would keep the kernel parsing (1.7).
    const spacing = Math.max(STATE_EVENT_INTERVAL_MS, (this.lastStateChars / STATE_EVENT_CHARS_PER_S) * 1000);
    const wait = Math.max(0, this.lastStateEventAt + spacing - Date.now());
    this.stateTimer = setTimeout(() => {
      this.stateTimer = null;
      this.lastStateEventAt = Date.now();
      this.lastStateChars = this.pendingStateChars;
      const payload = this.pendingStateEvent;
      this.pendingStateEvent = null;
      if (payload) this.sendToKernel(stateEvent(this.viewId, payload));
    }, wait);
  }

  /**
   * Forward errors the page reports outside a request at most once per interval: the latest, with how
   * many came since, so a page that throws in a loop cannot flood the kernel (or IOPub).
   * @param {string} message
   */
  errorEvent(message) {
    this.pendingError = message;
    this.errorsSince = (this.errorsSince ?? 0) + 1;
    if (this.errorTimer) return;
    const wait = Math.max(0, (this.lastErrorEventAt ?? 0) + STATE_EVENT_INTERVAL_MS * 10 - Date.now());
    this.errorTimer = setTimeout(() => {
      this.errorTimer = null;
      this.lastErrorEventAt = Date.now();
      const count = this.errorsSince;
      this.errorsSince = 0;
      const text = count > 1 ? `${this.pendingError} (and ${count - 1} more errors)` : this.pendingError;
      this.sendToKernel(errorEvent(this.viewId, "target_error", text));
    }, wait);
  }

  dispose() {
    if (this.stateTimer) clearTimeout(this.stateTimer);
    if (this.errorTimer) clearTimeout(this.errorTimer);
    this.stateTimer = null;
    this.errorTimer = null;
  }
}

