// @ts-check
/**
 * Message shapes, builders and validation for splitbrain-widget, wire protocol version 1.9.
 *
 * A translation of docs/protocol.md (the definition; when they disagree the
 * document is right). Shared by the notebook view (./view/), the hosts of a target
 * frame (./host/: the relay, the sandbox frame, the headless host page) and what is
 * injected into every target page (./page/: the target API, the virtual clock);
 * splitbrain_widget/protocol.py is the kernel's translation of the same page. Section 1
 * (kernel <-> view) is also a JSON Schema generated from the Python side,
 * docs/protocol.schema.json; the tests hold this module to it with the shared examples in
 * tests/fixtures/protocol_examples.json (js/tests/protocol_schema.test.mjs).
 *
 * Every message the JavaScript side sends it builds here (`replyMessage`, `parentMessage`,
 * `targetMessage`, ...); what it receives it checks here (`isKernelRequest`,
 * `isTargetMessage`, ...). Every validator takes `unknown` and never throws: messages
 * cross realm and trust boundaries, so anything may arrive. Fields a validator does not
 * know are ignored: a later minor version may add them.
 */

/** The protocol's major version: a view announces it in its `attached` event; only it is compared. */
export const PROTOCOL_VERSION = 1;

/** The compatible additions within the major version that this translation knows (docs/protocol.md, Versions). */
export const PROTOCOL_MINOR = 9;

/** `source` of every view -> target postMessage. */
export const PARENT_SOURCE = "splitbrain-parent";

/** `source` of every target -> view postMessage. */
export const TARGET_SOURCE = "splitbrain-target";

/** `source` of every notebook view -> sandbox frame postMessage (./view/view_sandbox.js -> ./host/sandbox.js). */
export const VIEW_SOURCE = "splitbrain-view";

/** `source` of every sandbox frame -> notebook view postMessage (./host/sandbox.js -> ./view/view_sandbox.js). */
export const SANDBOX_SOURCE = "splitbrain-sandbox";

/** Longest error message text sent across a boundary, in UTF-16 code units. */
export const MAX_ERROR_TEXT = 500;

/**
 * The attribute of a target page's `<html>` that forces the kit's colour scheme ("light" or "dark"):
 * an MCP App view sets it to its chat host's theme (../app/app_view.js), the kit reads it
 * (./page/kit.js). A sandboxed frame's prefers-color-scheme follows the browser, not the page around it.
 */
export const THEME_ATTR = "data-splitbrain-theme";

/**
 * The attribute of a target page's `<html>` that says the reader asked for reduced motion ("reduce"):
 * the notebook view sets it from the notebook page's `prefers-reduced-motion`, the kit reads it.
 */
export const MOTION_ATTR = "data-splitbrain-motion";

/**
 * How the page around a target looks: its colour scheme ("" for the reader's own) and whether the
 * reader asked for reduced motion.
 * @typedef {object} Look
 * @property {"light" | "dark" | ""} [theme]
 * @property {boolean} [reducedMotion]
 */

/**
 * The page with its `<html>` saying the look of the page around it ({@link THEME_ATTR},
 * {@link MOTION_ATTR}): the registry's page opens with its doctype (if any), then `<html><head>` of
 * ours (manifest/_page.py `_before_page`), so the attributes go on that tag.
 * @param {string} html
 * @param {Look} look
 * @returns {string}
 */
export function withLook(html, look) {
  const attrs = [];
  if (look.theme === "light" || look.theme === "dark") attrs.push(`${THEME_ATTR}="${look.theme}"`);
  if (look.reducedMotion) attrs.push(`${MOTION_ATTR}="reduce"`);
  return attrs.length ? html.replace(/<html>/i, `<html ${attrs.join(" ")}>`) : html;
}

/** Most messages the target API buffers before the target calls `SplitBrain.ready()`. */
export const MAX_BUFFERED = 10000;

/** Longest `text` of a kernel -> view `code` message, in characters (code points). */
export const MAX_CODE_TEXT = 200000;

/** Longest action name of an `action` request, in characters (code points). */
export const MAX_ACTION_NAME = 200;

