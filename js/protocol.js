// @ts-check
/**
 * Message shapes and validation for splitbrain-widget, wire protocol version 1.
 *
 * A translation of docs/protocol.md (the definition; when they disagree the
 * document is right). Shared by the view (widget.js) and the bridge injected
 * into every target page (bridge.js); splitbrain_widget/protocol.py is the
 * kernel's translation of the same page.
 *
 * Every validator here takes `unknown` and never throws: messages cross realm
 * and trust boundaries, so anything may arrive.
 */

/** The protocol version a view announces in its `attached` event. */
export const PROTOCOL_VERSION = 1;

/** `source` of every view -> target postMessage. */
export const PARENT_SOURCE = "splitbrain-parent";

/** `source` of every target -> view postMessage. */
export const TARGET_SOURCE = "splitbrain-target";

/** Longest error message text sent across a boundary, in UTF-16 code units. */
export const MAX_ERROR_TEXT = 500;

/** Most messages the bridge buffers before the target calls `SplitBrain.ready()`. */
export const MAX_BUFFERED = 10000;

// ---------------------------------------------------------------------------
// Types (docs/protocol.md, section by section)
// ---------------------------------------------------------------------------

/**
 * Parameter values keyed by dotted path, e.g. `{"settings.speed": 12}`.
 * @typedef {Record<string, unknown>} Values
 */

/**
 * A state a target reported: any JSON-like object.
 * @typedef {Record<string, unknown>} State
 */

/** @typedef {"apply" | "reset" | "state"} RequestOp */

/**
 * One error envelope everywhere (protocol.md section 3).
 * @typedef {"no_view" | "not_ready" | "timeout" | "cancelled" | "unknown_param" | "invalid_value"
 *   | "readonly" | "unknown_target" | "target_error" | "truncated_call" | "loop_blocked" | "denied"
 *   | "internal_error"} ErrorCode
 */

/**
 * @typedef {object} ErrorInfo
 * @property {ErrorCode | string} code
 * @property {string} message
 * @property {string} [hint]
 */

// --- 1. kernel <-> view ----------------------------------------------------

/**
 * kernel -> view: apply validated values, reset to the manifest defaults, or
 * ask for a fresh state (`payload` is `{}` then).
 * @typedef {object} KernelRequest
 * @property {"request"} kind
 * @property {string} id  unique within the kernel session; a view applies each id at most once
 * @property {RequestOp} op
 * @property {{values?: Values}} payload
 */

/**
 * view -> kernel: the target handled request `id`.
 * @typedef {object} ReplyOk
 * @property {"reply"} kind
 * @property {string} id
 * @property {string} view_id
 * @property {true} ok
 * @property {State} state
 */

/**
 * view -> kernel: the request failed.
 * @typedef {object} ReplyError
 * @property {"reply"} kind
 * @property {string} id
 * @property {string} view_id
 * @property {false} ok
 * @property {ErrorInfo} error
 */

/** @typedef {ReplyOk | ReplyError} Reply */

/**
 * view -> kernel: something happened outside a request.
 * `attached` carries `{protocol, user_agent?}`, `state` a State,
 * `error` an ErrorInfo (without hint); `ready` and `detached` carry nothing.
 * @typedef {object} ViewEvent
 * @property {"event"} kind
 * @property {string} view_id
 * @property {"attached" | "ready" | "detached" | "state" | "error"} type
 * @property {{protocol: number, user_agent?: string} | State | ErrorInfo} [payload]
 */

/**
 * view -> kernel: chat panel input.
 * @typedef {object} ChatMessage
 * @property {"chat"} kind
 * @property {string} text
 */

/**
 * view -> kernel: the chat panel's Stop button.
 * @typedef {object} CancelMessage
 * @property {"cancel"} kind
 */

/** @typedef {Reply | ViewEvent | ChatMessage | CancelMessage} ViewMessage */

// --- 2. view <-> target ----------------------------------------------------

/** @typedef {"apply" | "reset" | "state"} ParentMessageType */

/**
 * view -> target. `apply` carries values (no `id` for the on-ready catch-up),
 * `reset` the manifest defaults, `state` nothing.
 * @typedef {object} ParentMessage
 * @property {typeof PARENT_SOURCE} source
 * @property {string} nonce
 * @property {ParentMessageType} type
 * @property {string} [id]
 * @property {Values} [payload]
 */

/** @typedef {"ready" | "state" | "error"} TargetMessageType */

/**
 * target -> view: the target is listening. `load` is fresh for every load of the page (the bridge
 * draws it when it runs), so a page that reloads itself, keeping its nonce, is told apart from a
 * repeated ready of the same load.
 * @typedef {object} TargetReady
 * @property {typeof TARGET_SOURCE} source
 * @property {string} nonce
 * @property {"ready"} type
 * @property {string} [load]
 */

/**
 * target -> view: a state; with `id` it answers that request.
 * @typedef {object} TargetState
 * @property {typeof TARGET_SOURCE} source
 * @property {string} nonce
 * @property {"state"} type
 * @property {string} [id]
 * @property {State} payload
 */

/**
 * target -> view: a handler threw (code `target_error`); with `id` it answers that request.
 * @typedef {object} TargetError
 * @property {typeof TARGET_SOURCE} source
 * @property {string} nonce
 * @property {"error"} type
 * @property {string} [id]
 * @property {ErrorInfo} error
 */

/** @typedef {TargetReady | TargetState | TargetError} TargetMessage */

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** @type {ReadonlySet<unknown>} */
const REQUEST_OPS = new Set(["apply", "reset", "state"]);
/** @type {ReadonlySet<unknown>} */
const PARENT_TYPES = new Set(["apply", "reset", "state"]);
/** @type {ReadonlySet<unknown>} */
const TARGET_TYPES = new Set(["ready", "state", "error"]);

