// @ts-check
/**
 * host.js: one target page hosted behind the view's own code: the sandboxed iframe and its checks
 * (./frame.js) and the relay (./relay.js), driven by ops (`send`, `values`, `reload`, `advance`,
 * `cancel`), handing every view -> kernel message to `deliver`, batched per task. It runs in two
 * places: the headless host page (./host_page.js: the engine calls `splitbrainHost.run(ops)` and
 * the messages go to a CDP binding), and the notebook view's sandbox frame (./sandbox.js: the view
 * posts the ops in and the messages out), which stands between the notebook page and the target so
 * that nothing the target posts reaches the notebook page's own thread.
 *
 * Besides the view's messages the host runs the virtual clock (../page/clock.js) of its page:
 * `{op: "advance", token, ms, every?, max_chars?}` runs the clock `ms` forward in steps of `every`
 * ms (one step of `ms` without it), each step posted as `advance` messages of at most
 * ADVANCE_CHUNK_MS with a state request behind its last one; chunks are posted ahead (PIPELINE,
 * AHEAD_MS) so that the page never waits for the host. Without `every` the answer is
 * `{kind: "_advance", view_id, token, result}`, `result` the reply to the one state request; with
 * it the replies to every step's request, in order: `{kind: "_samples", view_id, token, states}`
 * messages of at most PART_CHARS while it runs, then the `_advance` with the rest
 * (`result: {ok, state, states, samples}`; `state` the last one). A chunk ends with the clock's
 * `advanced` message or a later reply, whichever comes first (a handler of the page waiting on
 * virtual time holds up the replies, never the clock). Wire formats: docs/protocol.md.
 */
import { mountTargetFrame } from "./frame.js";
import {
  TARGET_SOURCE,
  advanceResultMessage,
  advanceSamplesMessage,
  attachedEvent,
  clockAdvanceMessage,
  clockHaltMessage,
  detachedEvent,
  errorText,
  kernelRequest,
  stateEvent,
} from "../protocol.js";
import { READY_TIMEOUT_MS } from "./relay.js";

/**
 * Virtual ms per advance message. The relay's message budget counts per second of the page's own
 * time (real time plus the virtual time it was advanced by): an honest page posts 60 states per
 * virtual second however fast the clock runs, a flooding one is stopped as in the view.
 */
export const ADVANCE_CHUNK_MS = 1000;
/**
 * Chunks of one advance posted ahead of the one they wait for: the page starts the next one as
 * soon as it ends one, instead of idling for a round trip through the host (~1-3 ms per chunk,
 * two cross-process hops: sandboxed frames run in a process of their own). At least PIPELINE of
 * them, and short ones (the steps of a sampled advance) while the ones behind the oldest add up to
 * less than AHEAD_MS of virtual time, at most MAX_AHEAD: cancelling lets at most about
 * ADVANCE_CHUNK_MS more virtual time run.
 */
export const PIPELINE = 2;
export const AHEAD_MS = ADVANCE_CHUNK_MS;
export const MAX_AHEAD = 64;
/**
 * A chunk of a sampled advance ends with its state request's reply; the clock's `advanced` message
 * (one more message each way) is asked for only every TOKEN_CHUNKS chunks or TOKEN_MS of virtual
 * time, and for the chunks no state request follows: within any window of chunks posted ahead.
 */
export const TOKEN_CHUNKS = 16;
export const TOKEN_MS = AHEAD_MS / 4;
/** Most steps (states) of one sampled advance; the engine checks it first (HeadlessPage.MAX_SAMPLES). */
export const MAX_SAMPLES = 100_000;
/**
 * Most characters (as JSON) of the states of one sampled advance together; an advance whose
 * states grow past it (or past the engine's `max_chars`, if lower) fails, with no states. Each
 * state alone is bounded by the relay (MAX_STATE_CHARS).
 */
export const MAX_SAMPLE_CHARS = 64 * 1024 * 1024;
/**
 * Characters of states per `_samples` message, below the engine's bound on one message from a view
 * (1 MiB, protocol.py MAX_MESSAGE_BYTES); a state of up to MAX_STATE_CHARS goes alone.
 */
export const PART_CHARS = 900_000;
/** Ids of the host's own state requests: never a kernel id ("r<counter>-<salt>"). */
const INTERNAL_ID = "\u0000advance-";

/**
 * @typedef {{op: "send", msg: unknown} | {op: "values", values: Record<string, unknown>}
 *   | {op: "reload", html?: string} | {op: "height", px: number} | {op: "advance", token: string, ms: number, every?: number, max_chars?: number}
 *   | {op: "cancel", token: string}} HostOp
 */

