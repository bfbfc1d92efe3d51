// @ts-check
/**
 * target_api.js: injected by the registry into every target page, before the
 * page's own scripts, as a classic script (js/build.mjs bundles it to an IIFE).
 *
 * It gives the page `window.SplitBrain` (docs/protocol.md section 2, "The
 * target's API") and speaks the view <-> target half of the wire protocol:
 *
 * - accepts only messages whose `event.source` is `window.parent`, whose
 *   `source` is "splitbrain-parent" and whose nonce is `window.name` (read
 *   once, when the target API loads); everything else is ignored silently, since
 *   the iframe's origin is "null" and origin is no identity;
 * - buffers accepted messages until the page calls `ready()` (at most
 *   MAX_BUFFERED; newer ones are dropped and counted), then runs them in order;
 * - runs handlers strictly one after another, awaiting promises, and answers
 *   each message with a `state` (the handler's object, else the last reported
 *   state) or an `error` with code `target_error`;
 * - posts `ready` (with a fresh id per page load, so the view notices a page
 *   that reloads itself) with targetOrigin '*' and everything else to the
 *   origin of the first accepted parent message ('*' while unknown or opaque);
 * - posts at most two of the states a page reports within one task (the first
 *   at once, the last when the task's code is done), so a page that reports in
 *   a tight loop costs the notebook page two messages, not one per call.
 *
 * In a page that is not framed (`window.parent === window`) the API exists but
 * posts nothing and listens to nothing, so a target can be opened on its own.
 */
import {
  MAX_BUFFERED,
  errorText,
  isParentMessage,
  isTargetMessage,
  targetMessage,
  unwrapValues,
} from "../protocol.js";
import { takePicture } from "./picture.js";

/** @typedef {import("../protocol.js").Values} Values */
/** @typedef {import("../protocol.js").State} State */
/** @typedef {import("../protocol.js").ParentMessage} ParentMessage */
/** @typedef {import("../protocol.js").ErrorInfo} ErrorInfo */

/**
 * What a handler gets besides the values.
 * @typedef {object} HandlerContext
 * @property {string | undefined} id  the request id; undefined for the on-ready catch-up apply
 * @property {(nameOrPath: string) => unknown} get
 *   a value by dotted path (`"settings.speed"`) or by unique leaf name
 *   (`"speed"`); undefined when absent or when the leaf name is ambiguous
 */

/**
 * @callback ApplyHandler
 * @param {Values} values  bare values keyed by dotted path
 * @param {HandlerContext} ctx
 * @returns {unknown}  a state object (or a promise of one); anything else means "use the last state"
 */

/**
 * @callback StateHandler
 * @returns {unknown}  a fresh state object (or a promise of one)
 */

/**
 * @callback ActionHandler
 * @param {string} name  one of the manifest's `actions` (the kernel checks the name before it sends it)
 * @param {HandlerContext} ctx  `ctx.get` reads the values the page was last given
 * @returns {unknown}  a state object (or a promise of one); anything else means "use the last state"
 */

/**
 * `window.SplitBrain`.
 * @typedef {object} SplitBrainApi
 * @property {(fn: ApplyHandler) => void} onApply  handle `apply` (and `reset` when no onReset handler is set)
 * @property {(fn: ApplyHandler) => void} onReset  handle `reset`; gets the manifest defaults
 * @property {(fn: StateHandler) => void} onState  answer `state` requests with a fresh state
 * @property {(fn: ActionHandler) => void} onAction  run the manifest's actions (`action` requests)
 * @property {(fn: () => unknown) => void} onSnapshot  give the picture for `snapshot` requests: a canvas,
 *   an image or an ImageBitmap (or a promise of one); without it the page's largest canvas is taken (1.8)
 * @property {(state: State) => void} state  report a state (store it; post it once ready)
 * @property {() => void} ready  start listening: flush buffered messages in order; idempotent
 * @property {string} nonce  this page's nonce (`window.name` when the target API loaded)
 * @property {boolean} isReady  whether `ready()` was called (the headless clock runs until it is)
 */

/**
 * The parts of `window` the target API uses (a fake one in tests).
 * @typedef {object} TargetApiWindow
 * @property {string} name
 * @property {{postMessage: (message: unknown, targetOrigin: string) => void}} parent
 * @property {(type: "message" | "pagehide" | "load", listener: (event: MessageEvent) => void) => void} addEventListener
 */

/**
 * Whether the view will accept `payload` as a state: checked with the view's
 * own validator, so there is one definition of a valid state.
 * @param {unknown} payload
 * @returns {payload is State}
 */
function isStatePayload(payload) {
  return isTargetMessage(targetMessage("-", { type: "state", payload }), "-");
}

/**
 * @param {unknown} origin  `event.origin` of the first accepted parent message
 * @returns {string} the targetOrigin for every later post
 */
function replyOriginFrom(origin) {
  return typeof origin === "string" && origin !== "" && origin !== "null" ? origin : "*";
}

