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
 * @returns {Model & {emit: (event: string, ...args: unknown[]) => void}}
 */
export function createLocalModel(traits) {
  const state = { ...traits };
  /** @type {Map<string, Set<(...args: any[]) => void>>} */
  const listeners = new Map();
  let counter = 0;

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

  /** @param {any} msg  a view -> kernel message (docs/protocol.md section 1) */
  function fromView(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.kind === "set" && msg.values && typeof msg.values === "object") {
      set("values", { ...state.values, ...msg.values });
    } else if (msg.kind === "act" && typeof msg.name === "string") {
      counter += 1;
      emit("msg:custom", { kind: "request", id: `local-${counter}`, op: "action", payload: { name: msg.name } });
    } else if (msg.kind === "event" && msg.type === "state" && msg.payload && typeof msg.payload === "object") {
      set("state", msg.payload);
    } else if (msg.kind === "reply" && msg.ok && msg.state && typeof msg.state === "object") {
      set("state", msg.state);
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
  };
  return /** @type {any} */ (model);
}
