// @ts-check
/**
 * The chat panel and the parameter inspector, shown beside (or under) the target when the
 * widget's `chat_enabled` trait is true. The inspector follows the `values` trait (its parameters)
 * and the `state` trait (the manifest's observables, with their last 30 s). Messages (docs/protocol.md section 1): it reads
 * "chat_event", "approval_request", "approval_closed" and "code", checked by ../protocol.js, and sends
 * "chat", "cancel", "skip_wait", "approval", "set", "copy_code" and "act" (an action's button), built
 * by ../protocol.js.
 */
import {
  actMessage,
  approvalMessage,
  cancelMessage,
  chatMessage,
  copyCodeMessage,
  isApprovalClosed,
  isApprovalRequest,
  isChatEventMessage,
  isCodeMessage,
  setMessage,
  skipWaitMessage,
} from "../protocol.js";

/** @typedef {import("../protocol.js").ChatEvent} ChatEvent */
/** @typedef {import("../protocol.js").ApprovalRequest} ApprovalRequest */

/** @typedef {import("../host/relay.js").Model} Model */

/**
 * @typedef {object} Parameter  a manifest parameter as the `manifest` trait carries it
 * @property {"number" | "integer" | "boolean" | "string" | "array"} type
 * @property {string} [unit]
 * @property {string} [label]
 * @property {string} [description]
 * @property {number} [min]
 * @property {number} [max]
 * @property {number} [step]
 * @property {unknown[]} [enum]
 * @property {Record<string, unknown>} [named]  values people say by name ({moon: 1.62}), shown as choices
 * @property {boolean} [readonly]
 * @property {number} [length]
 */

/** Milliseconds between slider updates sent to the kernel while dragging. */
export const SLIDER_INTERVAL_MS = 80;

/**
 * The status a finished tool call shows: ok, error, or cancelled.
 * @param {{ok?: boolean, result?: any}} finished
 * @returns {"ok" | "error" | "cancelled"}
 */
export function chipStatus(finished) {
  if (finished.ok) return "ok";
  const code = finished.result?.error?.code;
  return code === "cancelled" ? "cancelled" : "error";
}

/**
 * What a finished (or running) tool call's chip says after its label: "applied", "refused: …".
 * @param {"pending" | "ok" | "error" | "cancelled"} status
 * @param {any} [result]
 * @returns {string}
 */
export function chipOutcome(status, result) {
  if (status === "pending") return "running";
  if (status === "cancelled") return "cancelled";
  if (status === "ok") return result?.applied === false ? "kept, not applied" : "applied";
  const message = typeof result?.error?.message === "string" ? result.error.message : "";
  const code = typeof result?.error?.code === "string" ? result.error.code : "error";
  const why = message.length > 160 ? `${message.slice(0, 159)}…` : message;
  return `refused (${code})${why ? `: ${why}` : ""}`;
}

/**
 * A parameter's value in words: booleans as "on" / "off", numbers with their unit ("2 m").
 * @param {unknown} value
 * @param {string | undefined} unit
 * @returns {string}
 */
export function valueWords(value, unit) {
  if (typeof value === "boolean") return value ? "on" : "off";
  return formatObservable(value, unit);
}

/**
 * The parameters whose value differs between `before` and `after`, in words: "speed 12 m/s, trail on".
 * @param {Record<string, Parameter>} parameters  the manifest's, by path
 * @param {Record<string, unknown>} before
 * @param {Record<string, unknown>} after
 * @param {(path: string) => boolean} [skip]  paths not to say (the control being operated says it)
 * @returns {string}
 */
export function changeWords(parameters, before, after, skip = () => false) {
  const parts = [];
  for (const [path, value] of Object.entries(after ?? {})) {
    if (skip(path) || JSON.stringify(before?.[path]) === JSON.stringify(value)) continue;
    const p = parameters?.[path] ?? /** @type {Parameter} */ ({});
    parts.push(`${p.label ?? path.split(".").pop() ?? path} ${valueWords(value, p.unit)}`);
  }
  return parts.join(", ");
}

/**
 * The notes an answer shows beside its chips: no change was made (what the page applied, not what the
 * model said), an answer cut off at the output cap, a run ended by a deadline or another stop.
 * @param {{no_change?: boolean, stopped?: string}} entry  a transcript entry of the assistant
 * @returns {{kind: "no-change" | "cut-off" | "deadline" | "stopped", text: string}[]}
 */
export function answerNotes(entry) {
  /** @type {{kind: "no-change" | "cut-off" | "deadline" | "stopped", text: string}[]} */
  const notes = [];
  if (entry.no_change) notes.push({ kind: "no-change", text: "no change was made" });
  const stopped = typeof entry.stopped === "string" ? entry.stopped : "";
  if (stopped === "length") notes.push({ kind: "cut-off", text: "cut off: the answer reached its output cap" });
  else if (stopped.startsWith("deadline")) notes.push({ kind: "deadline", text: "stopped at a deadline" });
  else if (stopped && stopped !== "cancelled") notes.push({ kind: "stopped", text: "stopped early" });
  return notes;
}

/**
 * A deadline's time left, as the panel shows it: "4:05" from a minute up, "42 s" below.
 * @param {number} seconds
 * @returns {string}
 */