/**
 * @param {Values} values
 * @param {string | undefined} id
 * @returns {HandlerContext}
 */
function makeContext(values, id) {
  return Object.freeze({
    id,
    /** @param {string} nameOrPath */
    get(nameOrPath) {
      if (Object.prototype.hasOwnProperty.call(values, nameOrPath)) return values[nameOrPath];
      let matches = 0;
      /** @type {unknown} */
      let found;
      for (const [path, value] of Object.entries(values)) {
        if (path.slice(path.lastIndexOf(".") + 1) === nameOrPath) {
          matches += 1;
          found = value;
        }
      }
      return matches === 1 ? found : undefined;
    },
  });
}

/**
 * @param {string} method
 * @param {unknown} fn
 */
function requireFunction(method, fn) {
  if (typeof fn !== "function") {
    throw new TypeError(`SplitBrain.${method} expects a function, got ${fn === null ? "null" : typeof fn}`);
  }
}

/**
 * Install `SplitBrain` on `targetWindow` and return it. A second install on
 * the same window returns the first one unchanged.
 * @param {TargetApiWindow} targetWindow
 * @returns {SplitBrainApi}
 */
export function installTargetApi(targetWindow) {
  const existing = /** @type {{SplitBrain?: SplitBrainApi}} */ (/** @type {unknown} */ (targetWindow)).SplitBrain;
  if (existing) return existing;

  const nonce = typeof targetWindow.name === "string" ? targetWindow.name : "";
  // Taken, not left: window.name survives navigation, and no other document of this frame may find
  // the nonce there (the view replaces a frame whose document changed: ../host/frame.js).
  if (nonce) targetWindow.name = "";
  // Different per load (a page that reloads itself says so with it); no secret, only different.
  const load = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  const parentWindow = targetWindow.parent;
  const framed = parentWindow != null && parentWindow !== /** @type {unknown} */ (targetWindow);

  /** @type {ApplyHandler | null} */
  let applyHandler = null;
  /** @type {ApplyHandler | null} */
  let resetHandler = null;
  /** @type {StateHandler | null} */
  let stateHandler = null;
  /** @type {ActionHandler | null} */
  let actionHandler = null;
  /** @type {(() => unknown) | null} */
  let snapshotHandler = null;
  /** @type {Values} every value the page was given (applies merged, a reset's defaults replacing them) */
  let givenValues = {};
  /** @type {State | null} */
  let lastState = null;
  let isReady = false;
  /** @type {string | null} null until the first parent message arrives */
  let replyOrigin = null;
  /** @type {ParentMessage[]} accepted before ready(), oldest first */
  const buffered = [];
  let droppedBeforeReady = 0;
  /** Handlers run one after another: each waits for the previous one to settle. */
  let handlerChain = Promise.resolve();
  /** a `state()` of this task that waits for the task's end (a later one in the same task replaces it) */
  let pendingState = /** @type {State | null} */ (null);
  /** whether a `state()` was posted in this task (reset in a microtask, when the task's code is done) */
  let postedThisTask = false;

  /**
   * @param {Record<string, unknown>} body  the message without source and nonce
   * @param {string | undefined} id  added only when defined
   * @param {string} [targetOrigin]
   */
  function post(body, id, targetOrigin = replyOrigin ?? "*") {
    flushState(); // a state reported before this message goes first, as the page reported it
    parentWindow.postMessage(targetMessage(nonce, body, id), targetOrigin);
  }

  /**
   * @param {string | undefined} id
   * @param {unknown} err
   */
  function postError(id, err) {
    /** @type {ErrorInfo} */
    const error = { code: "target_error", message: errorText(err) };
    try {
      post({ type: "error", error }, id);
    } catch (postFailure) {
      console.error("SplitBrain: could not report an error to the view:", postFailure);
    }
  }

  /** Post the state that waited for its task's end, if any. */
  function flushState() {
    if (pendingState === null) return;
    const payload = pendingState;
    pendingState = null;
    try {
      post({ type: "state", payload }, undefined);
    } catch (err) {
      postError(undefined, `a state could not be sent: ${errorText(err)}`);
    }
  }

  /** Post a reported state: the first of a task at once, the last of the rest when the task ends. */
  function reportState(/** @type {State} */ state) {
    if (postedThisTask) {
      pendingState = state;
      return;
    }
    postedThisTask = true;
    Promise.resolve().then(() => {
      postedThisTask = false;
      flushState();
    });
    post({ type: "state", payload: state }, undefined);
  }

  /**
   * Answer a handled message with a state (its own object, else the last one).
   * @param {string | undefined} id
   * @param {unknown} result  what the handler returned, awaited
   */
  function postState(id, result) {
    if (isStatePayload(result)) lastState = result;
    try {
      post({ type: "state", payload: lastState ?? {} }, id);
    } catch (err) {
      // e.g. DataCloneError: the state holds a function or a DOM node
      postError(id, `the state could not be sent: ${errorText(err)}`);
    }
  }

  /**
   * @param {ParentMessage} message
   * @returns {unknown} what the page's handler returned (maybe a promise)
   */
  function runHandler(message) {
    if (message.type === "state") return stateHandler ? stateHandler() : undefined;
    if (message.type === "action") {
      if (!actionHandler) throw new Error("the target page registered no SplitBrain.onAction handler");
      const name = String(/** @type {Record<string, unknown>} */ (message.payload).name);
      return actionHandler(name, makeContext(givenValues, message.id));
    }
    const ctxValues = unwrapValues(message.payload);
    const ctx = makeContext(ctxValues, message.id);
    const handler = message.type === "reset" ? resetHandler ?? applyHandler : applyHandler;
    if (!handler) throw new Error(`the target page registered no SplitBrain.onApply handler (got "${message.type}")`);
    return handler(ctxValues, ctx);
  }

  /**
   * Answer a snapshot with the picture and the last state (no handler of the page's state runs).
   * @param {string | undefined} id
   */
  async function answerSnapshot(id) {
    let picture;
    try {
      picture = await takePicture(snapshotHandler, /** @type {Document} */ (/** @type {any} */ (targetWindow).document));
    } catch (err) {
      postError(id, err);
      return;
    }
    post({ type: "state", payload: lastState ?? {}, picture }, id);
  }

  /** @param {ParentMessage} message */
  async function handle(message) {
    if (message.type === "snapshot") {
      await answerSnapshot(message.id);
      return;
    }
    let result;
    try {
      result = await runHandler(message);
    } catch (err) {
      postError(message.id, err);
      return;
    }
    // Only values the page took count as given (the kernel puts refused ones back).
    if (message.type === "apply" || message.type === "reset") {
      const ctxValues = unwrapValues(message.payload);
      givenValues = message.type === "reset" ? { ...ctxValues } : { ...givenValues, ...ctxValues };
    }
    postState(message.id, result);
  }

  /** @param {ParentMessage} message */
  function schedule(message) {
    handlerChain = handlerChain.then(() => handle(message));
  }

  /** @param {MessageEvent} event */
  function onMessage(event) {
    if (event.source !== /** @type {unknown} */ (parentWindow)) return;
    const data = event.data;
    if (!isParentMessage(data, nonce)) return;
    if (replyOrigin === null) replyOrigin = replyOriginFrom(event.origin);
    if (isReady) {
      schedule(data);
    } else if (buffered.length < MAX_BUFFERED) {
      buffered.push(data);
    } else {
      droppedBeforeReady += 1;
    }
  }

  /** @type {SplitBrainApi} */
  const api = Object.freeze({
    onApply(fn) {
      requireFunction("onApply", fn);
      applyHandler = fn;
    },
    onReset(fn) {
      requireFunction("onReset", fn);
      resetHandler = fn;
    },
    onState(fn) {
      requireFunction("onState", fn);
      stateHandler = fn;
    },
    onAction(fn) {
      requireFunction("onAction", fn);
      actionHandler = fn;
    },
    onSnapshot(fn) {
      requireFunction("onSnapshot", fn);
      snapshotHandler = fn;
    },
    state(state) {
      if (!isStatePayload(state)) {
        const got = state === null ? "null" : Array.isArray(state) ? "an array" : typeof state;
        throw new TypeError(`SplitBrain.state expects a plain object, got ${got}`);
      }
      lastState = state;
      if (isReady && framed) reportState(state);
    },
    ready() {
      if (isReady) return;
      isReady = true;
      if (!framed) return;
      post({ type: "ready", load }, undefined, "*");
      for (const message of buffered.splice(0)) schedule(message);
      if (droppedBeforeReady > 0) {
        const text =
          `${droppedBeforeReady} message(s) arrived before SplitBrain.ready() beyond the buffer ` +
          `of ${MAX_BUFFERED} and were dropped`;
        console.warn(`SplitBrain: ${text}`);
        postError(undefined, text);
      }
    },
    get nonce() {
      return nonce;
    },
    get isReady() {
      return isReady;
    },
  });

  Object.defineProperty(targetWindow, "SplitBrain", { value: api, enumerable: true });
  if (framed) {
    targetWindow.addEventListener("message", onMessage);
    // The document is going away (a navigation, a reload, even one started before it finished
    // loading): the view is told before another document takes the frame (protocol 1.7). Added
    // first, so no listener of the page's can stop it.
    targetWindow.addEventListener("pagehide", () => post({ type: "leaving" }, undefined, "*"));
    // Its load event, before the frame's: a load of the frame that this page did not announce is
    // another document's (one that took the frame before this page finished loading).
    targetWindow.addEventListener("load", () => post({ type: "loaded" }, undefined, "*"));
  }
  return api;
}

if (typeof window !== "undefined") installTargetApi(window);
