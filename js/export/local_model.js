// @ts-check
/**
 * A widget's model with no kernel behind it: what an exported page (`sim.to_html()`) gives the
 * notebook view's own `render` (../view/widget.js), so that the same view, sandbox frame and inspector
 * run from a file. The traits are the widget's as they were when it was exported; what the kernel did
 * for the view is done here, in a few lines:
 *
 * - an inspector control's `set` becomes the new `values` (its controls keep to the manifest's types
 *   and ranges; the page checks every value again, as it always does);
 * - an action's button (`act`) becomes an `action` request to the page;
 * - the page's reports (`state` events and replies) become the `state` trait, so the observables show.
 *
 * Nothing leaves the page: `send` never reaches a network.
 */

/** @typedef {import("../host/relay.js").Model} Model */

/**
 * @param {Record<string, any>} traits  the widget's traits (target_id, manifest, _html, _sandbox, values, state, height)
 * @returns {Model & {emit: (event: string, ...args: unknown[]) => void, answered: () => {ok: number, failed: number}}}
 */
export function createLocalModel(traits) {
  const state = { ...traits };
  /** @type {Map<string, Set<(...args: any[]) => void>>} */
  const listeners = new Map();
  let counter = 0;
  /** replies the page answered ok, and the last error one gave */
  const answered = { ok: 0, failed: 0 };

  /**
   * @param {string} event
   * @param {...unknown} args
   */
  function emit(event, ...args) {
    for (const fn of [...(listeners.get(event) ?? [])]) fn(...args);
  }

  /**
   * @param {string} name
   * @param {unknown} value
   */
  function set(name, value) {
    state[name] = value;
    emit(`change:${name}`, value);
  }

  /**
   * A request to the page, as the kernel sends one (docs/protocol.md section 1).
   * @param {"apply" | "action"} op
   * @param {Record<string, unknown>} payload
   */
  function request(op, payload) {
    counter += 1;
    emit("msg:custom", { kind: "request", id: `local-${counter}`, op, payload });
  }

  /** @param {any} msg  a view -> kernel message (docs/protocol.md section 1) */
  function fromView(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.kind === "set" && msg.values && typeof msg.values === "object") {
      // as the kernel does: an apply request (the page's reply says how it went), then the values
      request("apply", { values: msg.values });
      set("values", { ...state.values, ...msg.values });
    } else if (msg.kind === "act" && typeof msg.name === "string") {
      request("action", { name: msg.name });
    } else if (msg.kind === "event" && msg.type === "state" && msg.payload && typeof msg.payload === "object") {
      set("state", msg.payload);
    } else if (msg.kind === "reply") {
      answered[msg.ok ? "ok" : "failed"] += 1;
      if (msg.ok && msg.state && typeof msg.state === "object") set("state", msg.state);
    }
  }

  const model = {
    get: (/** @type {string} */ name) => state[name],
    set,
    on(/** @type {string} */ event, /** @type {(...args: any[]) => void} */ fn) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)?.add(fn);
    },
    off(/** @type {string} */ event, /** @type {(...args: any[]) => void} */ fn) {
      listeners.get(event)?.delete(fn);
    },
    send(/** @type {any} */ msg) {
      // as a comm would: after the current task, so the view has finished what it was doing
      queueMicrotask(() => fromView(msg));
    },
    save_changes() {},
    emit,
    /** how many of the page's replies were ok and how many failed (for a reader's console and tests) */
    answered: () => ({ ...answered }),
  };
  return /** @type {any} */ (model);
}