export function deadlineText(seconds) {
  const whole = Math.ceil(seconds);
  if (whole < 60) return `${whole} s`;
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

/**
 * Choose the slider step for a number parameter.
 * @param {Parameter} p
 * @returns {number | "any"}
 */
export function stepFor(p) {
  if (p.type === "integer") return p.step ?? 1;
  if (p.step) return p.step;
  if (p.min !== undefined && p.max !== undefined) return (p.max - p.min) / 200;
  return "any";
}

/**
 * @typedef {object} Observable  a manifest observable as the `manifest` trait carries it
 * @property {string} [name]
 * @property {string} [unit]
 * @property {string} [description]
 * @property {string[]} [depends_on]
 * @property {number} [settles_in]
 */

/** @typedef {{t: number, v: number}} Sample  a numeric value and when it arrived (performance.now(), ms) */

/** How much of an observable's history its sparkline shows, in milliseconds. */
export const OBSERVABLE_WINDOW_MS = 30_000;
/** Samples closer together than this share one slot: at most 300 per sparkline, whatever the page's rate. */
export const SAMPLE_SLOT_MS = 100;
/** The observables section redraws at most this often (4 times a second). */
export const OBSERVABLE_REDRAW_MS = 250;
/** Sparkline size in CSS pixels. */
export const SPARKLINE_WIDTH = 80;
export const SPARKLINE_HEIGHT = 18;

/**
 * An observable's value in a page's state, found where the kernel's `_seek._read` finds it: at the
 * top of the state, else under its `observables`, `values` or `params` key.
 * @param {Record<string, unknown> | null | undefined} state
 * @param {string} name
 * @returns {{reported: boolean, value: unknown}}
 */
export function readObservable(state, name) {
  const has = (/** @type {object} */ o) => Object.prototype.hasOwnProperty.call(o, name);
  if (!state || typeof state !== "object") return { reported: false, value: undefined };
  if (has(state)) return { reported: true, value: state[name] };
  for (const key of ["observables", "values", "params"]) {
    const inner = state[key];
    if (inner && typeof inner === "object" && !Array.isArray(inner) && has(inner)) {
      return { reported: true, value: /** @type {Record<string, unknown>} */ (inner)[name] };
    }
  }
  return { reported: false, value: undefined };
}

/**
 * The value as a finite number, or null when it is not one (null, a string, NaN, a boolean...).
 * @param {unknown} value
 * @returns {number | null}
 */
export function numericValue(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * A number with about four significant digits, never more decimals than it needs:
 * 2.00641 -> "2.006", 12345.6 -> "12346", 0.000012 -> "1.2e-5", 3e20 -> "3e20".
 * @param {number} value
 * @returns {string}
 */
export function formatNumber(value) {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return "0"; // and -0
  const magnitude = Math.abs(value);
  if (magnitude >= 1e15 || magnitude < 1e-3) return value.toExponential(3).replace(/\.?0+e/, "e").replace("e+", "e");
  if (Number.isInteger(value)) return String(value);
  const decimals = Math.max(0, 3 - Math.floor(Math.log10(magnitude)));
  return String(Number(value.toFixed(decimals))); // Number() drops the trailing zeros
}

/** Text values longer than this are cut, with an ellipsis. */
const MAX_VALUE_CHARS = 60;

/**
 * The text an observable's value shows, without its unit: numbers as {@link formatNumber}, arrays
 * of numbers as "[1, 2.5]", null as "—", anything else as its string or JSON (cut at 60 chars).
 * @param {unknown} value
 * @returns {string}
 */
export function formatValue(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number") return formatNumber(value);
  if (isNumberArray(value)) return cut(`[${value.map(formatNumber).join(", ")}]`);
  if (typeof value === "string") return cut(value);
  let json;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined; // a cycle cannot come over the wire, but a value is never worth an exception
  }
  return cut(json ?? String(value));
}

/**
 * @param {string} text
 * @returns {string}
 */
function cut(text) {
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

/**
 * Whether a value is shown with the observable's unit: numbers and arrays of numbers are.
 * @param {unknown} value
 * @returns {boolean}
 */
export function takesUnit(value) {
  return numericValue(value) !== null || isNumberArray(value);
}

/**
 * @param {unknown} value
 * @returns {value is number[]}
 */
function isNumberArray(value) {
  return Array.isArray(value) && value.length > 0 && value.every((x) => typeof x === "number");
}

/**
 * An observable's value with its unit: "19.87 deg", "[1, 2] m"; text and null take no unit ("ok", "—").
 * @param {unknown} value
 * @param {string | undefined} unit
 * @returns {string}
 */
export function formatObservable(value, unit) {
  const text = formatValue(value);
  return unit && takesUnit(value) ? `${text} ${unit}` : text;
}

/**
 * The samples of the last `windowMs` before `now` (the array itself when none is older).
 * @param {readonly Sample[]} samples  oldest first
 * @param {number} now
 * @param {number} [windowMs]
 * @returns {Sample[]}
 */
export function pruneSamples(samples, now, windowMs = OBSERVABLE_WINDOW_MS) {
  const oldest = now - windowMs;
  let first = 0;
  while (first < samples.length && samples[first].t < oldest) first += 1;
  return first === 0 ? /** @type {Sample[]} */ (samples) : samples.slice(first);
}

/**
 * The samples with `sample` added and those older than the window dropped (a new array). A
 * sample in the same {@link SAMPLE_SLOT_MS} slot as the newest replaces it, so a page reporting
 * faster than 10 times a second does not grow the history.
 * @param {readonly Sample[]} samples  oldest first
 * @param {Sample} sample
 * @param {number} [windowMs]
 * @returns {Sample[]}
 */
export function addSample(samples, sample, windowMs = OBSERVABLE_WINDOW_MS) {
  const kept = pruneSamples(samples, sample.t, windowMs).slice();
  const last = kept[kept.length - 1];
  if (last && Math.floor(last.t / SAMPLE_SLOT_MS) === Math.floor(sample.t / SAMPLE_SLOT_MS)) kept[kept.length - 1] = sample;
  else kept.push(sample);
  return kept;
}

/**
 * The `points` of a sparkline's polyline: time runs left to right up to `now`, from the oldest
 * sample in the window (so a history shorter than the window fills the width at once); the
 * values' range fills the height (a constant value is a line across the middle). Empty with
 * fewer than two samples in the window.
 * @param {readonly Sample[]} samples  oldest first
 * @param {{now: number, width?: number, height?: number, windowMs?: number}} frame
 * @returns {string}  "x,y x,y ..." in px, one decimal
 */
export function sparklinePoints(samples, { now, width = SPARKLINE_WIDTH, height = SPARKLINE_HEIGHT, windowMs = OBSERVABLE_WINDOW_MS }) {
  const shown = pruneSamples(samples, now, windowMs).filter((s) => s.t <= now);
  if (shown.length < 2) return "";
  const pad = 1.5; // half the stroke and a little: the line's extremes are not clipped
  let min = Infinity;
  let max = -Infinity;
  for (const { v } of shown) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const start = Math.max(now - windowMs, shown[0].t);
  const span = now - start || 1;
  const round = (/** @type {number} */ x) => Math.round(x * 10) / 10;
  return shown
    .map(({ t, v }) => {
      const x = pad + ((t - start) / span) * (width - 2 * pad);
      const y = max === min ? height / 2 : pad + (1 - (v - min) / (max - min)) * (height - 2 * pad);
      return `${round(x)},${round(y)}`;
    })
    .join(" ");
}

/**
 * What a row says to a screen reader: "angle: 19.87 deg", "period: no value", "echo: not reported".
 * @param {string} name
 * @param {{reported: boolean, value: unknown}} read
 * @param {string | undefined} unit
 * @returns {string}
 */
export function observableLabel(name, read, unit) {
  if (!read.reported) return `${name}: not reported`;
  if (read.value === null || read.value === undefined) return `${name}: no value`;
  return `${name}: ${formatObservable(read.value, unit)}`;
}

/**
 * @param {string} tag
 * @param {Record<string, string>} [attrs]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElement}
 */
function h(tag, attrs = {}, children = []) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") el.textContent = v;
    else el.setAttribute(k, v);
  }
  el.append(...children);
  return el;
}