/**
 * The state's key for the values a bound page did not take when it got them outside a call (as it
 * opened, on a reset) (1.9): `{"<path>": {asked, held, error?}}` (js/page/bindings.js). The view
 * never lets a later state drop it before it reached the kernel.
 */
export const REFUSED_KEY = "_refused";

/** Most pixels of a snapshot's width or height (1.8): the page scales its picture down to fit. */
export const MAX_PICTURE_SIDE = 1024;
/** Most bytes of a snapshot's PNG (1.8); in base64, MAX_PICTURE_BASE64 characters. */
export const MAX_PICTURE_BYTES = 512 * 1024;
export const MAX_PICTURE_BASE64 = 4 * Math.ceil(MAX_PICTURE_BYTES / 3);

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

/** @typedef {"apply" | "reset" | "state" | "action" | "snapshot"} RequestOp */

/**
 * A picture of the page (1.8): a PNG in base64 and its size in pixels.
 * @typedef {{png: string, width: number, height: number}} Picture
 */

/**
 * The error codes of protocol.md section 3, in its order.
 * @type {readonly ErrorCode[]}
 */
export const ERROR_CODES = /* @__PURE__ */ Object.freeze([
  "no_view",
  "deferred",
  "protocol_mismatch",
  "not_ready",
  "timeout",
  "cancelled",
  "unknown_param",
  "invalid_value",
  "readonly",
  "unknown_target",
  "target_error",
  "truncated_call",
  "loop_blocked",
  "denied",
  "goal_unreachable",
  "not_measured",
  "page_hidden",
  "internal_error",
]);

/**
 * One error envelope everywhere (protocol.md section 3).
 * @typedef {"no_view" | "deferred" | "protocol_mismatch" | "not_ready" | "timeout" | "cancelled" | "unknown_param"
 *   | "invalid_value" | "readonly" | "unknown_target" | "target_error" | "truncated_call" | "loop_blocked"
 *   | "denied" | "goal_unreachable" | "not_measured" | "page_hidden" | "internal_error"} ErrorCode
 */

/**
 * @typedef {object} ErrorInfo
 * @property {ErrorCode | string} code
 * @property {string} message
 * @property {string} [hint]
 */

// --- 1. kernel <-> view ----------------------------------------------------

/**
 * kernel -> view: apply validated values, reset to the manifest defaults, ask for
 * a fresh state (`payload` is `{}` then), or run the manifest's action
 * `payload.name` (1.5).
 * @typedef {object} KernelRequest
 * @property {"request"} kind
 * @property {string} id  unique within the kernel session; a view applies each id at most once
 * @property {RequestOp} op
 * @property {{values?: Values, name?: string}} payload  `name` for `action` only
 */

/**
 * The chat panel's live feed, one event at a time (the agent's events, and two notices).
 * @typedef {{kind: "text", text: string}
 *   | {kind: "tool_started", call_id: string, name: string, arguments: Record<string, unknown>, label?: string}
 *   | {kind: "tool_progress", call_id: string, name: string, arguments: Record<string, unknown>, label: string}
 *   | {kind: "tool_finished", call_id: string, name: string, arguments: Record<string, unknown>,
 *      result: Record<string, any>, ok: boolean, label?: string}
 *   | {kind: "retry_wait", seconds: number, source: string, attempt: number, model: string, status: number | null}
 *   | {kind: "run_deadline", seconds: number}
 *   | {kind: "fallback", from_model: string, to_model: string, reason: string}
 *   | {kind: "busy", text: string}
 *   | {kind: "control_error", text: string}} ChatEvent
 */

/**
 * kernel -> view: one chat panel event.
 * @typedef {object} ChatEventMessage
 * @property {"chat_event"} kind
 * @property {ChatEvent} event
 */

/**
 * kernel -> view: the agent wants to run `tool`; `asking` lists the parameters (or the tool)
 * whose approval policy is "ask".
 * @typedef {object} ApprovalRequest
 * @property {"approval_request"} kind
 * @property {string} id
 * @property {string} tool
 * @property {Record<string, unknown>} arguments
 * @property {string[]} asking
 * @property {string} [label]  the arguments in short, as the tool's definition renders them
 */

/**
 * kernel -> view: the approval request `id` was answered, timed out or cancelled.
 * @typedef {object} ApprovalClosed
 * @property {"approval_closed"} kind
 * @property {string} id
 */

