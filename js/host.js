// @ts-check
/**
 * host.js: the host page of a headless target (splitbrain_widget/_headless_engine.py). A blank
 * page in headless Chromium that runs the view's own code: the sandboxed iframe and its checks
 * (./frame.js) and the relay (./relay.js). Only the kernel <-> view hop differs: the engine calls
 * `window.splitbrainHost.run(ops)` (one evaluate per batch of ops) and the host hands every
 * view -> kernel message to a binding, `window[binding](json)`, batched per task.
 *
 * Besides the view's messages the host runs the virtual clock (./clock.js) of its page:
 * `{op: "advance", token, ms}` posts `advance` messages of at most ADVANCE_CHUNK_MS, each
 * followed by a state request (PIPELINE of them ahead), and answers
 * `{kind: "_advance", view_id, token, result}` with the last reply. A chunk ends with the clock's
 * `advanced` message or its reply, whichever comes first (a handler of the page waiting on
 * virtual time holds up the replies, never the clock). Wire formats: docs/protocol.md.
 */
import { mountTargetFrame } from "./frame.js";
import { PARENT_SOURCE, PROTOCOL_VERSION, TARGET_SOURCE, errorText } from "./protocol.js";
import { READY_TIMEOUT_MS } from "./relay.js";

/**
 * Virtual ms per advance message. The relay's message budget counts per second of the page's own
 * time (real time plus the virtual time it was advanced by): an honest page posts 60 states per
 * virtual second however fast the clock runs, a flooding one is stopped as in the view.
 */
export const ADVANCE_CHUNK_MS = 1000;
/**
 * Chunks of one advance posted ahead of the reply they wait for: the page starts the next one as
 * soon as it ends one, instead of idling for a round trip through the host (~1-3 ms per chunk,
 * two cross-process hops: sandboxed frames run in a process of their own). Cancelling lets at
 * most PIPELINE - 1 more chunks run.
 */
export const PIPELINE = 2;
/** Ids of the host's own state requests: never a kernel id ("r<counter>-<salt>"). */
const INTERNAL_ID = "\u0000advance-";

/**
 * @typedef {{op: "send", msg: unknown} | {op: "values", values: Record<string, unknown>}
 *   | {op: "reload", html?: string} | {op: "advance", token: string, ms: number}
 *   | {op: "cancel", token: string}} HostOp
 */

/**
 * @typedef {{ok: true, state: Record<string, unknown>} | {ok: false, error: {code: string, message: string}}} Result
 */

/**
 * @typedef {object} HostOptions
 * @property {string} viewId
 * @property {string} html  the target page (target API, and clock when virtual, injected)
 * @property {Record<string, unknown>} values  the `values` trait
 * @property {string} binding  name of the window function that takes a JSON batch of messages
 * @property {number} [height]  iframe height in CSS pixels
 */

/**
 * Mount one target view in this page.
 * @param {HostOptions} opts
 */