export const PANEL_STYLE = `
.sb-layout { display: flex; flex-wrap: wrap; gap: 0; }
.sb-layout > .sb-target { flex: 2 1 420px; min-width: 0; }
.sb-panel { flex: 1 1 300px; min-width: 260px; display: flex; flex-direction: column; max-height: var(--sb-panel-height, 520px);
  border-left: 1px solid var(--jp-border-color2, #ddd); background: var(--jp-layout-color1, #fff); font-size: var(--jp-ui-font-size1, 13px); }
.sb-panel-head { display: flex; align-items: center; gap: .5em; padding: 6px 8px; border-bottom: 1px solid var(--jp-border-color2, #ddd); }
.sb-panel-head .sb-model { color: var(--jp-ui-font-color2, #666); font-size: .9em; margin-left: auto; }
.sb-panel-head .sb-copied { color: var(--jp-ui-font-color2, #666); font-size: .85em; }
.sb-lesson { margin: 0; padding: 4px 8px; font-size: .85em; color: var(--jp-ui-font-color1, #222); background: var(--jp-layout-color2, #f2f2f2); border-bottom: 1px solid var(--jp-border-color2, #ddd); }
.sb-lesson[hidden] { display: none; }
.sb-code { margin: 4px 0; font-size: .85em; max-height: 160px; overflow: auto; white-space: pre; user-select: all; }
.sb-log { flex: 1 1 auto; overflow-y: auto; padding: 6px 8px; display: flex; flex-direction: column; gap: 6px; min-height: 120px; }
.sb-msg { padding: 5px 8px; border-radius: 6px; line-height: 1.35; white-space: pre-wrap; overflow-wrap: anywhere; }
/* a fixed blue, not the theme's brand colour: white on it stays above 4.5:1 in every theme (5.6:1) */
.sb-msg.sb-user { align-self: flex-end; background: #1565c0; color: #fff; max-width: 85%; }
.sb-msg.sb-assistant { background: var(--jp-layout-color2, #f2f2f2); }
.sb-msg.sb-error { background: var(--jp-error-color3, #fbe0e0); color: var(--jp-error-color0, #900); }
/* the page kept its own value (a bound page refused one): the same warm tone as a note */
.sb-msg.sb-notice { background: var(--jp-warn-color3, #fdf3d8); color: var(--jp-warn-color0, #6b4a00); }
.sb-deadline { font-size: .9em; opacity: .85; }
.sb-notes { display: flex; gap: 4px; flex-wrap: wrap; }
.sb-note { font-size: .85em; border-radius: 10px; padding: 1px 8px; background: var(--jp-warn-color3, #fdf3d8); color: var(--jp-warn-color0, #6b4a00); }
.sb-note[data-note="no-change"] { font-weight: 600; }
.sb-chip { display: inline-block; border-radius: 10px; padding: 1px 8px; font-size: .9em; border: 1px solid var(--jp-border-color1, #bbb); }
.sb-chip summary { cursor: pointer; list-style: none; min-height: 24px; display: flex; align-items: center; gap: .3em; }
.sb-chip summary::-webkit-details-marker { display: none; }
.sb-chip[data-status="pending"] { border-color: var(--jp-warn-color1, #c80); }
.sb-chip[data-status="ok"] { border-color: var(--jp-success-color1, #2e9d4d); }
.sb-chip[data-status="error"] { border-color: var(--jp-error-color1, #d33); }
.sb-chip[data-status="cancelled"] { border-style: dashed; opacity: .8; }
.sb-chip pre { margin: 4px 0; font-size: .85em; max-height: 160px; overflow: auto; white-space: pre-wrap; }
.sb-banner { margin: 4px 8px; padding: 6px 8px; border-radius: 6px; background: var(--jp-warn-color3, #fff3cd); color: var(--jp-ui-font-color0, #111); display: flex; gap: .5em; align-items: center; flex-wrap: wrap; }
.sb-input { display: flex; gap: 4px; padding: 6px 8px; border-top: 1px solid var(--jp-border-color2, #ddd); }
.sb-input textarea { flex: 1; resize: none; font: inherit; color: inherit; background: var(--jp-input-background, transparent);
  border: 1px solid var(--jp-border-color1, #bbb); border-radius: 4px; padding: 4px; }
/* the placeholder in the text's own colour, only lighter: above 4.5:1 on the box in both themes */
.sb-input textarea::placeholder { color: inherit; opacity: .78; }
.sb-panel button { font: inherit; color: var(--jp-ui-font-color1, #222); background: var(--jp-layout-color2, #eee);
  border: 1px solid var(--jp-border-color1, #bbb); border-radius: 4px; padding: 2px 10px; cursor: pointer; }
.sb-panel button { min-height: 24px; }
.sb-panel button:disabled { opacity: .5; cursor: default; }
.splitbrain-view button:focus-visible, .splitbrain-view textarea:focus-visible, .splitbrain-view input:focus-visible,
.splitbrain-view select:focus-visible, .splitbrain-view summary:focus-visible {
  outline: 2px solid var(--jp-brand-color1, #1976d2); outline-offset: 1px; }
.sb-inspect { flex: 0 1 auto; min-height: 0; border-top: 1px solid var(--jp-border-color2, #ddd); max-height: 45%; overflow-y: auto; }
.sb-inspector { padding: 4px 8px 8px; }
.sb-inspector summary { cursor: pointer; padding: 2px 0; font-weight: 600; }
.sb-row { display: grid; grid-template-columns: minmax(80px, 34%) 1fr; gap: 4px 8px; align-items: center; margin: 3px 0; }
.sb-row label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
/* a control wraps rather than cut its unit or its named values off at the panel's edge */
.sb-row .sb-control { display: flex; flex-wrap: wrap; gap: 4px; align-items: center; min-width: 0; }
.sb-row select, .sb-row input[type=number], .sb-row input[type=text] { min-height: 24px; box-sizing: border-box; }
.sb-row input[type=checkbox] { width: 18px; height: 18px; margin: 3px; }
.sb-announce { display: flex; align-items: center; gap: .4em; font-size: .9em; min-height: 24px; }
.sb-row input[type=range] { flex: 1 1 60px; min-width: 60px; }
.sb-row input[type=number] { width: 5.5em; }
.sb-row select.sb-named { max-width: 100%; }
.sb-row input, .sb-row select { font: inherit; color: inherit; background: var(--jp-input-background, transparent); }
.sb-unit { color: var(--jp-ui-font-color2, #666); font-size: .9em; }
.sb-actions { padding: 4px 8px 8px; border-top: 1px solid var(--jp-border-color2, #ddd); }
.sb-actions[hidden] { display: none; }
.sb-actions h3 { font-size: inherit; font-weight: 600; margin: 2px 0; color: inherit; }
.sb-action-list { display: flex; flex-wrap: wrap; gap: 4px; }
.sb-observables { padding: 4px 8px 8px; border-top: 1px solid var(--jp-border-color2, #ddd); }
.sb-observables h3 { font-size: inherit; font-weight: 600; margin: 2px 0; color: inherit; }
.sb-obs-list { list-style: none; margin: 0; padding: 0; }
.sb-obs { display: grid; grid-template-columns: minmax(80px, 34%) 1fr ${SPARKLINE_WIDTH}px; gap: 4px 8px; align-items: center; margin: 3px 0; }
.sb-obs-name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.sb-obs-value { font-variant-numeric: tabular-nums; overflow-wrap: anywhere; min-width: 0; }
.sb-obs[data-kind="none"] .sb-obs-text { color: var(--jp-ui-font-color2, #666); }
.sb-spark { display: block; color: var(--jp-brand-color1, #1976d2); }
.sb-obs:not([data-kind="number"]) .sb-spark { visibility: hidden; }
`;