/**
 * kernel -> view: the answer to `copy_code`, the audit's changes as a Python cell
 * (`sim.audit.to_code()`), at most MAX_CODE_TEXT characters.
 * @typedef {object} CodeMessage
 * @property {"code"} kind
 * @property {string} text
 */

/** @typedef {KernelRequest | ChatEventMessage | ApprovalRequest | ApprovalClosed | CodeMessage} KernelMessage */

/**
 * view -> kernel: the target handled request `id`.
 * @typedef {object} ReplyOk
 * @property {"reply"} kind
 * @property {string} id
 * @property {string} view_id
 * @property {true} ok
 * @property {State} state
 * @property {Picture} [picture]  the answer to a `snapshot` (1.8)
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
 * view -> kernel: something happened outside a request. `attached` carries
 * `{protocol, user_agent?, visible?}` (the handshake), `state` a State, `error`
 * `{code, message}`, `visibility` (1.6) `{visible, cause?}`; `ready` and `detached` carry nothing.
 * @typedef {{kind: "event", view_id: string, type: "attached", payload: {protocol: number, user_agent?: string, visible?: boolean}}
 *   | {kind: "event", view_id: string, type: "ready" | "detached"}
 *   | {kind: "event", view_id: string, type: "visibility", payload: {visible: boolean, cause?: VisibilityCause}}
 *   | {kind: "event", view_id: string, type: "state", payload: State}
 *   | {kind: "event", view_id: string, type: "error", payload: {code: ErrorCode, message: string}}} ViewEvent
 */

/**
 * view -> kernel: the chat panel's input, its Stop button, the retry banner's Skip wait, a
 * decision on an approval request, a change from the parameter inspector, Copy as code, and an
 * action's button in the inspector (1.5).
 * @typedef {{kind: "chat", text: string} | {kind: "cancel"} | {kind: "skip_wait"}
 *   | {kind: "approval", id: string, approved: boolean} | {kind: "set", values: Values}
 *   | {kind: "copy_code"} | {kind: "act", name: string}} PanelMessage
 */

/** @typedef {Reply | ViewEvent | PanelMessage} ViewMessage */

// --- 2. view <-> target ----------------------------------------------------

/** @typedef {"apply" | "reset" | "state" | "action" | "snapshot"} ParentMessageType */

/**
 * view -> target. `apply` carries values (no `id` for the on-ready catch-up),
 * `reset` the manifest defaults, `state` nothing, `action` `{name}` (1.5).
 * @typedef {object} ParentMessage
 * @property {typeof PARENT_SOURCE} source
 * @property {string} [nonce]  never sent since 1.7; a view of 1.6 sent the page's
 * @property {ParentMessageType} type
 * @property {string} [id]
 * @property {Values} [payload]  for `action`: `{name: string}`
 */

/** @typedef {"ready" | "state" | "error"} TargetMessageType */

/**
 * target -> view: the target is listening. `load` is fresh for every load of the page (the target API
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

/**
 * host -> target, headless pages only (the virtual clock, ./page/clock.js): run `ms` of virtual
 * time, `more` saying that another chunk of the same advance follows and `token` asking for an
 * `advanced` message when it is done; or end the running advance early (`halt`, 1.7). No nonce,
 * as for every view -> target message.
 * @typedef {{source: typeof PARENT_SOURCE, type: "advance", payload: {ms: number, more: boolean, token?: string}}
 *   | {source: typeof PARENT_SOURCE, type: "halt"}} ClockMessage
 */

/**
 * notebook view -> its sandbox frame (section 2, *The sandbox frame*): ops for the host in it (./host/host.js
 * HostOp; the first is `{op: "create", opts}`).
 * @typedef {object} ViewOpsMessage
 * @property {typeof VIEW_SOURCE} source
 * @property {string} nonce  the sandbox frame's
 * @property {unknown[]} ops
 */

/**
 * sandbox frame -> notebook view, without its source and nonce: `hello` once it listens, the
 * view -> kernel `messages` of one task, the target's `status`, why the target was `stopped`.
 * @typedef {{hello?: boolean, messages?: unknown[], status?: {status: string, detail: string | null}, stopped?: string}} SandboxReport
 */