export function createHost(opts) {
  const { viewId, binding } = opts;
  const controller = new AbortController();
  let html = opts.html;
  let values = opts.values ?? {};
  const height = opts.height ?? 420;

  /** @type {unknown[]} */
  let outbox = [];
  let flushQueued = false;
  function flush() {
    flushQueued = false;
    const batch = outbox;
    outbox = [];
    if (batch.length === 0) return;
    try {
      /** @type {any} */ (window)[binding](JSON.stringify(batch));
    } catch (err) {
      console.error(`splitbrain host: could not hand messages to the engine: ${errorText(err)}`);
    }
  }
  /** @param {unknown} msg */
  function out(msg) {
    outbox.push(msg);
    if (!flushQueued) {
      flushQueued = true;
      queueMicrotask(flush);
    }
  }

  /** @type {Map<string, (result: Result) => void>} the host's own state requests, by id */
  const internal = new Map();
  let internalCounter = 0;
  /** @type {Set<() => void>} woken on every status change */
  const statusWaiters = new Set();
  /** virtual ms this page was advanced by: the relay's budget clock runs that much ahead */
  let virtualMs = 0;
  /** @type {Map<string, () => void>} chunks posted and not done yet, by token */
  const chunkDone = new Map();
  let chunkCounter = 0;

  const slot = document.createElement("iframe");
  document.body.append(slot);
  const frame = mountTargetFrame({
    placeholder: slot,
    viewId,
    html: () => html,
    frameTitle: () => "splitbrain headless target",
    height: () => height,
    currentValues: () => values,
    signal: controller.signal,
    now: () => Date.now() + virtualMs,
    sendToKernel: (msg) => {
      const id = msg?.kind === "reply" && typeof msg.id === "string" ? msg.id : "";
      if (!id.startsWith(INTERNAL_ID)) {
        out(msg);
        return;
      }
      // The host's own request: never the kernel's business (also when its advance gave up on it).
      const waiter = internal.get(id);
      internal.delete(id);
      waiter?.(msg.ok ? { ok: true, state: msg.state } : { ok: false, error: msg.error });
    },
    onStatus: () => {
      for (const wake of [...statusWaiters]) wake();
    },
  });
  const { relay } = frame;
  // The clock's `advanced` message: from this iframe's page, with its nonce (the relay ignores it).
  window.addEventListener(
    "message",
    (event) => {
      const data = event.data;
      if (event.source === null || event.source !== frame.iframe().contentWindow) return;
      if (typeof data !== "object" || data === null || data.type !== "advanced") return;
      if (data.source !== TARGET_SOURCE || data.nonce !== relay.nonce || typeof data.token !== "string") return;
      const done = chunkDone.get(data.token);
      chunkDone.delete(data.token);
      done?.();
    },
    { signal: controller.signal },
  );

  /**
   * A state request of the host's own, through the relay like a kernel's.
   * @returns {{id: string, done: Promise<Result>}}
   */
  function stateRequest() {
    const id = `${INTERNAL_ID}${++internalCounter}`;
    /** @type {Promise<Result>} */
    const done = new Promise((resolve) => internal.set(id, resolve));
    relay.fromKernel({ kind: "request", id, op: "state", payload: {} });
    return { id, done };
  }

  /**
   * Resolves true once the page is ready, false when it stops or `ms` pass first.
   * @param {number} ms
   * @returns {Promise<boolean>}
   */
  function whenReady(ms) {
    if (relay.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(false), ms);
      /** @param {boolean} ok */
      function settle(ok) {
        clearTimeout(timer);
        statusWaiters.delete(check);
        resolve(ok);
      }
      function check() {
        if (relay.ready) settle(true);
        else if (relay.stopped) settle(false);
      }
      statusWaiters.add(check);
    });
  }

  /** @type {{token: string, ms: number}[]} advances waiting for the one that runs */
  const advances = [];
  /** @type {{token: string, cancel: (why: string) => void} | null} */
  let current = null;
  /** @type {HostOp[] | null} ops that came while an advance waited for its page to be ready */
  let deferred = null;

  /**
   * @param {string} code
   * @param {string} message
   * @returns {Result}
   */
  const failure = (code, message) => ({ ok: false, error: { code, message } });

  /**
   * Run the clock forward by `ms`, chunk by chunk; each chunk is followed by a state request, so
   * its reply reflects the advanced time (and moves the relay's budget clock on to the next chunk).
   * @param {{token: string, ms: number}} request
   * @returns {Promise<Result>}
   */
  async function runAdvance({ token, ms }) {
    let cancelled = "";
    /** @type {() => void} */
    let interrupt = () => {};
    /** @type {Promise<void>} settles when the advance is cancelled (its deadline passed, or closed) */
    const interrupted = new Promise((resolve) => {
      interrupt = () => resolve();
    });
    current = {
      token,
      cancel: (why) => {
        cancelled = why;
        interrupt();
      },
    };
    if (!relay.ready) {
      deferred = [];
      const ready = await Promise.race([whenReady(READY_TIMEOUT_MS), interrupted.then(() => false)]);
      releaseDeferred();
      if (cancelled) return failure("timeout", cancelled);
      if (!ready) {
        const why = relay.stopped || `the target did not call SplitBrain.ready() within ${READY_TIMEOUT_MS / 1000} s`;
        return failure("not_ready", why);
      }
    }
    // Not painted while it runs ahead (about half the time of a drawing page went into rendering
    // frames nobody sees); the page cannot tell (its document stays visible) and is painted after.
    const element = frame.iframe();
    element.style.visibility = "hidden";
    let left = Math.max(0, ms);
    /** @type {{chunk: number, token: string, ended: Promise<null>, id: string, done: Promise<Result>}[]} */
    const inFlight = []; // chunks posted, oldest first
    const cancel = interrupted.then(() => failure("timeout", cancelled));
    function postChunk() {
      const chunk = Math.min(left, ADVANCE_CHUNK_MS);
      left -= chunk;
      const token = `${++chunkCounter}`;
      /** @type {Promise<null>} */
      const ended = new Promise((resolve) => chunkDone.set(token, () => resolve(null)));
      // `more`: the clock's `unseen` stays true up to the last frame of the whole advance.
      const payload = { ms: chunk, more: left > 0, token };
      frame.iframe().contentWindow?.postMessage({ source: PARENT_SOURCE, nonce: relay.nonce, type: "advance", payload }, "*");
      inFlight.push({ chunk, token, ended, ...stateRequest() });
    }
    try {
      postChunk();
      virtualMs += inFlight[0].chunk;
      releaseDeferred(); // ops sent behind the advance reach the page after its first chunk
      while (left > 0 && inFlight.length < PIPELINE) postChunk();
      /** @type {Result | null} */
      let result = null;
      do {
        const { id, token, ended, done } = inFlight[0];
        // A failed reply (the page stopped or reloaded) ends the advance; the clock's word ends a chunk.
        result = await Promise.race([ended, done, cancel]);
        if (result && !result.ok) return result;
        if (inFlight.length === 1 && left === 0) result = result ?? (await Promise.race([done, cancel]));
        internal.delete(id); // a later reply to it is dropped
        chunkDone.delete(token);
        inFlight.shift();
        // The chunk ended: what the page posts from here on belongs to the next one.
        if (inFlight.length > 0) virtualMs += inFlight[0].chunk;
        if (left > 0) postChunk();
      } while (inFlight.length > 0);
      return result ?? failure("internal_error", "host advance: no state after the last chunk");
    } finally {
      for (const { id, token } of inFlight) {
        internal.delete(id); // a failed or cancelled advance: replies dropped
        chunkDone.delete(token);
      }
      element.style.visibility = "";
    }
  }

  function releaseDeferred() {
    const ops = deferred;
    deferred = null;
    if (ops) run(ops);
  }

  async function pumpAdvances() {
    if (current) return;
    while (advances.length > 0) {
      const request = /** @type {{token: string, ms: number}} */ (advances.shift());
      let result;
      try {
        result = await runAdvance(request);
      } catch (err) {
        result = failure("internal_error", `host advance: ${errorText(err)}`);
      }
      current = null;
      if (result.ok) out({ kind: "event", view_id: viewId, type: "state", payload: result.state });
      out({ kind: "_advance", view_id: viewId, token: request.token, result });
    }
  }

  /** @param {HostOp} op */
  function handle(op) {
    if (op.op === "cancel") {
      const queued = advances.findIndex((a) => a.token === op.token);
      if (queued >= 0) {
        advances.splice(queued, 1);
        const result = failure("timeout", "cancelled before it ran");
        out({ kind: "_advance", view_id: viewId, token: op.token, result });
      } else if (current?.token === op.token) {
        current.cancel("the advance was cancelled (its deadline passed)");
      }
      return;
    }
    if (deferred) {
      deferred.push(op);
      return;
    }
    if (op.op === "send") relay.fromKernel(op.msg);
    else if (op.op === "values") {
      values = op.values ?? {};
      relay.valuesChanged(values);
    } else if (op.op === "reload") {
      if (typeof op.html === "string") html = op.html;
      frame.load();
    } else if (op.op === "advance") {
      const ms = Number(op.ms);
      if (!Number.isFinite(ms) || ms < 0) {
        const result = failure("invalid_value", `cannot advance by ${op.ms} ms`);
        out({ kind: "_advance", view_id: viewId, token: op.token, result });
        return;
      }
      advances.push({ token: op.token, ms });
      void pumpAdvances();
    }
  }

  /** @param {HostOp[]} ops */
  function run(ops) {
    for (const op of ops) handle(op);
  }

  frame.load();
  out({
    kind: "event",
    view_id: viewId,
    type: "attached",
    payload: { protocol: PROTOCOL_VERSION, user_agent: navigator.userAgent.slice(0, 200) },
  });

  return {
    run,
    /** For tests and debugging: what the relay knows. */
    inspect() {
      const sandbox = frame.iframe().getAttribute("sandbox");
      return { viewId, nonce: relay.nonce, ready: relay.ready, stopped: relay.stopped, virtualMs, sandbox };
    },
    /** Remove the view (its iframe unloads); the page can host the next one. */
    dispose() {
      for (const [id, resolve] of internal) {
        internal.delete(id);
        resolve(failure("not_ready", "the headless page was closed"));
      }
      const closed = failure("not_ready", "the headless page was closed");
      for (const request of advances.splice(0)) out({ kind: "_advance", view_id: viewId, token: request.token, result: closed });
      current?.cancel("the headless page was closed");
      controller.abort();
      frame.dispose();
      // Whatever else went into the page (a test's extra frames) goes too: the next view starts clean.
      document.body.replaceChildren();
      out({ kind: "event", view_id: viewId, type: "detached" });
      flush();
    },
  };
}

/** @type {ReturnType<typeof createHost> | null} */
let active = null;

/** The engine's handle: one view at a time per host page. */
const api = Object.freeze({
  /** @param {HostOptions} opts */
  create(opts) {
    if (active) active.dispose();
    active = createHost(opts);
    return true;
  },
  /** @param {HostOp[]} ops */
  run(ops) {
    if (!active) throw new Error("no headless view in this page");
    active.run(ops);
  },
  inspect() {
    return active ? active.inspect() : null;
  },
  dispose() {
    active?.dispose();
    active = null;
  },
});

Object.defineProperty(window, "splitbrainHost", { value: api });
