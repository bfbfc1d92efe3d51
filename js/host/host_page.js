// @ts-check
/**
 * The headless host page's module (splitbrain_widget/_headless_engine.py inlines the built file as a
 * `<script type="module">` into a blank page): `window.splitbrainHost`, the engine's handle on one
 * hosted target (./host.js) at a time. The engine calls `splitbrainHost.create(opts)` and
 * `splitbrainHost.run(ops)` (one evaluate per batch of ops, their data parsed from a JSON string);
 * the host's messages go to the CDP binding `opts.binding` as JSON text, at most BATCH_CHARS of it
 * per hand-over (one message alone may be longer), so that the engine can refuse a longer one unread.
 */
import { createHost } from "./host.js";

/** Characters of JSON per hand-over to the engine (its bound: MAX_HANDOVER_CHARS, _headless_engine.py). */
export const BATCH_CHARS = 1_000_000;

/**
 * @typedef {Omit<import("./host.js").HostOptions, "deliver"> & {binding: string}} PageOptions
 * `binding`: the name of the window function that takes a JSON batch of messages
 */

/**
 * The hand-overs of one batch of messages: JSON arrays of at most BATCH_CHARS characters each.
 * @param {unknown[]} batch
 * @returns {string[]}
 */
export function handOvers(batch) {
  /** @type {string[]} */
  const out = [];
  /** @type {string[]} */
  let parts = [];
  let chars = 0;
  for (const msg of batch) {
    const text = JSON.stringify(msg);
    if (chars > 0 && chars + text.length > BATCH_CHARS) {
      out.push(`[${parts.join(",")}]`);
      parts = [];
      chars = 0;
    }
    parts.push(text);
    chars += text.length + 1;
  }
  if (parts.length > 0) out.push(`[${parts.join(",")}]`);
  return out;
}

/** @type {ReturnType<typeof createHost> | null} */
let active = null;

/** The engine's handle: one view at a time per host page. */
const api = Object.freeze({
  /** @param {PageOptions} opts */
  create(opts) {
    if (active) active.dispose();
    const send = /** @type {(json: string) => void} */ (/** @type {any} */ (window)[opts.binding]);
    active = createHost({ ...opts, attach: true, deliver: (batch) => handOvers(batch).forEach((text) => send(text)) });
    return true;
  },
  /** @param {import("./host.js").HostOp[]} ops */
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