// --- 4. headless engine <-> host page ----------------------------------------

/**
 * What an advance came to: the page's state after it (a plain advance), the states the
 * `_samples` parts did not carry and the number of steps (a sampled one), or why it failed.
 * @typedef {{ok: true, state: State} | {ok: true, states: State[], samples: number}
 *   | {ok: false, error: {code: ErrorCode | string, message: string}}} AdvanceOutcome
 */

/**
 * host page -> engine: the advance `token` ended (once per advance op, cancelled ones included).
 * @typedef {object} AdvanceResultMessage
 * @property {"_advance"} kind
 * @property {string} view_id
 * @property {string} token
 * @property {AdvanceOutcome} result
 */

/**
 * host page -> engine: the next states of the sampled advance `token`, in step order, while it runs.
 * @typedef {object} AdvanceSamplesMessage
 * @property {"_samples"} kind
 * @property {string} view_id
 * @property {string} token
 * @property {State[]} states
 */

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** @type {ReadonlySet<unknown>} */
const REQUEST_OPS = new Set(["apply", "reset", "state", "action", "snapshot"]);
/** @type {ReadonlySet<unknown>} */
const PARENT_TYPES = new Set(["apply", "reset", "state", "action", "snapshot"]);
/** @type {ReadonlySet<unknown>} */
const TARGET_TYPES = new Set(["ready", "state", "error", "loaded", "leaving"]);

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
 * What is wrong with a page's picture (1.8), or null when it is one: an object `{png, width, height}`
 * with `png` base64 of at most MAX_PICTURE_BASE64 characters and whole sizes of 1 to MAX_PICTURE_SIDE.
 * (The kernel decodes it and checks the PNG itself: core/_picture.py.)
 * @param {unknown} picture
 * @returns {string | null}
 */
export function pictureProblem(picture) {
  if (!isPlainObject(picture)) return "the picture is not an object {png, width, height}";
  const { png, width, height } = picture;
  if (typeof png !== "string" || png === "") return "the picture has no png";
  if (png.length > MAX_PICTURE_BASE64) return `the picture's PNG is more than ${MAX_PICTURE_BYTES} bytes`;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(png)) return "the picture's png is not base64";
  for (const side of [width, height]) {
    if (!Number.isInteger(side) || /** @type {number} */ (side) < 1 || /** @type {number} */ (side) > MAX_PICTURE_SIDE) {
      return `the picture's width and height must be whole numbers of 1 to ${MAX_PICTURE_SIDE} pixels`;
    }
  }
  return null;
}

/**
 * @param {unknown} name
 * @returns {name is string} a non-empty string of at most MAX_ACTION_NAME characters
 */
function isActionName(name) {
  if (typeof name !== "string" || name === "") return false;
  return name.length <= MAX_ACTION_NAME || codePoints(name) <= MAX_ACTION_NAME;
}

/**
 * Whether `data` is a view -> target message for this `nonce`: source
 * `"splitbrain-parent"`, no nonce (1.7; or this same non-empty one), type apply/reset/state/action, an
 * optional string id and an optional plain-object payload; an `action` has an id and
 * a payload `{name}` (isActionName).
 * @param {unknown} data
 * @param {string} nonce
 * @returns {data is ParentMessage}
 */
export function isParentMessage(data, nonce) {
  // The view sends no nonce (1.7): a message from window.parent is the view's (the caller checks
  // event.source), and a document that came into the frame later must not learn the page's nonce
  // from what the view sends. A nonce, when one comes (a view of 1.6), must be the page's.
  if (!isPlainObject(data) || data.source !== PARENT_SOURCE) return false;
  if (data.nonce !== undefined && !hasEnvelope(data, PARENT_SOURCE, nonce)) return false;
  if (!PARENT_TYPES.has(data.type) || !isOptionalId(data.id)) return false;
  if (data.type === "action") return typeof data.id === "string" && isPlainObject(data.payload) && isActionName(data.payload.name);
  return data.payload === undefined || isPlainObject(data.payload);
}