/**
 * A plain object: `{}` literal, `Object.create(null)` or a structured clone of
 * one. Checked by prototype depth rather than `=== Object.prototype` so that
 * objects from another realm (another window, a vm context) also qualify.
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isPlainObject(value) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * @param {unknown} id
 * @returns {boolean} true when `id` is absent (undefined) or a string
 */
function isOptionalId(id) {
  return id === undefined || typeof id === "string";
}

/**
 * A value that may arrive wrapped (`{value: 8}`) or bare (`8`): returns the
 * bare value. Only a plain object with an own `value` key is unwrapped, one
 * level deep; anything else comes back unchanged.
 * @param {unknown} v
 * @returns {unknown}
 */
export function unwrapValue(v) {
  if (isPlainObject(v) && Object.prototype.hasOwnProperty.call(v, "value")) return v.value;
  return v;
}

/**
 * `unwrapValue` over each own value of a plain object, into a new plain object
 * (keys such as `__proto__` stay ordinary keys). Anything that is not a plain
 * object gives `{}`.
 * @param {unknown} obj
 * @returns {Values}
 */
export function unwrapValues(obj) {
  if (!isPlainObject(obj)) return {};
  return Object.fromEntries(Object.entries(obj).map(([key, value]) => [key, unwrapValue(value)]));
}

/**
 * A fresh nonce: 128 random bits from `crypto.getRandomValues`, as 32
 * lowercase hex characters.
 * @returns {string}
 */
export function makeNonce() {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * @param {unknown} data
 * @param {string} source
 * @param {unknown} nonce
 * @returns {data is Record<string, unknown>}
 */
function hasEnvelope(data, source, nonce) {
  return (
    isPlainObject(data) &&
    data.source === source &&
    typeof nonce === "string" &&
    nonce !== "" &&
    data.nonce === nonce
  );
}

/**
 * Whether `data` is a target -> view message for this `nonce`: source
 * `"splitbrain-target"`, the same non-empty nonce, a known type, an optional
 * string id, a plain-object payload on `state` and `{code, message}` strings
 * on `error`.
 * @param {unknown} data
 * @param {string} nonce
 * @returns {data is TargetMessage}
 */
export function isTargetMessage(data, nonce) {
  if (!hasEnvelope(data, TARGET_SOURCE, nonce)) return false;
  if (!TARGET_TYPES.has(data.type) || !isOptionalId(data.id)) return false;
  if (data.type === "state") return isPlainObject(data.payload);
  if (data.type === "ready") return data.load === undefined || (typeof data.load === "string" && data.load.length <= 64);
  if (data.type === "error") {
    const error = data.error;
    return isPlainObject(error) && typeof error.code === "string" && typeof error.message === "string";
  }
  return true;
}

/**
 * Whether `data` is a view -> target message for this `nonce`: source
 * `"splitbrain-parent"`, the same non-empty nonce, type apply/reset/state, an
 * optional string id and an optional plain-object payload.
 * @param {unknown} data
 * @param {string} nonce
 * @returns {data is ParentMessage}
 */
export function isParentMessage(data, nonce) {
  if (!hasEnvelope(data, PARENT_SOURCE, nonce)) return false;
  if (!PARENT_TYPES.has(data.type) || !isOptionalId(data.id)) return false;
  return data.payload === undefined || isPlainObject(data.payload);
}

/**
 * Whether `msg` is a kernel -> view request:
 * `{kind:"request", id: string, op: "apply"|"reset"|"state", payload: object}`.
 * @param {unknown} msg
 * @returns {msg is KernelRequest}
 */
export function isKernelRequest(msg) {
  return (
    isPlainObject(msg) &&
    msg.kind === "request" &&
    typeof msg.id === "string" &&
    msg.id !== "" &&
    REQUEST_OPS.has(msg.op) &&
    isPlainObject(msg.payload)
  );
}

/**
 * A readable, bounded description of a thrown value: `"TypeError: msg"` for
 * errors (just the message for a plain `Error`), the string itself for a
 * string, JSON (or `String()`) for anything else. Never throws; at most
 * MAX_ERROR_TEXT UTF-16 code units, without splitting a surrogate pair.
 * @param {unknown} err
 * @returns {string}
 */
export function errorText(err) {
  let text;
  try {
    text = describeThrown(err);
  } catch {
    text = "unprintable error value";
  }
  if (text.length <= MAX_ERROR_TEXT) return text;
  let end = MAX_ERROR_TEXT;
  const lastCode = text.charCodeAt(end - 1);
  if (lastCode >= 0xd800 && lastCode <= 0xdbff) end -= 1; // keep surrogate pairs whole
  return text.slice(0, end);
}

/**
 * @param {unknown} err
 * @returns {string}
 */
function describeThrown(err) {
  if (typeof err === "string") return err || "error (empty message)";
  if (typeof err === "object" && err !== null && typeof (/** @type {any} */ (err).message) === "string") {
    const { name, message } = /** @type {{name?: unknown, message: string}} */ (err);
    const label = typeof name === "string" && name !== "" && name !== "Error" ? name : "";
    if (label && message) return `${label}: ${message}`;
    return message || label || "Error (empty message)";
  }
  if (err === undefined) return "undefined was thrown";
  if (typeof err === "object" && err !== null) {
    try {
      const json = JSON.stringify(err);
      if (typeof json === "string") return json;
    } catch {
      // cyclic or holding a BigInt: fall back to String()
    }
  }
  return String(err);
}