/** Chat events held while the page is in the background; past this many, they show as they come. */
const MAX_HELD_EVENTS = 10_000;

/**
 * A transcript entry's identity: the log appends the entries after the one it showed last.
 * @param {any} entry
 * @returns {string}
 */
function entryKey(entry) {
  return JSON.stringify([entry?.role, entry?.time, entry?.id ?? "", entry?.text ?? ""]);
}

/**
 * Mount the panel into `host`; returns a cleanup function.
 * @param {HTMLElement} host
 * @param {Model} model
 * @param {AbortSignal} signal
 * @param {import("./announcer.js").Announcer} announcer  says each answer once, and errors at once
 * @returns {() => void}
 */
export function mountPanel(host, model, signal, announcer) {
  const panel = h("section", { class: "sb-panel", "aria-label": "Assistant and parameters" });
  const modelName = h("span", { class: "sb-model", text: "" });
  const copy = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", class: "sb-copy", text: "Copy as code", title: "Copy the changes so far as Python code" })
  );
  const copied = h("span", { class: "sb-copied", role: "status", text: "" });
  const head = h("div", { class: "sb-panel-head" }, [h("strong", { text: "Assistant" }), modelName, copy, copied]);
  // Not a live region itself: the announcer says each answer once (the log may be laid out again).
  const log = h("div", { class: "sb-log", role: "log", "aria-live": "off", "aria-label": "Conversation" });
  const banners = h("div", { class: "sb-banners" });
  const textarea = /** @type {HTMLTextAreaElement} */ (
    h("textarea", { rows: "2", placeholder: "Ask, e.g. “set the speed to 12 and make it red”", "aria-label": "Message" })
  );
  const send = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Send" }));
  const stop = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Stop", "aria-label": "Stop the agent" }));
  const input = h("div", { class: "sb-input" }, [textarea, send, stop]);
  const inspector = h("details", { class: "sb-inspector", open: "" }, [h("summary", { text: "Parameters" })]);
  const actionsHeading = h("h3", { id: `sb-${Math.random().toString(36).slice(2)}`, text: "Actions" });
  const actions = h("section", { class: "sb-actions", "aria-labelledby": actionsHeading.id }, [actionsHeading]);
  const observablesBox = h("div", { class: "sb-observables-box" });
  // the parameters, the actions and what the page reports scroll together, under the conversation
  // the teacher's lesson policy in force, in one line (the kernel's chat_lesson; hidden when none)
  const lesson = h("p", { class: "sb-lesson", role: "note", "aria-label": "Lesson policy" });
  panel.append(head, lesson, log, banners, input, h("div", { class: "sb-inspect" }, [inspector, actions, observablesBox]));
  host.append(panel);

  /** @type {HTMLElement | null} live assistant text of the run in progress */
  let live = null;
  /** @type {HTMLElement | null} the message this panel sent, shown before the transcript has it */
  let sentBubble = null;
  /** the transcript's entries the log shows: how many, and the last one's key */
  let shown = { count: 0, last: "" };
  /** answers and errors are announced from the first render on (the old ones are not read out again) */
  let rendered = false;
  // While the notebook's page is in the background the run's events (and transcript renders, as
  // null) wait here, in order, and show at once when it comes back: nobody reads them meanwhile,
  // and a hidden page lays nothing out.
  /** @type {(ChatEvent | null)[]} */
  const held = [];
  let replaying = false;
  const doc = host.ownerDocument;
  /** @type {Map<string, HTMLElement>} chips of the run in progress, by call id */
  const chips = new Map();
  /** @type {Map<string, HTMLElement>} open approval prompts */
  const approvals = new Map();
  /** @type {ReturnType<typeof setInterval> | null} */
  let countdown = null;

  const scroll = () => {
    if (!replaying) log.scrollTop = log.scrollHeight; // a replay of held events scrolls once, at its end
  };

  /** @param {{kind: string, text: string}[]} list  an answer's notes, in a row under it */
  function notes(list) {
    if (!list.length) return;
    log.append(h("div", { class: "sb-notes" }, list.map((n) => h("span", { class: "sb-note", "data-note": n.kind, text: n.text }))));
    scroll();
  }

  /**
   * @param {string} role
   * @param {string} text
   */
  function bubble(role, text) {
    const el = h("div", { class: `sb-msg sb-${role}`, text });
    log.append(el);
    scroll();
    return el;
  }

  /**
   * @param {string} id
   * @param {string} name
   * @param {Record<string, any>} args
   * @param {"pending" | "ok" | "error" | "cancelled"} status
   * @param {any} [result]
   * @param {string} [summary]  the arguments in short, as the kernel's tool definition renders them
   */
  function chip(id, name, args, status, result, summary = "") {
    let el = chips.get(id);
    if (!el) {
      // made once and updated in place: a reader's focus on its summary stays there
      el = h("details", { class: "sb-chip" }, [
        h("summary", {}, [
          h("span", { class: "sb-chip-mark", "aria-hidden": "true" }),
          h("span", { class: "sb-chip-what" }),
          h("span", { class: "sb-chip-outcome" }),
        ]),
        h("pre", { class: "sb-chip-args" }),
        h("pre", { class: "sb-chip-result" }),
      ]);
      el.dataset.callId = id;
      chips.set(id, el);
      log.append(el);
    }
    const before = el.dataset.status;
    el.dataset.status = status;
    const part = (/** @type {string} */ cls) => /** @type {HTMLElement} */ (el?.querySelector(cls));
    setText(part(".sb-chip-mark"), { pending: "…", ok: "✓", error: "✗", cancelled: "⊘" }[status]);
    setText(part(".sb-chip-what"), `${name}${summary ? `: ${summary}` : ""}`);
    setText(part(".sb-chip-outcome"), `— ${chipOutcome(status, result)}`);
    setText(part(".sb-chip-args"), `arguments: ${JSON.stringify(args, null, 1)}`);
    const resultEl = part(".sb-chip-result");
    resultEl.hidden = result === undefined;
    setText(resultEl, result === undefined ? "" : `result: ${JSON.stringify(result, null, 1)}`);
    if (rendered && status === "error" && before !== "error") {
      announcer.say(`${name}${summary ? ` ${summary}` : ""}: ${chipOutcome(status, result)}`, { urgent: true });
    }
    scroll();
  }

  /**
   * One transcript entry, after those the log shows: adopting what the run already showed live (the
   * message this panel sent, the streamed answer, the chips) instead of showing it twice.
   * @param {any} entry
   */
  function appendEntry(entry) {
    if (entry.role === "tool") {
      chip(String(entry.id), entry.name, entry.arguments ?? {}, chipStatus(entry), entry.result, entry.label);
    } else if (entry.role === "user") {
      chips.clear(); // a new run: its chips are its own
      live = null;
      if (sentBubble && sentBubble.textContent === entry.text) sentBubble = null;
      else bubble("user", entry.text);
    } else if (entry.role === "assistant") {
      const el = live ?? bubble("assistant", entry.text);
      setText(el, entry.text);
      live = null;
      notes(answerNotes(entry));
      if (rendered) announcer.say(entry.text || "The assistant gave no answer.");
    } else {
      bubble(entry.role, entry.text);
      if (rendered && entry.role === "error") announcer.say(entry.text, { urgent: true });
      else if (rendered && entry.role === "notice") announcer.say(entry.text); // the page kept its own value
    }
  }

  function renderTranscript() {
    if (doc.hidden && !replaying) {
      held.push(null); // in its place among the held events
      if (held.length >= MAX_HELD_EVENTS) replayHeld();
      return;
    }
    const transcript = /** @type {any[]} */ (model.get("transcript") ?? []);
    // where the entries the log does not show yet begin: after the one it showed last (found from the
    // end: a transcript cut at its bound still holds it); not found, the log is laid out anew
    let from = shown.count === 0 ? 0 : -1;
    for (let i = transcript.length - 1; from < 0 && i >= 0; i -= 1) if (entryKey(transcript[i]) === shown.last) from = i + 1;
    if (from < 0) {
      log.replaceChildren();
      chips.clear();
      live = null;
      sentBubble = null;
      from = 0;
    }
    for (const entry of transcript.slice(from)) appendEntry(entry);
    shown = { count: transcript.length, last: transcript.length ? entryKey(transcript[transcript.length - 1]) : "" };
    rendered = true;
  }

  function clearCountdown() {
    if (countdown) clearInterval(countdown);
    countdown = null;
    banners.querySelector(".sb-retry")?.remove();
  }

  /** @type {ReturnType<typeof setInterval> | null} the answer's deadline, counted down while it runs */
  let deadlineTimer = null;
  function clearDeadline() {
    if (deadlineTimer) clearInterval(deadlineTimer);
    deadlineTimer = null;
    banners.querySelector(".sb-deadline")?.remove();
  }

  /** @param {number} seconds */
  function showDeadline(seconds) {
    clearDeadline();
    const ends = Date.now() + seconds * 1000;
    const label = h("span", { text: "" });
    const update = () => {
      label.textContent = `answer deadline: ${deadlineText(Math.max(0, (ends - Date.now()) / 1000))} left`;
    };
    update();
    const abort = h("button", { type: "button", text: "Stop" });
    abort.addEventListener("click", () => model.send(cancelMessage()));
    banners.append(h("div", { class: "sb-banner sb-deadline", role: "timer" }, [label, abort]));
    deadlineTimer = setInterval(update, 1000);
  }

  /** Show what was held, in order: consecutive text as one, a retry banner only if still waiting. */
  function replayHeld() {
    const events = held.splice(0);
    replaying = true;
    try {
      for (let i = 0; i < events.length; i += 1) {
        const event = events[i];
        if (event === null) {
          renderTranscript();
        } else if (event.kind === "text") {
          let text = event.text;
          while (events[i + 1]?.kind === "text") text += /** @type {{text: string}} */ (events[(i += 1)]).text;
          onEvent({ kind: "text", text });
        } else if (event.kind !== "retry_wait" || (i === events.length - 1 && model.get("chat_busy"))) {
          onEvent(event); // a retry wait that others followed (or a run that ended) is over
        }
      }
    } finally {
      replaying = false;
    }
    scroll();
  }
  doc.addEventListener(
    "visibilitychange",
    () => {
      panel.dataset.paused = String(doc.hidden);
      if (!doc.hidden) replayHeld();
    },
    { signal },
  );

  /** @param {ChatEvent} event */
  function onEvent(event) {
    if (doc.hidden && !replaying) {
      held.push(event);
      if (held.length >= MAX_HELD_EVENTS) replayHeld(); // in order, and the holding starts over
      return;
    }
    switch (event.kind) {
      case "text":
        if (!live) live = bubble("assistant", "");
        live.textContent += event.text;
        scroll();
        break;
      case "tool_started":
        chip(event.call_id, event.name, event.arguments ?? {}, "pending", undefined, event.label);
        break;
      case "tool_progress": // a running call's news (a seek's try) relabels its chip, while it runs
        if (chips.get(event.call_id)?.dataset.status === "pending") {
          chip(event.call_id, event.name, event.arguments ?? {}, "pending", undefined, event.label);
        }
        break;
      case "tool_finished":
        chip(event.call_id, event.name, event.arguments ?? {}, chipStatus(event), event.result, event.label);
        break;
      case "retry_wait": {
        clearCountdown();
        let left = Math.ceil(event.seconds);
        const label = h("span", { text: "" });
        const update = () => {
          label.textContent = `${event.model} asked us to wait (${event.source}${event.status ? `, HTTP ${event.status}` : ""}): retrying in ${left} s`;
        };
        update();
        const skip = h("button", { type: "button", text: "Skip wait" });
        const abort = h("button", { type: "button", text: "Abort" });
        skip.addEventListener("click", () => model.send(skipWaitMessage()));
        abort.addEventListener("click", () => model.send(cancelMessage()));
        banners.append(h("div", { class: "sb-banner sb-retry", role: "status" }, [label, skip, abort]));
        countdown = setInterval(() => {
          left -= 1;
          if (left <= 0) clearCountdown();
          else update();
        }, 1000);
        break;
      }
      case "run_deadline":
        if (model.get("chat_busy")) showDeadline(Number(event.seconds));
        break;
      case "fallback":
        bubble("assistant", `(${event.from_model} failed: ${event.reason}; continuing with ${event.to_model})`);
        break;
      case "busy":
      case "control_error":
        bubble("error", event.text);
        announcer.say(event.text, { urgent: true });
        break;
    }
  }

  /** @param {ApprovalRequest} msg */
  function approvalPrompt(msg) {
    const what = msg.label || msg.tool;
    const approve = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Approve" }));
    const deny = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Deny" }));
    const box = h("div", { class: "sb-banner sb-approval", role: "alertdialog", "aria-label": "Approve a change" }, [
      h("span", { text: `The agent wants to ${msg.tool.replace("_", " ")}: ${what}` }),
      approve,
      deny,
    ]);
    /** @param {boolean} approved */
    const decide = (approved) => {
      model.send(approvalMessage(msg.id, approved));
      approve.disabled = deny.disabled = true;
    };
    approve.addEventListener("click", () => decide(true));
    deny.addEventListener("click", () => decide(false));
    approvals.set(msg.id, box);
    banners.append(box);
    approve.focus();
  }

  /** @param {unknown} msg  a custom message from the kernel: requests are the relay's, the rest is ours */
  function onCustom(msg) {
    if (isChatEventMessage(msg)) onEvent(msg.event);
    else if (isApprovalRequest(msg)) approvalPrompt(msg);
    else if (isApprovalClosed(msg)) {
      approvals.get(msg.id)?.remove();
      approvals.delete(msg.id);
    } else if (isCodeMessage(msg) && copyAsked) putOnClipboard(msg.text); // every view gets the reply: only the asking panel copies
  }

  /** The kernel's code for the changes so far: onto the clipboard, or shown to copy by hand. */
  function putOnClipboard(/** @type {string} */ text) {
    copyAsked = false;
    clearTimeout(copiedTimer);
    const shown = () => {
      copied.textContent = "select and copy:";
      banners.querySelector(".sb-code")?.remove();
      banners.append(h("pre", { class: "sb-code", text }));
    };
    const clipboard = globalThis.navigator?.clipboard;
    if (!clipboard) return shown();
    clipboard.writeText(text).then(() => {
      copied.textContent = "copied";
      copiedTimer = setTimeout(() => {
        copied.textContent = "";
      }, 3000);
    }, shown);
  }

  function submit() {
    const text = textarea.value.trim();
    if (!text || model.get("chat_busy")) return;
    model.send(chatMessage(text));
    textarea.value = "";
    live = null;
    chips.clear();
    sentBubble = bubble("user", text);
    textarea.focus(); // Send pressed by mouse or key: the next message is typed where this one was
  }

  function showLesson() {
    const text = String(model.get("chat_lesson") ?? "");
    lesson.textContent = text;
    lesson.hidden = !text;
  }

  function onBusy() {
    const busy = Boolean(model.get("chat_busy"));
    stop.disabled = !busy;
    send.disabled = busy;
    panel.dataset.busy = busy ? "true" : "false";
    modelName.textContent = model.get("chat_model") ?? "";
    if (!busy) {
      clearCountdown();
      clearDeadline();
    }
  }

  send.addEventListener("click", submit, { signal });
  stop.addEventListener("click", () => model.send(cancelMessage()), { signal });
  /** Whether this panel's Copy button asked for the code that comes next. */
  let copyAsked = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let copiedTimer;
  copy.addEventListener(
    "click",
    () => {
      copyAsked = true;
      model.send(copyCodeMessage());
    },
    { signal },
  );
  textarea.addEventListener(
    "keydown",
    (e) => {
      // Enter (or Ctrl/Cmd+Enter) sends, Shift+Enter starts a new line; Escape stops a run, else
      // leaves the widget for its cell (./keys_and_look.js)
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        submit();
      } else if (e.key === "Escape" && model.get("chat_busy")) {
        e.preventDefault();
        model.send(cancelMessage());
      }
    },
    { signal },
  );

  const inspectorApi = buildInspector(inspector, model, signal);
  const actionsApi = buildActions(actions, model, signal);
  const unmountObservables = mountObservables(observablesBox, model, signal, announcer);

  model.on("msg:custom", onCustom);
  model.on("change:transcript", renderTranscript);
  model.on("change:chat_busy", onBusy);
  model.on("change:chat_model", onBusy);
  model.on("change:chat_lesson", showLesson);
  model.on("change:values", inspectorApi.sync);
  model.on("change:manifest", inspectorApi.rebuild);
  model.on("change:manifest", actionsApi.rebuild);
  renderTranscript();
  onBusy();
  showLesson();

  return () => {
    clearCountdown();
    clearDeadline();
    clearTimeout(copiedTimer);
    model.off("msg:custom", onCustom);
    model.off("change:transcript", renderTranscript);
    model.off("change:chat_busy", onBusy);
    model.off("change:chat_model", onBusy);
    model.off("change:chat_lesson", showLesson);
    model.off("change:values", inspectorApi.sync);
    model.off("change:manifest", inspectorApi.rebuild);
    model.off("change:manifest", actionsApi.rebuild);
    unmountObservables();
    panel.remove();
  };
}