/**
 * Whether `msg` is a kernel -> view request:
 * `{kind:"request", id: string, op: "apply"|"reset"|"state"|"snapshot", payload: {values?: object}}`, or
 * `{kind:"request", id: string, op: "action", payload: {name: string}}` (1.5).
 * @param {unknown} msg
 * @returns {msg is KernelRequest}
 */
export function isKernelRequest(msg) {
  if (!isPlainObject(msg) || msg.kind !== "request" || typeof msg.id !== "string" || msg.id === "") return false;
  if (!REQUEST_OPS.has(msg.op) || !isPlainObject(msg.payload)) return false;
  if (msg.op === "action") return isActionName(msg.payload.name);
  return msg.payload.values === undefined || isPlainObject(msg.payload.values);
}

/**
 * @param {unknown} value
 * @returns {value is string}
 */
function isString(value) {
  return typeof value === "string";
}

/**
 * @param {Record<string, unknown>} event
 * @returns {boolean} a tool event's call id, name and arguments (and its label, if any, a string)
 */
function isToolCall(event) {
  return isString(event.call_id) && isString(event.name) && isPlainObject(event.arguments) && isOptionalString(event.label);
}

/**
 * @param {unknown} value
 * @returns {boolean} absent, or a string
 */
function isOptionalString(value) {
  return value === undefined || isString(value);
}

/** @type {Readonly<Record<string, (event: Record<string, unknown>) => boolean>>} per chat event kind */
const CHAT_EVENT_FIELDS = /* @__PURE__ */ Object.freeze({
  text: (e) => isString(e.text),
  tool_started: isToolCall,
  tool_progress: (e) => isToolCall(e) && isString(e.label),
  tool_finished: (e) => isToolCall(e) && isPlainObject(e.result) && typeof e.ok === "boolean",
  retry_wait: (e) =>
    typeof e.seconds === "number" &&
    Number.isFinite(e.seconds) &&
    isString(e.source) &&
    Number.isInteger(e.attempt) &&
    isString(e.model) &&
    (e.status === null || Number.isInteger(e.status)),
  run_deadline: (e) => typeof e.seconds === "number" && Number.isFinite(e.seconds) && e.seconds >= 0,
  fallback: (e) => isString(e.from_model) && isString(e.to_model) && isString(e.reason),
  busy: (e) => isString(e.text),
  control_error: (e) => isString(e.text),
});

/**
 * Whether `msg` is a kernel -> view `chat_event` whose event is one this version knows, with
 * the fields its kind has (an event kind of a later version is not: the panel drops it).
 * @param {unknown} msg
 * @returns {msg is ChatEventMessage}
 */
export function isChatEventMessage(msg) {
  if (!isPlainObject(msg) || msg.kind !== "chat_event" || !isPlainObject(msg.event)) return false;
  const event = msg.event;
  const kind = event.kind;
  if (!isString(kind) || !Object.prototype.hasOwnProperty.call(CHAT_EVENT_FIELDS, kind)) return false;
  return CHAT_EVENT_FIELDS[kind](event);
}

/**
 * Whether `msg` is a kernel -> view `approval_request`: string id and tool, object arguments,
 * and `asking` a list of strings.
 * @param {unknown} msg
 * @returns {msg is ApprovalRequest}
 */
export function isApprovalRequest(msg) {
  return (
    isPlainObject(msg) &&
    msg.kind === "approval_request" &&
    isString(msg.id) &&
    isString(msg.tool) &&
    isPlainObject(msg.arguments) &&
    Array.isArray(msg.asking) &&
    msg.asking.every(isString) &&
    isOptionalString(msg.label)
  );
}

/**
 * Whether `msg` is a kernel -> view `approval_closed` with a string id.
 * @param {unknown} msg
 * @returns {msg is ApprovalClosed}
 */
export function isApprovalClosed(msg) {
  return isPlainObject(msg) && msg.kind === "approval_closed" && isString(msg.id);
}

/**
 * @param {string} text
 * @returns {number} its length in code points, as the kernel and the schema count it
 */