/**
 * An advance to run: `every` ms per step, `steps` of them (the last one ends at `ms`), the states
 * of all of them bounded by `maxChars` (sampled only: a plain advance has one step and no `every`).
 * @typedef {{token: string, ms: number, every: number | null, steps: number, maxChars: number}} AdvanceRequest
 */

/**
 * @typedef {{ok: true, state: Record<string, unknown>} | {ok: false, error: {code: string, message: string}}} Result
 */
/**
 * @typedef {{ok: true, state: Record<string, unknown>}
 *   | {ok: true, state: Record<string, unknown>, states: Record<string, unknown>[], samples: number}
 *   | {ok: false, error: {code: string, message: string}}} AdvanceResult
 */

/**
 * How many steps a sampled advance of `ms` in steps of `every` takes: the last one ends at `ms`,
 * shorter than `every` when `every` does not divide it; at least one (the state at the end).
 * The engine counts them the same way (HeadlessPage._samples).
 * @param {number} ms
 * @param {number} every
 */
export function sampleCount(ms, every) {
  return Math.max(1, Math.ceil(ms / every - 1e-9));
}

/**
 * @typedef {object} HostOptions
 * @property {string} viewId
 * @property {string} html  the target page (target API, and clock when virtual, injected)
 * @property {Record<string, unknown>} values  the `values` trait
 * @property {(batch: unknown[]) => void} deliver  takes the view -> kernel messages of one task, in order
 * @property {(status: "loading" | "ready" | "error", detail?: string) => void} [onStatus]  the page's status
 * @property {(why: string) => void} [onStopped]  the page was stopped (it broke its message budget)
 * @property {boolean} [attach]  send the view's `attached` event (a headless host, which is the view)
 * @property {number} [height]  iframe height in CSS pixels
 * @property {string} [title]  the target iframe's title attribute
 * @property {boolean} [focusable]  whether the target iframe is a tab stop (default true)
 */

/**
 * Mount one target view in this page.
 * @param {HostOptions} opts
 */