/**
 * @typedef {object} Action  a manifest action as the `manifest` trait carries it (never its binding)
 * @property {string} [label]
 * @property {string} [description]
 */

/**
 * The actions section: one button per action the manifest declares (none: the section is hidden).
 * A press sends `act`; the kernel runs it like `sim.act(name)` and says so in the panel if it failed.
 * @param {HTMLElement} section
 * @param {Model} model
 * @param {AbortSignal} signal
 */
function buildActions(section, model, signal) {
  /** @type {HTMLElement | null} */
  let list = null;

  function rebuild() {
    list?.remove();
    list = h("div", { class: "sb-action-list" });
    const declared = /** @type {Record<string, Action>} */ (model.get("manifest")?.actions ?? {});
    for (const [name, action] of Object.entries(declared)) {
      const title = action.description ? `${name} — ${action.description}` : name;
      const button = h("button", { type: "button", class: "sb-action", text: action.label ?? name, title });
      button.dataset.action = name;
      button.addEventListener("click", () => model.send(actMessage(name)), { signal });
      list.append(button);
    }
    section.hidden = Object.keys(declared).length === 0;
    section.append(list);
  }

  rebuild();
  return { rebuild };
}

/**
 * The parameter inspector: one control per manifest parameter, in sync both ways.
 * @param {HTMLElement} container
 * @param {Model} model
 * @param {AbortSignal} signal
 */