function codePoints(text) {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

/**
 * Whether `msg` is a kernel -> view `code` message: a string `text` of at most MAX_CODE_TEXT characters.
 * @param {unknown} msg
 * @returns {msg is CodeMessage}
 */
export function isCodeMessage(msg) {
  if (!isPlainObject(msg) || msg.kind !== "code" || !isString(msg.text)) return false;
  return msg.text.length <= MAX_CODE_TEXT || codePoints(msg.text) <= MAX_CODE_TEXT;
}

// --- kernel -> view: built by the kernel (protocol.py), here for a host's own requests ---

/**
 * A request as the kernel makes it; the headless host asks its page for a state with one of its own.
 * @param {string} id
 * @param {RequestOp} op
 * @param {{values?: Values, name?: string}} [payload]  `{}` for `state`
 * @returns {KernelRequest}
 */
export function kernelRequest(id, op, payload = {}) {
  return { kind: "request", id, op, payload };
}

// --- view -> kernel: what the view sends, built in one place ----------------

/**
 * The target answered request `id` with `state` (and a snapshot with its `picture`, 1.8).
 * @param {string} id
 * @param {string} viewId
 * @param {State} state
 * @param {Picture} [picture]
 * @returns {ReplyOk}
 */
export function replyMessage(id, viewId, state, picture) {
  /** @type {ReplyOk} */
  const reply = { kind: "reply", id, view_id: viewId, ok: true, state };
  if (picture !== undefined) reply.picture = picture;
  return reply;
}

/**
 * Request `id` failed; `message` should be bounded by the caller (`errorText`).
 * @param {string} id
 * @param {string} viewId
 * @param {ErrorCode} code
 * @param {string} message
 * @param {string} [hint]
 * @returns {ReplyError}
 */
export function errorReplyMessage(id, viewId, code, message, hint) {
  const error = hint === undefined ? { code, message } : { code, message, hint };
  return { kind: "reply", id, view_id: viewId, ok: false, error };
}

/**
 * The view's picture of its page (1.8), for the notebook's saved outputs.
 * @param {string} viewId
 * @param {Picture} picture
 * @returns {{kind: "picture", view_id: string, picture: Picture}}
 */
export function pictureMessage(viewId, picture) {
  return { kind: "picture", view_id: viewId, picture: { png: picture.png, width: picture.width, height: picture.height } };
}

/**
 * The handshake: this view rendered and speaks PROTOCOL_VERSION; `visible` (1.6): whether the
 * notebook's page could be seen then.
 * @param {string} viewId
 * @param {string} [userAgent]
 * @param {boolean} [visible]
 * @returns {ViewEvent}
 */
export function attachedEvent(viewId, userAgent, visible) {
  /** @type {{protocol: number, user_agent?: string, visible?: boolean}} */
  const payload = { protocol: PROTOCOL_VERSION };
  if (userAgent !== undefined) payload.user_agent = userAgent;
  if (visible !== undefined) payload.visible = visible;
  return { kind: "event", view_id: viewId, type: "attached", payload };
}

/** @typedef {"visibilitychange" | "freeze" | "resume"} VisibilityCause  the kernel takes any short string */

/**
 * The notebook's page went to the background or came back (1.6).
 * @param {string} viewId
 * @param {boolean} visible
 * @param {VisibilityCause} [cause]  the browser event that said so
 * @returns {ViewEvent}
 */
export function visibilityEvent(viewId, visible, cause) {
  return { kind: "event", view_id: viewId, type: "visibility", payload: cause ? { visible, cause } : { visible } };
}

/**
 * The view's target called `SplitBrain.ready()`.
 * @param {string} viewId
 * @returns {ViewEvent}
 */
export function readyEvent(viewId) {
  return { kind: "event", view_id: viewId, type: "ready" };
}

/**
 * The view was removed or its page is going away.
 * @param {string} viewId
 * @returns {ViewEvent}
 */
export function detachedEvent(viewId) {
  return { kind: "event", view_id: viewId, type: "detached" };
}

/**
 * A state the target reported on its own.
 * @param {string} viewId
 * @param {State} state
 * @returns {ViewEvent}
 */
export function stateEvent(viewId, state) {
  return { kind: "event", view_id: viewId, type: "state", payload: state };
}

/**
 * The target or the view failed outside a request.
 * @param {string} viewId
 * @param {ErrorCode} code
 * @param {string} message
 * @returns {ViewEvent}
 */
export function errorEvent(viewId, code, message) {
  return { kind: "event", view_id: viewId, type: "error", payload: { code, message } };
}

/**
 * @param {string} text  what the person typed
 * @returns {PanelMessage}
 */
export function chatMessage(text) {
  return { kind: "chat", text };
}

/** @returns {PanelMessage} Stop (or Abort): end the agent's run */
export function cancelMessage() {
  return { kind: "cancel" };
}

/** @returns {PanelMessage} end a retry wait now */
export function skipWaitMessage() {
  return { kind: "skip_wait" };
}

/**
 * @param {string} id  the approval request's id
 * @param {boolean} approved
 * @returns {PanelMessage}
 */
export function approvalMessage(id, approved) {
  return { kind: "approval", id, approved };
}

/**
 * @param {Values} values  dotted path -> value, as a control set them
 * @returns {PanelMessage}
 */
export function setMessage(values) {
  return { kind: "set", values };
}

/** @returns {PanelMessage} Copy as code: the kernel answers with a `code` message (isCodeMessage) */
export function copyCodeMessage() {
  return { kind: "copy_code" };
}

/**
 * @param {string} name  one of the manifest's actions, as the inspector's button for it says
 * @returns {PanelMessage} run it, like `sim.act(name)` (a failure comes back as a `control_error`)
 */
export function actMessage(name) {
  return { kind: "act", name };
}

// --- view -> target, target -> view (section 2) ------------------------------

/**
 * A view -> target message, with no nonce (1.7): `id` and `payload` only where given (the on-ready
 * catch-up `apply` has no id, a `state` request no payload).
 * @param {ParentMessageType} type
 * @param {Values} [payload]  values, or `{name}` for `action`
 * @param {string} [id]
 * @returns {ParentMessage}
 */
export function parentMessage(type, payload, id) {
  /** @type {ParentMessage} */
  const message = { source: PARENT_SOURCE, type };
  if (id !== undefined) message.id = id;
  if (payload !== undefined) message.payload = payload;
  return message;
}

/**
 * A target -> view message (or the clock's `advanced`): `body` is the message without its source and
 * nonce; `id` is added only where given.
 * @param {string} nonce  the page's
 * @param {Record<string, unknown>} body
 * @param {string} [id]
 * @returns {Record<string, unknown>}
 */
export function targetMessage(nonce, body, id) {
  /** @type {Record<string, unknown>} */
  const message = { source: TARGET_SOURCE, nonce, ...body };
  if (id !== undefined) message.id = id;
  return message;
}

/**
 * One chunk of a headless advance for the page's virtual clock.
 * @param {{ms: number, more: boolean, token?: string}} payload  `token` only when the host wants `advanced`
 * @returns {ClockMessage}
 */
export function clockAdvanceMessage(payload) {
  return { source: PARENT_SOURCE, type: "advance", payload };
}

/** @returns {ClockMessage} end the running advance: its chunk stops, the ones behind it are dropped (1.7) */
export function clockHaltMessage() {
  return { source: PARENT_SOURCE, type: "halt" };
}

/**
 * @param {string} nonce  the sandbox frame's
 * @param {unknown[]} ops
 * @returns {ViewOpsMessage}
 */
export function viewOpsMessage(nonce, ops) {
  return { source: VIEW_SOURCE, nonce, ops };
}

/**
 * @param {string} nonce  the sandbox frame's
 * @param {SandboxReport} body
 * @returns {{source: typeof SANDBOX_SOURCE, nonce: string} & SandboxReport}
 */
export function sandboxMessage(nonce, body) {
  return { source: SANDBOX_SOURCE, nonce, ...body };
}

// --- host page -> headless engine (section 4) ---------------------------------

/**
 * @param {string} viewId
 * @param {string} token  the advance op's
 * @param {AdvanceOutcome} result
 * @returns {AdvanceResultMessage}
 */
export function advanceResultMessage(viewId, token, result) {
  return { kind: "_advance", view_id: viewId, token, result };
}

/**
 * @param {string} viewId
 * @param {string} token  the advance op's
 * @param {State[]} states
 * @returns {AdvanceSamplesMessage}
 */
export function advanceSamplesMessage(viewId, token, states) {
  return { kind: "_samples", view_id: viewId, token, states };
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