export function createHost(opts) {
  const { viewId } = opts;
  const controller = new AbortController();
  let html = opts.html;
  let values = opts.values ?? {};
  let height = opts.height ?? 420;

  /** @type {unknown[]} */
  let outbox = [];
  let flushQueued = false;
  function flush() {
    flushQueued = false;
    const batch = outbox;
    outbox = [];
    if (batch.length === 0) return;
    try {
      opts.deliver(batch);
    } catch (err) {
      console.error(`splitbrain host: could not hand messages on: ${errorText(err)}`);
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
    frameTitle: () => opts.title ?? "splitbrain headless target",
    focusable: opts.focusable,
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
    onStatus: (status, detail) => {
      opts.onStatus?.(status, detail);
      for (const wake of [...statusWaiters]) wake();
    },
    onStopped: (why) => opts.onStopped?.(why),
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
    relay.fromKernel(kernelRequest(id, "state"));
    return { id, done };
  }

  /**
   * Resolves true once the page is ready, false when it stops or `ms` pass first.
   * @param {number} ms
   * @returns {Promise<boolean>}
   */
  function whenReady(ms) {
    if (relay.ready) return Promise.resolve(true);
    if (relay.stopped) return Promise.resolve(false); // stopped for flooding: no ready is coming
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

  /** @type {AdvanceRequest[]} advances waiting for the one that runs */
  const advances = [];
  /** @type {{token: string, cancel: (why: string) => void} | null} */
  let current = null;
  /** @type {HostOp[] | null} ops that came while an advance waited for its page to be ready */
  let deferred = null;

  /**
   * @param {string} code
   * @param {string} message
   * @returns {{ok: false, error: {code: string, message: string}}}
   */
  const failure = (code, message) => ({ ok: false, error: { code, message } });

  /**
   * Run the clock forward by `ms` in `steps` steps, each posted as chunks of at most
   * ADVANCE_CHUNK_MS with a state request behind its last chunk only, so that its reply is the
   * page's state at the end of the step. A plain advance is one step, answered with that state; a
   * sampled one takes every step's state, in order, and sends them on in `_samples` parts of at
   * most PART_CHARS as they fill (the last part comes with the result).
   * @param {AdvanceRequest} request
   * @returns {Promise<AdvanceResult>}
   */
  async function runAdvance({ token, ms, every, steps, maxChars }) {
    let cancelled = "";
    /** @type {AdvanceResult | null} the first failure: a failed reply, the page lost, too many characters */
    let failed = null;
    /** @type {() => void} */
    let interrupt = () => {};
    /** @type {Promise<void>} settles when the advance is cancelled (its deadline passed, or closed) or fails */
    const interrupted = new Promise((resolve) => {
      interrupt = () => resolve();
    });
    /** @param {AdvanceResult} why */
    const fail = (why) => {
      failed ??= why;
      interrupt();
    };
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
    // A chunk without a state request behind it has only the clock's word to end it: a page that
    // stops or reloads (its new clock knows nothing of the chunk) fails the advance here.
    const { nonce, loadId } = relay;
    const watch = () => {
      if (relay.stopped) fail(failure("not_ready", relay.stopped));
      else if (!relay.ready || relay.nonce !== nonce || relay.loadId !== loadId) {
        fail(failure("not_ready", "the target page was reloaded during the advance"));
      }
    };
    statusWaiters.add(watch);
    const sampled = every !== null;
    const total = Math.max(0, ms);
    let step = 0; // steps whose last chunk is posted
    let posted = 0; // virtual ms posted
    let inFlightMs = 0;
    /** @type {{chunk: number, token: string, ended: Promise<null> | null, reply: Promise<Result> | null}[]} */
    const inFlight = []; // chunks posted and not ended, oldest first (each has `ended` or `reply`, or both)
    /** @type {Set<string>} ids of the state requests not answered yet */
    const pending = new Set();
    /** @type {Map<number, Result>} replies that came before an earlier step's (taken in step order) */
    const early = new Map();
    let taken = 0; // steps whose reply was taken
    /** @type {Record<string, unknown> | null} */
    let last = null;
    let chars = 0;
    /** @type {Record<string, unknown>[]} */
    let part = [];
    let partChars = 0;
    /** @type {() => void} */
    let allTaken = () => {};
    /** @type {Promise<null>} */
    const everyReply = new Promise((resolve) => {
      allTaken = () => resolve(null);
    });
    const stopped = interrupted.then(() => failed ?? failure("timeout", cancelled));

    /**
     * @param {number} index
     * @param {Result} result
     */
    function take(index, result) {
      early.set(index, result);
      while (!failed && early.has(taken)) {
        const reply = /** @type {Result} */ (early.get(taken));
        early.delete(taken);
        taken += 1;
        if (!reply.ok) return fail(reply);
        last = reply.state;
        if (!sampled) continue;
        const size = JSON.stringify(reply.state).length; // it went through the relay's bound: it can
        chars += size;
        if (chars > maxChars) {
          const message =
            `the states of a sampled advance came to more than ${maxChars} characters (as JSON) after ` +
            `${taken} of ${steps} steps: sample less often (a larger every), or fewer seconds at a time`;
          return fail(failure("target_error", message));
        }
        if (part.length > 0 && partChars + size > PART_CHARS) {
          out(advanceSamplesMessage(viewId, token, part));
          flush(); // one part per hand-over: each stays within the engine's bound on a message
          part = [];
          partChars = 0;
        }
        part.push(reply.state);
        partChars += size;
      }
      if (taken === steps) allTaken();
    }

    let sinceToken = 0; // chunks posted since the last one the clock answers with `advanced`
    let tokenAt = 0; // virtual ms where that one ends
    function postChunk() {
      const end = step + 1 >= steps ? total : (step + 1) * /** @type {number} */ (every);
      const rest = Math.max(0, end - posted);
      const stepEnds = rest <= ADVANCE_CHUNK_MS;
      const chunk = stepEnds ? rest : ADVANCE_CHUNK_MS;
      posted = stepEnds ? end : posted + chunk;
      if (stepEnds) step += 1;
      // The clock's `advanced` for a chunk with no state request behind it, and for one in
      // TOKEN_CHUNKS or every TOKEN_MS of virtual time: a state request's reply ends its chunk too,
      // but a page's handler waiting on virtual time holds up the replies, never the clock.
      sinceToken += 1;
      const answered = !stepEnds || sinceToken >= TOKEN_CHUNKS || posted - tokenAt >= TOKEN_MS;
      const token = answered ? `${++chunkCounter}` : "";
      /** @type {Promise<null> | null} */
      let ended = null;
      if (answered) {
        ended = new Promise((resolve) => chunkDone.set(token, () => resolve(null)));
        sinceToken = 0;
        tokenAt = posted;
      }
      // `more`: the clock's `unseen` stays true up to the last frame of the whole advance.
      const payload = { ms: chunk, more: step < steps, ...(answered ? { token } : {}) };
      frame.iframe().contentWindow?.postMessage(clockAdvanceMessage(payload), "*");
      /** @type {Promise<Result> | null} */
      let reply = null;
      if (stepEnds) {
        const index = step - 1;
        const request = stateRequest();
        pending.add(request.id);
        reply = request.done;
        void reply.then((result) => {
          pending.delete(request.id);
          take(index, result);
        });
      }
      inFlight.push({ chunk, token, ended, reply });
      inFlightMs += chunk;
    }

    function fill() {
      while (
        step < steps &&
        inFlight.length < MAX_AHEAD &&
        (inFlight.length < PIPELINE || inFlightMs - inFlight[0].chunk < AHEAD_MS)
      ) {
        postChunk();
      }
    }

    try {
      postChunk();
      virtualMs += inFlight[0].chunk;
      releaseDeferred(); // ops sent behind the advance reach the page after its first chunk
      fill();
      while (inFlight.length > 0) {
        const head = inFlight[0];
        // The clock runs the chunks in order and holds the state requests behind them: the first
        // `advanced` or reply of the oldest chunk or of any after it says that it is done.
        const ended = inFlight.find((c) => c.ended !== null)?.ended;
        const replied = inFlight.find((c) => c.reply !== null)?.reply;
        const outcome = await Promise.race([ended ?? stopped, replied ?? stopped, stopped]);
        if (outcome && !outcome.ok) return outcome;
        if (failed) return failed;
        if (cancelled) return failure("timeout", cancelled);
        if (head.token) chunkDone.delete(head.token);
        inFlight.shift();
        inFlightMs -= head.chunk;
        // The chunk ended: what the page posts from here on belongs to the next one.
        if (inFlight.length > 0) virtualMs += inFlight[0].chunk;
        fill();
      }
      const outcome = await Promise.race([everyReply, stopped]);
      if (outcome) return outcome;
      if (last === null) return failure("internal_error", "host advance: no state after the last step");
      return sampled ? { ok: true, state: last, states: part, samples: steps } : { ok: true, state: last };
    } finally {
      statusWaiters.delete(watch);
      // Ended early (cancelled, its deadline passed, a step failed): what it posted must not run on.
      if (inFlight.length > 0) frame.iframe().contentWindow?.postMessage(clockHaltMessage(), "*");
      for (const { token } of inFlight) if (token) chunkDone.delete(token);
      for (const id of pending) internal.delete(id); // a failed or cancelled advance: replies dropped
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
      const request = /** @type {AdvanceRequest} */ (advances.shift());
      /** @type {AdvanceResult} */
      let result;
      try {
        result = await runAdvance(request);
      } catch (err) {
        result = failure("internal_error", `host advance: ${errorText(err)}`);
      }
      current = null;
      if (result.ok) out(stateEvent(viewId, result.state));
      // A sampled advance's last state is the last of its states: not sent twice.
      /** @type {import("../protocol.js").AdvanceOutcome} */
      const answer = result.ok && "states" in result ? { ok: true, states: result.states, samples: result.samples } : result;
      out(advanceResultMessage(viewId, request.token, answer));
    }
  }

  /** @param {HostOp} op */
  function handle(op) {
    if (op.op === "cancel") {
      const queued = advances.findIndex((a) => a.token === op.token);
      if (queued >= 0) {
        advances.splice(queued, 1);
        const result = failure("timeout", "cancelled before it ran");
        out(advanceResultMessage(viewId, op.token, result));
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
    } else if (op.op === "height") {
      height = Number(op.px) > 0 ? Number(op.px) : height;
      frame.iframe().style.height = `${height}px`;
    } else if (op.op === "reload") {
      if (typeof op.html === "string") html = op.html;
      frame.load();
    } else if (op.op === "advance") {
      /** @param {string} why */
      const refuse = (why) => out(advanceResultMessage(viewId, op.token, failure("invalid_value", why)));
      const ms = Number(op.ms);
      const every = op.every === undefined || op.every === null ? null : Number(op.every);
      if (!Number.isFinite(ms) || ms < 0) return refuse(`cannot advance by ${op.ms} ms`);
      if (every !== null && !(Number.isFinite(every) && every > 0)) return refuse(`cannot sample every ${op.every} ms`);
      const steps = every === null ? 1 : sampleCount(ms, every);
      if (steps > MAX_SAMPLES) {
        return refuse(`advancing ${ms} ms every ${every} ms takes ${steps} samples, more than the ${MAX_SAMPLES} of one advance`);
      }
      const cap = Number(op.max_chars);
      const maxChars = Number.isFinite(cap) && cap > 0 ? Math.min(cap, MAX_SAMPLE_CHARS) : MAX_SAMPLE_CHARS;
      advances.push({ token: op.token, ms, every, steps, maxChars });
      void pumpAdvances();
    }
  }

  /** @param {HostOp[]} ops */
  function run(ops) {
    for (const op of ops) handle(op);
  }

  frame.load();
  if (opts.attach) {
    out(attachedEvent(viewId, navigator.userAgent.slice(0, 200)));
  }

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
      for (const request of advances.splice(0)) out(advanceResultMessage(viewId, request.token, closed));
      current?.cancel("the headless page was closed");
      controller.abort();
      frame.dispose();
      // Whatever else went into the page (a test's extra frames) goes too: the next view starts clean.
      document.body.replaceChildren();
      out(detachedEvent(viewId));
      flush();
    },
  };
}