function buildInspector(container, model, signal) {
  /** @type {Map<string, (value: any) => void>} setters that show a value from the kernel */
  let setters = new Map();
  /** @type {HTMLElement | null} */
  let body = null;
  /** @type {Map<string, ReturnType<typeof setTimeout>>} */
  const timers = new Map();

  /** @type {Map<string, string>} the last value sent per path, so Enter then blur sends once */
  const lastSent = new Map();

  /**
   * @param {string} path
   * @param {any} value
   * @param {boolean} [throttled]
   */
  function push(path, value, throttled = false) {
    const send = () => {
      const key = JSON.stringify(value);
      if (lastSent.get(path) === key) return;
      lastSent.set(path, key);
      model.send(setMessage({ [path]: value }));
    };
    if (!throttled) return send();
    if (timers.has(path)) clearTimeout(/** @type {any} */ (timers.get(path)));
    timers.set(
      path,
      setTimeout(() => {
        timers.delete(path);
        send();
      }, SLIDER_INTERVAL_MS),
    );
  }

  function rebuild() {
    body?.remove();
    setters = new Map();
    body = h("div", { class: "sb-rows" });
    const params = /** @type {Record<string, Parameter>} */ (model.get("manifest")?.parameters ?? {});
    for (const [path, p] of Object.entries(params)) {
      const id = `sb-${Math.random().toString(36).slice(2)}`;
      const name = p.label ?? path.split(".").pop() ?? path;
      const label = h("label", { for: id, id: `${id}-label`, text: name, title: `${path}${p.description ? ` — ${p.description}` : ""}` });
      const control = h("div", { class: "sb-control" });
      const unit = p.unit ? h("span", { class: "sb-unit", text: p.unit }) : null;
      if ((p.type === "number" || p.type === "integer") && p.enum === undefined) {
        const number = /** @type {HTMLInputElement} */ (h("input", { type: "number", id, step: String(stepFor(p)), "aria-label": `${name}${p.unit ? ` in ${p.unit}` : ""}` }));
        /** the value as a screen reader says it, with its unit ("1.5 m") */
        const valueText = (/** @type {string} */ v) => (v === "" ? "" : formatObservable(Number(v), p.unit));
        if (p.min !== undefined) number.min = String(p.min);
        if (p.max !== undefined) number.max = String(p.max);
        /** @type {HTMLInputElement | null} */
        let slider = null;
        if (p.min !== undefined && p.max !== undefined) {
          slider = /** @type {HTMLInputElement} */ (
            h("input", { type: "range", min: String(p.min), max: String(p.max), step: String(stepFor(p)), "aria-labelledby": `${id}-label` })
          );
          const s = slider;
          s.addEventListener("input", () => {
            number.value = s.value;
            s.setAttribute("aria-valuetext", valueText(s.value));
            push(path, Number(s.value), true);
          }, { signal });
          // Shift+arrow: ten steps (an arrow alone is the browser's one step)
          s.addEventListener("keydown", (e) => {
            const sign = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 }[e.key];
            if (!e.shiftKey || sign === undefined || s.disabled) return;
            e.preventDefault();
            const before = s.value;
            if (sign > 0) s.stepUp(10);
            else s.stepDown(10);
            if (s.value !== before) s.dispatchEvent(new Event("input", { bubbles: true }));
          }, { signal });
          control.append(s);
        }
        const commit = () => {
          if (number.value === "") return;
          if (slider) {
            slider.value = number.value;
            slider.setAttribute("aria-valuetext", valueText(slider.value));
          }
          push(path, Number(number.value));
        };
        number.addEventListener("change", commit, { signal });
        number.addEventListener("keydown", (e) => e.key === "Enter" && commit(), { signal });
        control.append(number);
        const named = Object.entries(p.named ?? {});
        if (named.length && !p.readonly) {
          const choices = /** @type {HTMLSelectElement} */ (
            h("select", { class: "sb-named", "aria-label": `${name}: named values`, title: "named values" })
          );
          choices.append(h("option", { value: "", text: "…" }));
          for (const [word, value] of named) {
            choices.append(h("option", { value: JSON.stringify(value), text: `${word} (${String(value)}${p.unit ? ` ${p.unit}` : ""})` }));
          }
          choices.addEventListener("change", () => {
            if (choices.value === "") return;
            const value = Number(JSON.parse(choices.value));
            number.value = String(value);
            if (slider) slider.value = String(value);
            push(path, value);
            choices.value = "";
          }, { signal });
          control.append(choices);
        }
        setters.set(path, (v) => {
          if (document.activeElement !== number) number.value = String(v);
          if (slider && document.activeElement !== slider) {
            slider.value = String(v);
            slider.setAttribute("aria-valuetext", valueText(slider.value));
          }
        });
      } else if (p.type === "boolean") {
        const box = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id, role: "switch" }));
        box.addEventListener("change", () => push(path, box.checked), { signal });
        control.append(box);
        setters.set(path, (v) => {
          box.checked = Boolean(v);
        });
      } else if (p.enum !== undefined) {
        const select = /** @type {HTMLSelectElement} */ (h("select", { id }));
        for (const option of p.enum) select.append(h("option", { value: JSON.stringify(option), text: String(option) }));
        select.addEventListener("change", () => push(path, JSON.parse(select.value)), { signal });
        control.append(select);
        setters.set(path, (v) => {
          select.value = JSON.stringify(v);
        });
      } else if (p.type === "array") {
        const inputs = Array.from({ length: p.length ?? 3 }, (_, i) =>
          /** @type {HTMLInputElement} */ (h("input", { type: "number", step: "any", "aria-label": `${name} ${i + 1}`, ...(i === 0 ? { id } : {}) })),
        );
        for (const input of inputs) {
          input.style.width = "4.5em";
          input.addEventListener("change", () => push(path, inputs.map((x) => Number(x.value))), { signal });
        }
        control.append(...inputs);
        setters.set(path, (v) => {
          if (Array.isArray(v)) v.forEach((x, i) => inputs[i] && document.activeElement !== inputs[i] && (inputs[i].value = String(x)));
        });
      } else {
        const text = /** @type {HTMLInputElement} */ (h("input", { type: "text", id }));
        text.addEventListener("change", () => push(path, text.value), { signal });
        text.addEventListener("keydown", (e) => e.key === "Enter" && push(path, text.value), { signal });
        control.append(text);
        setters.set(path, (v) => {
          if (document.activeElement !== text) text.value = String(v ?? "");
        });
      }
      if (unit) control.append(unit);
      if (p.readonly) control.querySelectorAll("input, select").forEach((el) => el.setAttribute("disabled", ""));
      body.append(h("div", { class: "sb-row", "data-path": path }, [label, control]));
    }
    container.append(body);
    sync();
  }

  function sync() {
    const values = model.get("values") ?? {};
    for (const [path, set] of setters) {
      if (!(path in values)) continue;
      lastSent.set(path, JSON.stringify(values[path])); // what the kernel holds is what we last agreed on
      set(values[path]);
    }
  }

  rebuild();
  return { rebuild, sync };
}


const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * @typedef {object} ObservableRow
 * @property {string} name
 * @property {string | undefined} unit
 * @property {HTMLElement} row
 * @property {HTMLElement} text  the value, without its unit
 * @property {HTMLElement} unitEl
 * @property {SVGPolylineElement} line
 * @property {Sample[]} samples  the numeric values of the last 30 s, oldest first
 * @property {{reported: boolean, value: unknown}} read  the value in the latest state
 */

/** With "Announce changes" on, what the page measures is said at most this often (milliseconds). */
export const OBSERVABLE_ANNOUNCE_MS = 5000;

/**
 * The observables section with its heading and an "Announce changes" switch, mounted in `container`
 * (the chat panel's inspector, or under the target when there is no panel); returns its unmount.
 * Switched on, the measurements are announced politely when they changed, at most every
 * OBSERVABLE_ANNOUNCE_MS.
 * @param {HTMLElement} container
 * @param {Model} model
 * @param {AbortSignal} signal
 * @param {import("./announcer.js").Announcer} announcer
 * @returns {() => void}
 */
export function mountObservables(container, model, signal, announcer) {
  const heading = h("h3", { id: `sb-${Math.random().toString(36).slice(2)}`, text: "Observables" });
  const toggle = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", class: "sb-announce-toggle" }));
  const toggleLabel = h("label", { class: "sb-announce" }, [toggle, "Announce changes"]);
  const section = h("section", { class: "sb-observables", "aria-labelledby": heading.id }, [heading, toggleLabel]);
  container.append(section);
  const api = buildObservables(section, model);
  let said = "";
  let lastAt = -Infinity;
  /** @type {ReturnType<typeof setTimeout> | 0} */
  let timer = 0;
  const announce = () => {
    timer = 0;
    const text = api.words();
    if (!toggle.checked || text === said) return;
    said = text;
    lastAt = performance.now();
    announcer.say(text, { key: "observables" });
  };
  const onState = () => {
    api.record();
    if (toggle.checked && !timer) timer = setTimeout(announce, Math.max(0, lastAt + OBSERVABLE_ANNOUNCE_MS - performance.now()));
  };
  toggle.addEventListener("change", () => {
    said = "";
    if (toggle.checked) announce();
  }, { signal });
  model.on("change:manifest", api.rebuild);
  model.on("change:state", onState);
  return () => {
    if (timer) clearTimeout(timer);
    model.off("change:manifest", api.rebuild);
    model.off("change:state", onState);
    api.dispose();
    section.remove();
  };
}

/**
 * The observables section: one row per observable the manifest declares, with its latest value,
 * its unit and a sparkline of its last 30 s of numeric values.
 *
 * Cheap by construction: a state change only reads each observable and appends a sample (one
 * per 100 ms slot); the DOM is written at most every OBSERVABLE_REDRAW_MS, and not at all while
 * the section is out of sight (a collapsed or hidden notebook, a background tab, scrolled away).
 * It is drawn from the samples it kept as soon as it shows again.
 * @param {HTMLElement} section
 * @param {Model} model
 */
function buildObservables(section, model) {
  const list = h("ul", { class: "sb-obs-list" });
  section.append(list);
  /** @type {ObservableRow[]} */
  let rows = [];
  let visible = typeof IntersectionObserver === "undefined"; // without one, always drawn
  let dirty = true;
  let lastDraw = -Infinity;
  /** @type {ReturnType<typeof setTimeout> | null} */
  let timer = null;

  /**
   * @param {string} name
   * @param {Observable} declared
   * @returns {ObservableRow}
   */
  function makeRow(name, declared) {
    const text = h("span", { class: "sb-obs-text" });
    const unitEl = h("span", { class: "sb-unit" });
    const svg = document.createElementNS(SVG_NS, "svg");
    for (const [k, v] of Object.entries({
      class: "sb-spark",
      width: String(SPARKLINE_WIDTH),
      height: String(SPARKLINE_HEIGHT),
      viewBox: `0 0 ${SPARKLINE_WIDTH} ${SPARKLINE_HEIGHT}`,
      "aria-hidden": "true", // the value's text says it; the line only shows where it has been
      focusable: "false",
    })) {
      svg.setAttribute(k, v);
    }
    const line = document.createElementNS(SVG_NS, "polyline");
    for (const [k, v] of Object.entries({
      fill: "none",
      stroke: "currentColor",
      "stroke-width": "1.5",
      "stroke-linejoin": "round",
      "stroke-linecap": "round",
      points: "",
    })) {
      line.setAttribute(k, v);
    }
    svg.append(line);
    const row = h("li", { class: "sb-obs", "data-name": name, "data-kind": "none" }, [
      h("span", { class: "sb-obs-name", text: name, title: declared.description ? `${name} — ${declared.description}` : name }),
      h("span", { class: "sb-obs-value" }, [text, " ", unitEl]),
      svg,
    ]);
    const unit = declared.unit || undefined;
    const entry = { name, unit, row, text, unitEl, line, samples: [], read: { reported: false, value: undefined } };
    show(entry);
    return entry;
  }

  /** @param {ObservableRow} entry */
  function show(entry) {
    const { read, unit } = entry;
    const kind = !read.reported || read.value === null || read.value === undefined ? "none" : numericValue(read.value) === null ? "text" : "number";
    setText(entry.text, read.reported ? formatValue(read.value) : "not reported");
    setText(entry.unitEl, unit && takesUnit(read.value) ? unit : "");
    setAttr(entry.row, "data-kind", kind);
    setAttr(entry.row, "aria-label", observableLabel(entry.name, read, unit));
  }

  function rebuild() {
    const declared = /** @type {Record<string, Observable>} */ (model.get("manifest")?.observables ?? {});
    rows = Object.entries(declared).map(([name, o]) => makeRow(name, o));
    list.replaceChildren(...rows.map((r) => r.row));
    section.hidden = rows.length === 0;
    record();
  }

  /** A new state: read every observable, keep its numeric value as a sample, draw soon. */
  function record() {
    const state = model.get("state") ?? {};
    const now = performance.now();
    for (const entry of rows) {
      entry.read = readObservable(state, entry.name);
      const value = numericValue(entry.read.value);
      entry.samples = value === null ? pruneSamples(entry.samples, now) : addSample(entry.samples, { t: now, v: value });
    }
    dirty = true;
    schedule();
  }

  function schedule() {
    if (!dirty || !visible || timer !== null) return;
    timer = setTimeout(draw, Math.max(0, lastDraw + OBSERVABLE_REDRAW_MS - performance.now()));
  }

  function draw() {
    timer = null;
    if (!visible) return; // still dirty: drawn when it shows again
    dirty = false;
    const now = (lastDraw = performance.now());
    for (const entry of rows) {
      show(entry);
      setAttr(entry.line, "points", entry.row.dataset.kind === "number" ? sparklinePoints(entry.samples, { now }) : "");
    }
  }

  /** @param {boolean} seen */
  function setVisible(seen) {
    visible = seen && document.visibilityState !== "hidden";
    schedule();
  }
  let intersecting = visible;
  const observer =
    typeof IntersectionObserver === "undefined"
      ? null
      : new IntersectionObserver((entries) => {
          intersecting = entries[entries.length - 1].isIntersecting;
          setVisible(intersecting);
        });
  observer?.observe(section);
  const onPageVisibility = () => setVisible(intersecting);
  document.addEventListener("visibilitychange", onPageVisibility);

  function dispose() {
    observer?.disconnect();
    document.removeEventListener("visibilitychange", onPageVisibility);
    if (timer !== null) clearTimeout(timer);
    timer = null;
    rows = [];
  }

  rebuild();
  /** every observable in words, as its row says it: "angle: 19.87 deg; period: 2.84 s" */
  const words = () => rows.map((r) => observableLabel(r.name, r.read, r.unit)).join("; ");
  return { rebuild, record, dispose, words };
}

/**
 * Write an element's text only when it changed (no layout work for an unchanged value).
 * @param {Element} el
 * @param {string} text
 */
function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/**
 * @param {Element} el
 * @param {string} name
 * @param {string} value
 */
function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}
