// @ts-check
/**
 * bindings.js: the runtime of a bound page, one that knows nothing of splitbrain and is steered
 * through its manifest's bindings (the manifest schema: splitbrain_widget/manifest.py).
 *
 * The registry inlines it (bundled to an IIFE) in the head right after the target API, and
 * generates, from the manifest, small classic scripts at the very end of the page
 * (splitbrain_widget/_bindings.py) that call it:
 *
 *   __splitbrainBindings.expr("count", () => (particles.length * 2));          one per `read.expr`
 *   __splitbrainBindings.start(spec, {speed: {get: () => speed, set: (v) => { speed = v; }}});
 *
 * The closures are generated source, so no eval runs (the default CSP has none) and they see the
 * page's top-level `let` / `const`. Only a path's first identifier is a closure; the rest is
 * walked here as properties, which lets an error say which part is missing.
 *
 * `start` registers SplitBrain.onApply / onReset / onState (and onAction when the target API has
 * it), answers every request with a fresh state ({<param path>: read-back value, <observable>:
 * value}), reports the state on its own at most every REPORT_MS and only when it changed, and
 * calls SplitBrain.ready() once the manifest's ready condition holds. A binding that finds
 * nothing when a value is set or an action runs throws an error naming it, which the target API
 * sends as `target_error` (and nothing of that call is set); a read that finds nothing gives null
 * and names itself under ERRORS_KEY in the state:
 *
 *   settings.bias: bind.global 'BIAS' is not defined in the page
 *
 * Without a target API (a standalone copy of the page) nothing is registered; the runtime object
 * still reads and applies, for a look from the console: `__splitbrainBindings.read()`.
 */
// Kept in the IIFE bundle (esbuild drops a module's implicit strictness): in sloppy mode a write
// to a frozen object or a read-only property is ignored without an error, and would answer ok.
"use strict";

import { REFUSED_KEY } from "../protocol.js";

export { REFUSED_KEY };

/**
 * The state's key for the reads that found nothing, by parameter or observable: `{"fps": "fps:
 * read.selector '#stats' matches no element"}`. Such a value is null; the call that read it still
 * succeeds (what it set is set), and the key is absent when every read worked.
 */
export const ERRORS_KEY = "_errors";

/*
 * REFUSED_KEY (../protocol.js): the state's key for the values a page did not take when it got
 * them outside a call (as it opened, on a reset), by parameter, in the manifest's units:
 * `{"board.occupied": {"asked": 90, "held": 80}}` (with `error` where its binding found nothing).
 * The others were set; the kernel takes the page's values for these and says so.
 */

/**
 * @typedef {{asked: unknown, held: unknown, error?: string}} Refusal
 */

/** Least time between two state reports of the runtime's own (ms). */
export const REPORT_MS = 100;
/** How often an unmet ready condition is checked again, besides DOM changes and load (ms). */
export const READY_POLL_MS = 50;

/** How often a wait step looks at its expression on a live page (ms). */
export const WAIT_POLL_MS = 50;

/** Events a form control gets after its value is set, as a person's input fires them. */
export const DEFAULT_EVENTS = Object.freeze(["input", "change"]);

/**
 * How a value crosses between the manifest and the page: page = value * scale + offset for a
 * number, or the page's value for each manifest value (`values`, keyed by the value as text:
 * `{"true": "1", "false": "0"}`).
 * @typedef {object} Conversion
 * @property {number} [scale]
 * @property {number} [offset]
 * @property {Record<string, unknown>} [values]
 */

/**
 * Where a value is read: a global, an expression (compiled, registered under a key) or an element.
 * @typedef {Conversion & {global?: string, expr?: string, selector?: string, attr?: string, number?: boolean}} ReadSpec
 */

/**
 * @typedef {object} ParamSpec
 * @property {string} path  the parameter's dotted path
 * @property {string} type  "number", "integer", "boolean", "string" or "array"
 * @property {Conversion & {global?: string, selector?: string, call?: string, calls?: Record<string, string>, drag?: string, track?: string, axis?: "x" | "y", span?: [number, number], position?: string, toggle?: string, pressed?: PressedSpec, event?: string[], after?: string}} bind
 * @property {ReadSpec} [read]  the page's model, when it is not where a person sets the value
 * @property {number} [min]  the parameter's range (a drag binding maps it onto its track)
 * @property {number} [max]
 * @property {string} [position_key]  where a drag's `position` expression is registered
 */

/**
 * How a toggle button shows that it is on: an attribute that is "true", a class, or its label.
 * @typedef {{attr?: string, class?: string, text?: string}} PressedSpec
 */

/**
 * @typedef {object} ObservableSpec
 * @property {string} name
 * @property {ReadSpec} read
 */

/**
 * One step of an action: click an element (`all`: every match), press a key (with `modifiers`, at
 * the element `on` names), call a function (with arguments), set parameters through their
 * bindings, assign a JSON value to a path of the page's model, or wait until an expression holds
 * (`expr_key`: where its closure is registered; `timeout` in seconds, always given with a wait;
 * `since: "start"`: until its value differs from the one read as the action began, or has grown by
 * `by`).
 * @typedef {{click?: string, all?: boolean, key?: string, modifiers?: string[], on?: string, call?: string, args?: unknown[], set?: Record<string, unknown>, assign?: string, value?: unknown, wait?: string, expr_key?: string, timeout?: number, since?: "start", by?: number}} StepSpec
 */

/**
 * @typedef {object} ActionSpec
 * @property {string} name
 * @property {StepSpec[]} steps  run in order, after every one was checked
 * @property {boolean} [when]  whether a `when` expression was registered (`action <name>`): the action runs only while it holds
 */

/**
 * What the generated script passes to `start` (splitbrain_widget/_bindings.py, binding_spec).
 * @typedef {object} BindingSpec
 * @property {ParamSpec[]} params
 * @property {ObservableSpec[]} observables
 * @property {ActionSpec[]} actions
 * @property {{load?: boolean, global?: string, selector?: string}} ready
 */

/**
 * A global path's first identifier, as closures generated in the page's scope.
 * @typedef {{get: () => unknown, set?: (value: unknown) => void}} RootAccessor
 */

/**
 * The parts of the target API the runtime uses (js/page/target_api.js).
 * @typedef {object} TargetApi
 * @property {(fn: (values: Record<string, unknown>, ctx?: {id?: string}) => unknown) => void} onApply  (ctx.id: none for the values a page gets when it opens)
 * @property {(fn: (values: Record<string, unknown>) => unknown) => void} onReset
 * @property {(fn: () => unknown) => void} onState
 * @property {((fn: (name: string) => unknown) => void)} [onAction]
 * @property {(state: Record<string, unknown>) => void} state
 * @property {() => void} ready
 */

/**
 * The parts of `window` the runtime uses (a fake one in tests).
 * @typedef {object} BindingsWindow
 * @property {Document} document
 * @property {TargetApi} [SplitBrain]
 * @property {(fn: () => void, ms: number) => unknown} setInterval
 * @property {(fn: FrameRequestCallback) => number} [requestAnimationFrame]
 * @property {(id: unknown) => void} clearInterval
 * @property {(type: string, fn: () => void) => void} addEventListener
 * @property {typeof MutationObserver} [MutationObserver]
 * @property {typeof Event} Event
 * @property {typeof KeyboardEvent} [KeyboardEvent]
 */

/** An error whose message names the binding that failed. */
export class BindingError extends Error {
  /**
   * @param {string} where  `settings.speed` (a parameter), `count` (an observable), `actions.run`, `ready`
   * @param {string} what  `bind.global 'SPEED' is not defined in the page`
   */
  constructor(where, what) {
    // No own `name`: the target API would put "BindingError: " before the message, which already
    // says all (`settings.bias: bind.global 'BIAS' is not defined in the page`).
    super(`${where}: ${what}`);
  }
}

/**
 * @param {unknown} err
 * @returns {string}
 */
function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * @param {unknown} value
 * @returns {string}
 */
function describe(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value) ?? String(value)}`;
}

/**
 * The first number in `text` ("12.5 m/s" -> 12.5, "−3" -> -3); null when there is none.
 * @param {string} text
 * @returns {number | null}
 */
export function firstNumber(text) {
  const match = /[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?/.exec(text.replace(/\u2212/g, "-"));
  return match ? Number(match[0]) : null;
}

/**
 * A value made plain JSON for a state (NaN and Infinity become null, as JSON has them).
 * @param {string} where
 * @param {unknown} value
 * @returns {unknown}
 */
function plain(where, value) {
  if (value === undefined) return null;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  let text;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new BindingError(where, `the value cannot be reported as JSON (${messageOf(err)})`);
  }
  if (text === undefined) throw new BindingError(where, `the value cannot be reported as JSON (${describe(value)})`);
  return JSON.parse(text);
}

/**
 * The value setter a person's input goes through: the prototype's, not one a framework (React)
 * put on the element itself, so that the framework sees the change in the events that follow.
 * @param {object} element
 * @param {"value" | "checked"} property
 * @returns {(value: unknown) => void}
 */
function nativeSetter(element, property) {
  for (let proto = Object.getPrototypeOf(element); proto; proto = Object.getPrototypeOf(proto)) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, property);
    if (descriptor?.set) {
      const set = descriptor.set;
      return (value) => set.call(element, value);
    }
  }
  return (value) => {
    /** @type {Record<string, unknown>} */ (element)[property] = value;
  };
}

/**
 * @param {Element} element
 * @returns {string}  `<input type="range">`, `<div>`
 */
function tagOf(element) {
  const tag = element.tagName.toLowerCase();
  const type = tag === "input" ? /** @type {HTMLInputElement} */ (element).type : "";
  return type ? `<${tag} type="${type}">` : `<${tag}>`;
}

/**
 * A form control's value converted to a parameter's type ("12" -> 12 for a number).
 * @param {string} text
 * @param {string} type
 * @returns {unknown}
 */
function fromControl(text, type) {
  if (type === "number" || type === "integer") {
    const number = text.trim() === "" ? NaN : Number(text);
    return Number.isFinite(number) ? number : null;
  }
  if (type === "boolean") return text === "true" || text === "on";
  return text;
}

/**
 * The keys a key step names by word, as `KeyboardEvent.code` and the legacy `keyCode`.
 * @type {Record<string, {code: string, keyCode: number}>}
 */
export const NAMED_KEYS = Object.freeze(
  Object.fromEntries(
    /** @type {[string, string, number][]} key, code, keyCode */ ([
      [" ", "Space", 32], ["Enter", "Enter", 13], ["Escape", "Escape", 27], ["Tab", "Tab", 9],
      ["Backspace", "Backspace", 8], ["Delete", "Delete", 46], ["ArrowLeft", "ArrowLeft", 37],
      ["ArrowUp", "ArrowUp", 38], ["ArrowRight", "ArrowRight", 39], ["ArrowDown", "ArrowDown", 40],
      ["Home", "Home", 36], ["End", "End", 35], ["PageUp", "PageUp", 33], ["PageDown", "PageDown", 34],
    ]).map(([key, code, keyCode]) => [key, { code, keyCode }]),
  ),
);

/** Pointer moves between the press and the release of a drag (a person's drag is a path, not a jump). */
export const DRAG_MOVES = 8;

/** Relative tolerance when a number the page holds is compared with the one set (scale round trips). */
export const HOLD_TOLERANCE = 1e-9;

/**
 * A manifest value as the page stores it.
 * @param {string} where
 * @param {string} field  `bind`, `read`
 * @param {unknown} value
 * @param {Conversion} conv
 * @returns {unknown}
 */
export function toPage(where, field, value, conv) {
  if (conv.values !== undefined) {
    const key = String(value);
    if (!Object.prototype.hasOwnProperty.call(conv.values, key)) {
      throw new BindingError(where, `${field}.values has no page value for ${JSON.stringify(value)}`);
    }
    return conv.values[key];
  }
  if (typeof value === "number" && (conv.scale !== undefined || conv.offset !== undefined)) {
    return value * (conv.scale ?? 1) + (conv.offset ?? 0);
  }
  return value;
}

/**
 * What the page holds, as a manifest value of `type`: `values` mapped back, a number taken from a
 * string the page stores ("15" -> 15), `scale` and `offset` undone.
 * @param {string} where
 * @param {string} field
 * @param {unknown} raw
 * @param {Conversion} conv
 * @param {string} type
 * @returns {unknown}
 */
export function fromPage(where, field, raw, conv, type) {
  if (conv.values !== undefined) {
    const key = Object.keys(conv.values).find((k) => samePageValue(/** @type {Record<string, unknown>} */ (conv.values)[k], raw));
    if (key === undefined) {
      throw new BindingError(where, `${field}.values: the page holds ${JSON.stringify(raw) ?? String(raw)}, which no manifest value maps to`);
    }
    if (type === "boolean") return key === "true";
    if (type === "number" || type === "integer") return Number(key);
    return key;
  }
  let value = raw;
  if ((type === "number" || type === "integer") && typeof value === "string") value = firstNumber(value);
  if (typeof value === "number" && (conv.scale !== undefined || conv.offset !== undefined)) {
    // 0.33 / 0.01 is 33.00000000000001 in floating point: twelve significant digits say what the page holds
    const back = Number(((value - (conv.offset ?? 0)) / (conv.scale ?? 1)).toPrecision(12));
    const near = Math.round(back);
    return type === "integer" && Math.abs(back - near) < HOLD_TOLERANCE * Math.max(1, Math.abs(back)) ? near : back;
  }
  return value;
}

/**
 * Whether a page value equals a mapped one: the same JSON, or the same text (a control's "1" is 1).
 * @param {unknown} a
 * @param {unknown} b
 */
function samePageValue(a, b) {
  return JSON.stringify(a) === JSON.stringify(b) || (a !== null && b !== null && typeof a !== "object" && String(a) === String(b));
}

/**
 * Whether the page holds the value that was set (numbers within HOLD_TOLERANCE, arrays item by item).
 * @param {unknown} held
 * @param {unknown} wanted
 * @returns {boolean}
 */
export function holdsValue(held, wanted) {
  if (typeof held === "number" && typeof wanted === "number") {
    return Math.abs(held - wanted) <= HOLD_TOLERANCE * Math.max(1, Math.abs(wanted));
  }
  if (Array.isArray(held) && Array.isArray(wanted)) {
    return held.length === wanted.length && held.every((h, i) => holdsValue(h, wanted[i]));
  }
  return JSON.stringify(held) === JSON.stringify(wanted);
}

/**
 * @param {unknown} value
 * @returns {string}
 */
function shownValue(value) {
  return JSON.stringify(value) ?? String(value);
}

/**
 * Install the runtime on `win` (as `win.__splitbrainBindings`) and return it. A second install
 * returns the first.
 * @param {BindingsWindow} win
 */
export function installBindings(win) {
  const anyWin = /** @type {{__splitbrainBindings?: ReturnType<typeof makeRuntime>}} */ (
    /** @type {unknown} */ (win)
  );
  if (anyWin.__splitbrainBindings) return anyWin.__splitbrainBindings;
  const runtime = makeRuntime(win);
  Object.defineProperty(win, "__splitbrainBindings", { value: runtime });
  return runtime;
}

/** @param {BindingsWindow} win */
function makeRuntime(win) {
  /** @type {Map<string, () => unknown>} the observables' compiled `read.expr` closures */
  const exprs = new Map();
  /** @type {BindingSpec | null} */
  let spec = null;
  /** @type {Record<string, RootAccessor>} */
  let roots = {};
  let started = false;
  /** JSON of the last state sent (reported or answered): a report only goes out when it differs. */
  let lastSent = "";
  /** @type {Set<string>} problems of the own reports, logged once each */
  const logged = new Set();
  /** @type {(() => void) | null} the manifest's `setup` that runs once the page is ready */
  let onReady = null;
  /** @type {Record<string, unknown>} the values of the apply being made (a drag's `position` reads them) */
  let applying = {};

  // -- globals --------------------------------------------------------------------------------

  /**
   * The value at a global path, with where it failed when it did.
   * @param {string} where  the binding, for the error
   * @param {string} field  `bind.global`, `read.global`, `bind.after`, ...
   * @param {string} path
   * @param {number} [upTo]  walk only this many segments (the parent of a value to set)
   * @returns {unknown}
   */
  function walk(where, field, path, upTo) {
    const parts = path.split(".");
    const count = upTo ?? parts.length;
    const root = roots[parts[0]];
    if (!root) throw new BindingError(where, `${field} '${path}' has no accessor (the bindings script did not run)`);
    let value;
    try {
      value = root.get();
    } catch (err) {
      if (err instanceof ReferenceError) {
        // A `let` read before its declaration ran throws a ReferenceError too: say both.
        throw new BindingError(where, `${field} '${parts[0]}' is not defined in the page (${messageOf(err)})`);
      }
      throw new BindingError(where, `${field} '${parts[0]}' cannot be read: ${messageOf(err)}`);
    }
    for (let i = 1; i < count; i += 1) {
      if (value === null || value === undefined) {
        throw new BindingError(where, `${field} '${path}': '${parts.slice(0, i).join(".")}' is ${value}`);
      }
      value = /** @type {Record<string, unknown>} */ (value)[parts[i]];
    }
    return value;
  }

  /**
   * Check that the global at `path` can be written; return what writes `value` (nothing is set yet).
   * @param {string} where
   * @param {string} path
   * @param {unknown} value
   * @param {string} [field]  the manifest's field that names the path, for errors
   * @returns {() => void}
   */
  function prepareGlobal(where, path, value, field = "bind.global") {
    const parts = path.split(".");
    if (parts.length === 1) {
      // Read first: assigning an undeclared name would quietly make a new window property.
      const current = walk(where, field, path);
      const set = roots[path]?.set;
      if (!set) throw new BindingError(where, `${field} '${path}' has no setter (the bindings script did not run)`);
      /** @param {unknown} v */
      const write = (v) => {
        try {
          set(v);
        } catch (err) {
          if (err instanceof TypeError) {
            throw new BindingError(where, `${field} '${path}' is a const and cannot be written (${messageOf(err)})`);
          }
          throw new BindingError(where, `${field} '${path}' cannot be written: ${messageOf(err)}`);
        }
      };
      const own = Object.getOwnPropertyDescriptor(win, path);
      if (own === undefined) {
        write(current); // a top-level let or const: a const refuses even its own value, before anything else was set
      } else if ("value" in own ? !own.writable : !own.set) {
        throw new BindingError(where, `${field} '${path}' is a read-only property of window and cannot be written`);
      }
      return () => write(value);
    }
    const parent = walk(where, field, path, parts.length - 1);
    if (parent === null || (typeof parent !== "object" && typeof parent !== "function")) {
      const at = parts.slice(0, -1).join(".");
      const what = parent === null || parent === undefined ? String(parent) : `${describe(parent)}, not an object`;
      throw new BindingError(where, `${field} '${path}': '${at}' is ${what}`);
    }
    return () => {
      let written;
      try {
        written = Reflect.set(/** @type {object} */ (parent), parts[parts.length - 1], value);
      } catch (err) {
        throw new BindingError(where, `${field} '${path}' cannot be written: ${messageOf(err)}`);
      }
      // A frozen object or a read-only property refuses quietly: say so rather than answer ok.
      if (!written) throw new BindingError(where, `${field} '${path}' is read-only and cannot be written`);
    };
  }

  /**
   * The function at a global path and its object (`this` for the call); nothing is called yet.
   * @param {string} where
   * @param {string} field
   * @param {string} path
   * @returns {{fn: Function, owner: unknown}}
   */
  function functionAt(where, field, path) {
    const parts = path.split(".");
    const owner = parts.length > 1 ? walk(where, field, path, parts.length - 1) : undefined;
    const fn = walk(where, field, path);
    if (typeof fn !== "function") throw new BindingError(where, `${field} '${path}' is not a function (got ${describe(fn)})`);
    return { fn, owner };
  }

  /**
   * Call the function at a global path with its object as `this`.
   * @param {string} where
   * @param {string} field
   * @param {string} path
   * @param {unknown[]} [args]
   * @returns {unknown} what it returned
   */
  function callGlobal(where, field, path, args = []) {
    const { fn, owner } = functionAt(where, field, path);
    return fn.apply(owner, args);
  }

  // -- form controls --------------------------------------------------------------------------

  /**
   * @param {string} where
   * @param {string} field
   * @param {string} selector
   * @returns {Element[]} at least one element
   */
  function select(where, field, selector) {
    let found;
    try {
      found = Array.from(win.document.querySelectorAll(selector));
    } catch (err) {
      throw new BindingError(where, `${field} '${selector}' is not a valid CSS selector (${messageOf(err)})`);
    }
    if (found.length === 0) throw new BindingError(where, `${field} '${selector}' matches no element`);
    return found;
  }

  /**
   * The control(s) a parameter's selector names, checked against the parameter's type.
   * @param {ParamSpec} param
   * @returns {{kind: "radio", radios: HTMLInputElement[]} | {kind: "checkbox" | "field", element: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement}}
   */
  function control(param) {
    const selector = /** @type {string} */ (param.bind.selector);
    const found = select(param.path, "bind.selector", selector);
    const isInput = (/** @type {Element} */ el) => el.tagName.toLowerCase() === "input";
    if (found.every((el) => isInput(el) && /** @type {HTMLInputElement} */ (el).type === "radio")) {
      return { kind: "radio", radios: /** @type {HTMLInputElement[]} */ (found) };
    }
    if (found.length > 1) {
      throw new BindingError(
        param.path,
        `bind.selector '${selector}' matches ${found.length} elements; expected one control (or radio buttons only)`,
      );
    }
    const element = found[0];
    const tag = element.tagName.toLowerCase();
    if (tag !== "input" && tag !== "select" && tag !== "textarea") {
      throw new BindingError(
        param.path,
        `bind.selector '${selector}' matches a ${tagOf(element)}; expected an <input>, <select> or <textarea>`,
      );
    }
    const input = /** @type {HTMLInputElement} */ (element);
    if (tag === "input" && input.type === "checkbox") {
      if (param.type !== "boolean") {
        throw new BindingError(
          param.path,
          `bind.selector '${selector}' matches a checkbox; expected a boolean parameter, this one is ${param.type}`,
        );
      }
      return { kind: "checkbox", element: input };
    }
    return { kind: "field", element: /** @type {HTMLInputElement | HTMLSelectElement} */ (element) };
  }

  /**
   * Check that `value` can go into the parameter's control; return what sets it (nothing is set yet).
   * @param {ParamSpec} param
   * @param {unknown} value
   * @returns {() => void}
   */
  function prepareControl(param, value) {
    const events = param.bind.event ?? DEFAULT_EVENTS;
    resolveControl(param, value); // the check: throws naming the binding, sets nothing
    return () => {
      // Looked up again: an earlier step's events may have changed this control, or replaced it.
      const { element, holds, set } = resolveControl(param, value);
      if (holds) return;
      set();
      for (const type of events) element.dispatchEvent(new win.Event(type, { bubbles: true }));
    };
  }

  /**
   * The element a value goes into, whether it shows the value already (then nothing is set and no
   * event fires, as a person cannot click a control into the state it has: a page toggling on each
   * event would flip), and what sets it. A disabled control is refused, as a person could not use it.
   * @param {ParamSpec} param
   * @param {unknown} value
   * @returns {{element: Element, holds: boolean, set: () => void}}
   */
  function resolveControl(param, value) {
    const selector = /** @type {string} */ (param.bind.selector);
    const target = control(param);
    /** @type {{element: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, holds: boolean, set: () => void}} */
    let found;
    if (target.kind === "radio") {
      const wanted = String(value);
      const radio = target.radios.find((r) => r.value === wanted);
      if (!radio) {
        const values = target.radios.map((r) => JSON.stringify(r.value)).join(", ");
        throw new BindingError(param.path, `bind.selector '${selector}' has no radio button of value ${JSON.stringify(wanted)} (values: ${values})`);
      }
      found = { element: radio, holds: radio.checked, set: () => nativeSetter(radio, "checked")(true) };
    } else if (target.kind === "checkbox") {
      const box = /** @type {HTMLInputElement} */ (target.element);
      const checked = value === true;
      found = { element: box, holds: box.checked === checked, set: () => nativeSetter(box, "checked")(checked) };
    } else {
      const element = target.element;
      const text = String(value);
      if (element.tagName.toLowerCase() === "select") {
        const options = Array.from(/** @type {HTMLSelectElement} */ (element).options, (o) => o.value);
        if (!options.includes(text)) {
          const list = options.map((o) => JSON.stringify(o)).join(", ");
          throw new BindingError(param.path, `bind.selector '${selector}' has no option of value ${JSON.stringify(text)} (options: ${list})`);
        }
      }
      found = { element, holds: element.value === text, set: () => nativeSetter(element, "value")(text) };
    }
    if (!found.holds && found.element.disabled) {
      throw new BindingError(param.path, `bind.selector '${selector}' is disabled (a person could not change it now)`);
    }
    return found;
  }

  /**
   * A parameter's value as the page holds it now: from its `read` (the page's model) when it has
   * one, else read back from where it is set; converted to the manifest's value.
   * @param {ParamSpec} param
   * @returns {unknown}
   */
  function readParam(param) {
    if (param.read !== undefined) {
      const raw = readSource(param.path, "read", param.read, `param ${param.path}`);
      return fromPage(param.path, "read", raw, param.read, param.type);
    }
    return fromPage(param.path, "bind", readBound(param), param.bind, param.type);
  }

  /**
   * What a parameter's `bind` holds: the global, or the control's value (a number's text as a number).
   * @param {ParamSpec} param
   * @returns {unknown}
   */
  function readBound(param) {
    if (param.bind.global !== undefined) return plain(param.path, walk(param.path, "bind.global", param.bind.global));
    if (param.bind.toggle !== undefined) return pressedNow(param);
    if (param.bind.call !== undefined || param.bind.drag !== undefined) {
      throw new BindingError(param.path, `bind.${param.bind.call !== undefined ? "call" : "drag"} needs a read (the value the page holds)`);
    }
    const type = param.bind.values !== undefined ? "string" : param.type; // mapped values are compared as the page has them
    const target = control(param);
    if (target.kind === "radio") {
      const checked = target.radios.find((r) => r.checked);
      return checked ? fromControl(checked.value, type) : null;
    }
    if (target.kind === "checkbox") return /** @type {HTMLInputElement} */ (target.element).checked;
    return fromControl(target.element.value, type);
  }

  // -- reads ------------------------------------------------------------------------------------

  /**
   * A value where a read names it: a global, a compiled expression (registered under `key`), or an
   * element's text, value or attribute; `number` takes the first number in what it finds.
   * @param {string} where
   * @param {string} field  `read`
   * @param {ReadSpec} read
   * @param {string} key  the expression's key
   * @returns {unknown}
   */
  function readSource(where, field, read, key) {
    /** @type {unknown} */
    let value;
    if (read.global !== undefined) {
      value = plain(where, walk(where, `${field}.global`, read.global));
    } else if (read.expr !== undefined) {
      const fn = exprs.get(key);
      if (!fn) throw new BindingError(where, `${field}.expr did not compile (its error is in the page's console)`);
      try {
        value = fn();
      } catch (err) {
        throw new BindingError(where, `${field}.expr threw: ${messageOf(err)}`);
      }
      value = plain(where, value);
    } else {
      const selector = /** @type {string} */ (read.selector);
      const element = select(where, `${field}.selector`, selector)[0];
      const attr = read.attr ?? "text";
      if (attr === "text") value = (element.textContent ?? "").trim();
      else if (attr === "value") value = String(/** @type {HTMLInputElement} */ (element).value ?? "");
      else value = element.getAttribute(attr);
    }
    if (read.number && typeof value === "string") value = firstNumber(value);
    return value;
  }

  /**
   * @param {ObservableSpec} observable
   * @returns {unknown}
   */
  function readObservable(observable) {
    const { name, read } = observable;
    const value = readSource(name, "read", read, name);
    return typeof value === "number" ? fromPage(name, "read", value, read, "number") : value;
  }

  /**
   * The state now: every bound parameter's read-back value, then every observable.
   * @returns {Record<string, unknown>}
   */
  function read() {
    const current = /** @type {BindingSpec} */ (spec);
    /** @type {Record<string, unknown>} */
    const state = {};
    /** @type {Record<string, string>} */
    const errors = {};
    /**
     * @param {string} key
     * @param {() => unknown} reader
     */
    const take = (key, reader) => {
      try {
        state[key] = reader();
      } catch (err) {
        if (!(err instanceof BindingError)) throw err;
        state[key] = null;
        errors[key] = err.message;
      }
    };
    for (const param of current.params) take(param.path, () => readParam(param));
    for (const observable of current.observables) take(observable.name, () => readObservable(observable));
    if (Object.keys(errors).length > 0) state[ERRORS_KEY] = errors;
    return state;
  }

  /** A state for a handler to return; the own reporter then has nothing new to say. */
  function fresh() {
    const state = read();
    lastSent = JSON.stringify(state);
    return state;
  }

  /**
   * A fresh state with the values the page did not take under REFUSED_KEY (when there are any).
   * @param {Record<string, Refusal>} refused
   */
  function withRefusals(refused) {
    const state = fresh();
    if (Object.keys(refused).length > 0) state[REFUSED_KEY] = refused;
    return state;
  }

  // -- handlers -------------------------------------------------------------------------------

  // -- clicks -----------------------------------------------------------------------------------

  /**
   * Click an element as a person's mouse does: pressed and released at its centre (pointer and
   * mouse events both, for a page that acts on the press, as a board of cells often does), then
   * the click itself.
   * @param {HTMLElement} element
   */
  function clickLikeAPerson(element) {
    if (/** @type {any} */ (win).MouseEvent !== undefined) {
      const box = typeof element.getBoundingClientRect === "function" ? element.getBoundingClientRect() : null;
      const centre = box ? { x: box.left + box.width / 2, y: box.top + box.height / 2 } : null;
      press(element, "down", centre);
      press(element, "up", centre);
    }
    element.click();
  }

  /**
   * A mouse's press, move or release at `point` (client pixels; none: no position), as pointer and
   * mouse events both, as pages listen to either.
   * @param {EventTarget} at
   * @param {string} kind  down, move or up
   * @param {{x: number, y: number} | null} point
   */
  function press(at, kind, point) {
    const Pointer = /** @type {any} */ (win).PointerEvent ?? /** @type {any} */ (win).MouseEvent ?? win.Event;
    const Mouse = /** @type {any} */ (win).MouseEvent ?? win.Event;
    const where = point ? { clientX: point.x, clientY: point.y } : {};
    const init = { bubbles: true, cancelable: true, composed: true, ...where, button: 0, buttons: kind === "up" ? 0 : 1 };
    at.dispatchEvent(new Pointer(`pointer${kind}`, { ...init, pointerId: 1, pointerType: "mouse", isPrimary: true }));
    at.dispatchEvent(new Mouse(`mouse${kind}`, init));
  }

  // -- toggle buttons ---------------------------------------------------------------------------

  /**
   * A toggle binding's button, checked: found, clickable.
   * @param {ParamSpec} param
   * @returns {HTMLElement}
   */
  function toggleButton(param) {
    const selector = /** @type {string} */ (param.bind.toggle);
    const button = /** @type {HTMLElement} */ (select(param.path, "bind.toggle", selector)[0]);
    if (typeof button.click !== "function") {
      throw new BindingError(param.path, `bind.toggle '${selector}' matches a ${tagOf(button)}, which cannot be clicked`);
    }
    return button;
  }

  /**
   * Whether a toggle binding's button shows that it is on, as its `pressed` says (by default its
   * `aria-pressed` attribute is "true").
   * @param {ParamSpec} param
   * @returns {boolean}
   */
  function pressedNow(param) {
    const button = toggleButton(param);
    const pressed = param.bind.pressed ?? { attr: "aria-pressed" };
    if (pressed.class !== undefined) return button.classList.contains(pressed.class);
    if (pressed.text !== undefined) return (button.textContent ?? "").trim() === pressed.text;
    return button.getAttribute(/** @type {string} */ (pressed.attr)) === "true";
  }

  /**
   * Click the button when it does not show the value already (a click turns it on or off); a
   * disabled one is refused, as a person could not use it.
   * @param {ParamSpec} param
   * @param {unknown} value
   * @returns {() => void}
   */
  function prepareToggle(param, value) {
    const check = () => {
      const button = toggleButton(param);
      const holds = pressedNow(param) === (value === true);
      if (!holds && /** @type {HTMLButtonElement} */ (button).disabled) {
        throw new BindingError(param.path, `bind.toggle '${param.bind.toggle}' is disabled (a person could not press it now)`);
      }
      return { button, holds };
    };
    check();
    return () => {
      const { button, holds } = check(); // looked up again: an earlier step may have replaced it
      if (!holds) clickLikeAPerson(button);
    };
  }

  // -- keys -------------------------------------------------------------------------------------

  /**
   * What a key step's key is as `KeyboardEvent.code` and as the legacy `keyCode` pages still read.
   * @param {string} key  as `KeyboardEvent.key` names it
   * @returns {{code: string, keyCode: number}}
   */
  function keyNames(key) {
    if (/^[a-z]$/i.test(key)) return { code: `Key${key.toUpperCase()}`, keyCode: key.toUpperCase().charCodeAt(0) };
    if (/^[0-9]$/.test(key)) return { code: `Digit${key}`, keyCode: key.charCodeAt(0) };
    const named = NAMED_KEYS[key];
    if (named !== undefined) return named;
    return { code: "", keyCode: key.length === 1 ? key.toUpperCase().charCodeAt(0) : 0 };
  }

  /**
   * Press a key as a person does: keydown, keypress (a printable key), keyup, at the element `on`
   * names (else the focused element, else the body), bubbling up to the window.
   * @param {string} where
   * @param {string} field
   * @param {StepSpec} step
   * @returns {() => void}
   */
  function prepareKey(where, field, step) {
    const target = () =>
      step.on !== undefined ? select(where, `${field}on`, step.on)[0] : win.document.activeElement ?? win.document.body;
    target(); // the check: an `on` element exists
    const key = /** @type {string} */ (step.key);
    const modifiers = new Set(step.modifiers ?? []);
    const { code, keyCode } = keyNames(key);
    const printable = key.length === 1 && !modifiers.has("ctrl") && !modifiers.has("meta");
    return () => {
      const at = target() ?? win.document;
      const Keyboard = /** @type {any} */ (win.KeyboardEvent ?? win.Event);
      for (const type of printable ? ["keydown", "keypress", "keyup"] : ["keydown", "keyup"]) {
        const event = new Keyboard(type, {
          key,
          code,
          bubbles: true,
          cancelable: true,
          composed: true,
          shiftKey: modifiers.has("shift"),
          ctrlKey: modifiers.has("ctrl"),
          altKey: modifiers.has("alt"),
          metaKey: modifiers.has("meta"),
        });
        // the legacy numbers, which the constructor cannot set and older pages read
        const legacy = type === "keypress" ? key.charCodeAt(0) : keyCode;
        for (const name of ["keyCode", "which", ...(type === "keypress" ? ["charCode"] : [])]) {
          Object.defineProperty(event, name, { get: () => legacy });
        }
        at.dispatchEvent(event);
      }
    };
  }

  // -- controls people drag ---------------------------------------------------------------------

  /**
   * The page's values at a drag binding's two ends of its track: its `span` (in the page's units,
   * as the page holds them; it may fall, for a track whose value falls as the handle moves right or
   * up), or else the parameter's min and max converted to the page's units.
   * @param {ParamSpec} param
   * @returns {[number, number]}
   */
  function dragSpan(param) {
    if (param.bind.span !== undefined) return param.bind.span;
    const ends = [param.min, param.max].map((end) => Number(toPage(param.path, "bind", end, param.bind)));
    return [ends[0], ends[1]];
  }

  /**
   * How far one pixel of a drag binding's track moves its value, in the manifest's units (the
   * tolerance a drag lands within): through `scale`, or through its `position` expression (how far
   * the handle moves for a small change of the value, measured on the expression itself).
   * @param {ParamSpec} param
   * @param {number} pagePixel  one pixel's worth in the page's units
   * @param {unknown} value  the manifest's value the handle is dragged for
   */
  function manifestPixel(param, pagePixel, value) {
    if (param.bind.position === undefined || typeof value !== "number") return pagePixel / Math.abs(param.bind.scale ?? 1);
    const step = Math.max(1e-6, Math.abs(value) * 1e-6);
    const slope = Math.abs((positionOf(param, value + step) - positionOf(param, value)) / step);
    return slope > 0 && Number.isFinite(slope) ? pagePixel / slope : 0;
  }

  /**
   * Where a drag binding with a `position` puts its handle for `value`: its expression over the
   * parameters' names, each the value of this call, else what the page holds.
   * @param {ParamSpec} param
   * @param {unknown} value
   * @returns {number}  the page's value on the track
   */
  function positionOf(param, value) {
    const fn = exprs.get(/** @type {string} */ (param.position_key));
    if (!fn) throw new BindingError(param.path, "bind.position did not compile (its error is in the page's console)");
    /** @type {Record<string, unknown>} */
    const names = {};
    for (const other of /** @type {BindingSpec} */ (spec).params) {
      const leaf = other.path.slice(other.path.lastIndexOf(".") + 1);
      if (other === param) names[leaf] = value;
      else if (Object.prototype.hasOwnProperty.call(applying, other.path)) names[leaf] = applying[other.path];
      else {
        try {
          names[leaf] = readParam(other);
        } catch {
          names[leaf] = undefined;
        }
      }
    }
    let at;
    try {
      at = /** @type {(values: Record<string, unknown>) => unknown} */ (/** @type {unknown} */ (fn))(names);
    } catch (err) {
      throw new BindingError(param.path, `bind.position threw: ${messageOf(err)}`);
    }
    if (typeof at !== "number" || !Number.isFinite(at)) {
      throw new BindingError(param.path, `bind.position gave ${describe(at)}; expected a number on the track`);
    }
    return at;
  }

  /**
   * The handle and the track of a drag binding, and where on the track `value` lies (client pixels).
   * @param {ParamSpec} param
   * @param {unknown} value  the page's value (after conversions)
   * @returns {{handle: Element, from: {x: number, y: number}, to: {x: number, y: number}, pixel: number}}
   *   `pixel`: one pixel's worth of value, in the page's units
   */
  function dragGeometry(param, value) {
    const bind = param.bind;
    const handle = select(param.path, "bind.drag", /** @type {string} */ (bind.drag))[0];
    const track = bind.track !== undefined ? select(param.path, "bind.track", bind.track)[0] : handle.parentElement;
    if (!track) throw new BindingError(param.path, `bind.drag '${bind.drag}' has no parent to slide along; name its track`);
    const box = track.getBoundingClientRect();
    const own = handle.getBoundingClientRect();
    const vertical = bind.axis === "y";
    const length = vertical ? box.height : box.width;
    if (!(length > 0)) {
      throw new BindingError(param.path, `bind.track of '${bind.drag}' has no ${vertical ? "height" : "width"} on the page (is it shown?)`);
    }
    const [lo, hi] = dragSpan(param);
    const fraction = Math.min(1, Math.max(0, (Number(value) - lo) / (hi - lo)));
    const from = { x: own.left + own.width / 2, y: own.top + own.height / 2 };
    const to = vertical
      ? { x: from.x, y: box.bottom - fraction * box.height }
      : { x: box.left + fraction * box.width, y: from.y };
    return { handle, from, to, pixel: Math.abs(hi - lo) / length };
  }

  /**
   * Drag a handle along its track to a value the way a person's pointer does: down on the handle,
   * moves across, up where the value lies; pointer and mouse events both, as pages listen to either.
   * @param {ParamSpec} param
   * @param {unknown} value
   * @returns {() => void}
   */
  function prepareDrag(param, value) {
    dragGeometry(param, value); // the check: the handle and track exist and are laid out
    return () => {
      const { handle, from, to } = dragGeometry(param, value);
      /** @param {{x: number, y: number}} point */
      const under = (point) => win.document.elementFromPoint?.(point.x, point.y) ?? handle;
      press(handle, "down", from);
      for (let i = 1; i <= DRAG_MOVES; i += 1) {
        const point = { x: from.x + ((to.x - from.x) * i) / DRAG_MOVES, y: from.y + ((to.y - from.y) * i) / DRAG_MOVES };
        press(under(point), "move", point);
      }
      press(under(to), "up", to);
    };
  }

  /**
   * Whether the page's value `held` is the `wanted` one: the same (numbers within HOLD_TOLERANCE),
   * or, for a drag, within one pixel of its track (both in the manifest's units): a drag lands on a
   * pixel, and the page keeps the nearest value its control allows.
   * @param {ParamSpec} param
   * @param {unknown} held
   * @param {unknown} wanted
   */
  function tookValue(param, held, wanted) {
    if (holdsValue(held, wanted)) return true;
    if (param.bind.drag === undefined || typeof held !== "number" || typeof wanted !== "number") return false;
    const pixel = manifestPixel(param, dragGeometry(param, 0).pixel, wanted);
    return Math.abs(held - wanted) <= pixel * (1 + HOLD_TOLERANCE);
  }

  /**
   * Whether the page holds `value` already, as its read (or its global) says: then a write is
   * skipped, as a person leaves a control alone that shows what they want (a page that rebuilds on
   * every input would rebuild for nothing). False when it cannot be read.
   * @param {ParamSpec} param
   * @param {unknown} value
   */
  function holdsAlready(param, value) {
    if (param.read === undefined && param.bind.global === undefined) return false;
    try {
      return tookValue(param, readParam(param), value);
    } catch {
      return false;
    }
  }

  /**
   * Check that the parameter's binding can take `value`; return what sets it (nothing is set yet),
   * which does nothing where the page holds the value already. (A form control is left alone then
   * by resolveControl, which knows what it shows.)
   * @param {ParamSpec} param
   * @param {unknown} value  the manifest's value
   * @returns {() => void}
   */
  function prepareParam(param, value) {
    const write = prepareWrite(param, value);
    if (param.bind.selector !== undefined || param.bind.toggle !== undefined) return write;
    return () => {
      if (!holdsAlready(param, value)) write();
    };
  }

  /**
   * @param {ParamSpec} param
   * @param {unknown} value  the manifest's value
   * @returns {() => void}
   */
  function prepareWrite(param, value) {
    const paged = toPage(param.path, "bind", Array.isArray(value) ? [...value] : value, param.bind);
    if (param.bind.global !== undefined) return prepareGlobal(param.path, param.bind.global, paged);
    if (param.bind.drag !== undefined) {
      // a handle placed by an expression goes where it says (the call's other values, read when it runs)
      if (param.bind.position !== undefined) {
        positionOf(param, value); // the check: it compiles and gives a number
        return () => prepareDrag(param, positionOf(param, value))();
      }
      return prepareDrag(param, paged);
    }
    if (param.bind.toggle !== undefined) return prepareToggle(param, value);
    if (param.bind.call !== undefined) {
      const { fn, owner } = functionAt(param.path, "bind.call", param.bind.call);
      return () => {
        fn.call(owner, paged);
      };
    }
    if (param.bind.calls !== undefined) {
      // a function per value (`loop` / `noLoop`), keyed by the value as text, as the manifest checked
      const path = param.bind.calls[String(value)];
      if (path === undefined) throw new BindingError(param.path, `bind.calls names no function for ${shownValue(value)}`);
      const { fn, owner } = functionAt(param.path, `bind.calls.${String(value)}`, path);
      return () => {
        fn.call(owner);
      };
    }
    return prepareControl(param, paged);
  }

  /**
   * Set values (manifest order) the way a person would, then call each distinct `after` once.
   * Every binding is checked before anything is set, so a bad one leaves the page untouched. Then
   * every parameter with a `read` is read from the page's model: one that did not take its value
   * (after a second pass, for controls that bound each other) puts the call's values back where it
   * can and fails naming both (`population: set 500, the page holds 150`).
   * @param {Record<string, unknown>} values  bare values by dotted path
   */
  function apply(values) {
    const { refused, touched, before } = applyAll(values, false);
    if (refused.length === 0) return;
    restore(touched, before);
    const words = refused.map((r) => r.error ?? `set ${shownValue(r.asked)}, the page holds ${shownValue(r.held)}`);
    throw new BindingError(refused[0].path, words.join("; "));
  }

  /**
   * Set what the page takes of `values` (the values a page gets when it opens, a reset): each
   * parameter on its own, a value the page does not take (or a binding that finds nothing) left as
   * the page holds it, and named with what was asked and what the page holds.
   * @param {Record<string, unknown>} values
   * @returns {Record<string, Refusal>}  by parameter path; empty when the page took everything
   */
  function applyWhatHolds(values) {
    const { refused } = applyAll(values, true);
    return Object.fromEntries(
      refused.map((r) => [r.path, r.error === undefined ? { asked: r.asked, held: r.held } : { asked: r.asked, held: r.held, error: r.error }]),
    );
  }

  /**
   * The work of apply and applyWhatHolds: check every binding, set, check what the page took.
   * @param {Record<string, unknown>} values
   * @param {boolean} each  a binding that fails is one refusal (else it throws before anything is set)
   * @returns {{refused: {path: string, asked: unknown, held: unknown, error?: string}[], touched: ParamSpec[], before: Map<string, unknown>}}
   */
  function applyAll(values, each) {
    applying = values;
    try {
      return applyEach(values, each);
    } finally {
      applying = {};
    }
  }

  /**
   * @param {Record<string, unknown>} values
   * @param {boolean} each
   * @returns {{refused: {path: string, asked: unknown, held: unknown, error?: string}[], touched: ParamSpec[], before: Map<string, unknown>}}
   */
  function applyEach(values, each) {
    const current = /** @type {BindingSpec} */ (spec);
    /** @type {{param: ParamSpec, run: () => void}[]} */
    const steps = [];
    /** @type {Map<string, string>} after path -> the parameter that asked first */
    const after = new Map();
    /** @type {ParamSpec[]} */
    const touched = [];
    /** @type {Map<string, string>} the bindings that failed, by path (`each` only) */
    const failed = new Map();
    /**
     * @param {ParamSpec} param
     * @param {unknown} err
     */
    const fail = (param, err) => {
      if (!each || !(err instanceof BindingError)) throw err;
      if (!failed.has(param.path)) failed.set(param.path, err.message.slice(err.message.indexOf(": ") + 2));
    };
    for (const param of current.params) {
      if (!Object.prototype.hasOwnProperty.call(values, param.path)) continue;
      try {
        steps.push({ param, run: prepareParam(param, values[param.path]) });
        const afterPath = param.bind.after;
        if (afterPath !== undefined && !after.has(afterPath)) {
          functionAt(param.path, "bind.after", afterPath);
          after.set(afterPath, param.path);
        }
      } catch (err) {
        fail(param, err);
      }
      touched.push(param);
    }
    const checked = touched.filter((p) => p.read !== undefined && !failed.has(p.path));
    /** @type {Map<string, unknown>} what the page held before, to put back after a value it did not take */
    const before = new Map();
    // only a parameter with a read can refuse a call, so only then is what to put back worth reading
    for (const param of checked.length > 0 && !each ? touched : []) {
      try {
        before.set(param.path, readParam(param));
      } catch {
        // nothing known to put back for this one
      }
    }
    /** @type {{path: string, asked: unknown, held: unknown, error?: string}[]} */
    let refused = [];
    // Controls that bound each other (a range's two handles) may refuse a value only because of the
    // order they were set in, as a person then sets them again: a second pass, and only one.
    for (let pass = 0; pass < (steps.length > 1 ? 2 : 1); pass += 1) {
      for (const { param, run } of steps) {
        if (failed.has(param.path)) continue;
        try {
          run();
        } catch (err) {
          fail(param, err);
        }
      }
      for (const [path, where] of after) callGlobal(where, "bind.after", path);
      refused = checked.flatMap((param) => {
        const held = readParam(param);
        const asked = values[param.path];
        return tookValue(param, held, asked) ? [] : [{ path: param.path, asked, held }];
      });
      if (refused.length === 0) break;
    }
    for (const [path, error] of failed) {
      const param = /** @type {ParamSpec} */ (touched.find((p) => p.path === path));
      let held = null;
      try {
        held = readParam(param);
        if (tookValue(param, held, values[path])) continue; // it holds the value already: nothing refused
      } catch {
        // what the page holds cannot be read either
      }
      refused.push({ path, asked: values[path], held, error });
    }
    return { refused, touched, before };
  }

  /**
   * Put back what the page held before a call it did not fully take, where it can (all or nothing,
   * as far as the page allows): a control the model refused shows the model's value again.
   * @param {ParamSpec[]} touched
   * @param {Map<string, unknown>} before
   */
  function restore(touched, before) {
    /** @type {Set<string>} */
    const afterCalls = new Set();
    for (const param of touched) {
      if (!before.has(param.path)) continue;
      try {
        prepareWrite(param, before.get(param.path))(); // always written: a control may show what its model refused
        if (param.bind.after !== undefined) afterCalls.add(param.bind.after);
      } catch (err) {
        console.warn(`SplitBrain bindings: ${param.path} could not be put back: ${messageOf(err)}`);
      }
    }
    for (const path of afterCalls) {
      try {
        callGlobal("restore", "bind.after", path);
      } catch (err) {
        console.warn(`SplitBrain bindings: ${messageOf(err)}`);
      }
    }
  }

  /**
   * @param {string} name
   * @returns {Record<string, unknown> | Promise<Record<string, unknown>>}  a promise when a step waits
   */
  function act(name) {
    const current = /** @type {BindingSpec} */ (spec);
    const action = current.actions.find((a) => a.name === name);
    const where = `actions.${name}`;
    if (!action) {
      const known = current.actions.map((a) => a.name).join(", ") || "none";
      throw new BindingError(where, `no such action in the manifest (actions: ${known})`);
    }
    if (action.when && !whenHolds(where, `action ${name}`)) return fresh(); // "start" on a running page: nothing to do
    const many = action.steps.length > 1;
    // every step is checked before any runs: a missing button leaves the page as it was
    const runs = action.steps.map((step, i) => prepareStep(where, many ? `bind[${i}].` : "bind.", step));
    return runInOrder(runs, 0);
  }

  /**
   * Run the steps from `from` on, in order; a wait step's promise holds the ones after it.
   * Synchronous (the state) while no step waits, a promise of the state once one does.
   * @param {(() => unknown)[]} runs
   * @param {number} from
   * @returns {Record<string, unknown> | Promise<Record<string, unknown>>}
   */
  function runInOrder(runs, from) {
    for (let i = from; i < runs.length; i += 1) {
      const pending = /** @type {Promise<unknown> | undefined} */ (runs[i]());
      if (pending !== undefined) return pending.then(() => runInOrder(runs, i + 1));
    }
    return fresh();
  }

  /**
   * What runs a wait step: nothing more to do if its expression holds now; else a promise that
   * settles once it holds (fulfilled) or once `timeout` seconds have passed (rejected, naming the
   * step). On a headless page time is virtual and stands still between advances, so the clock
   * runs it on until then (`runUntil`); on a live page the expression is looked at every animation
   * frame and every WAIT_POLL_MS.
   * @param {string} where
   * @param {string} field
   * @param {StepSpec} step
   * @returns {() => Promise<void> | undefined}
   */
  function prepareWait(where, field, step) {
    const fn = exprs.get(/** @type {string} */ (step.expr_key));
    if (!fn) throw new BindingError(where, `${field}wait did not compile (its error is in the page's console)`);
    const seconds = /** @type {number} */ (step.timeout); // always given: the manifest's default (WAIT_S) when it names none
    const value = () => {
      try {
        return fn();
      } catch (err) {
        throw new BindingError(where, `${field}wait threw: ${messageOf(err)}`);
      }
    };
    /** @type {() => boolean} */
    let holds = () => Boolean(value());
    let what = `'${step.wait}'`;
    if (step.since === "start") {
      // read now, as the action begins (every step is prepared before the first runs)
      const start = plain(where, value());
      const by = step.by;
      if (by !== undefined && typeof start !== "number") {
        throw new BindingError(where, `${field}wait: '${step.wait}' is ${describe(start)} as the action begins; "by" needs a number`);
      }
      holds = by !== undefined
        ? () => { const now = value(); return typeof now === "number" && now >= /** @type {number} */ (start) + by; }
        : () => JSON.stringify(plain(where, value())) !== JSON.stringify(start);
      what = by !== undefined ? `'${step.wait}' to grow by ${by} from ${shownValue(start)}` : `'${step.wait}' to change from ${shownValue(start)}`;
    }
    const late = () => new BindingError(where, `${field}wait: ${what} did not hold within ${seconds} s`);
    return () => {
      if (holds()) return undefined;
      const clock = /** @type {any} */ (win).__splitbrainClock;
      if (clock && typeof clock.runUntil === "function") {
        return clock.runUntil(holds, seconds * 1000).then((/** @type {boolean} */ met) => {
          if (!met) throw late();
        });
      }
      // Looked at every animation frame (a condition true for one frame only, between two of the
      // page's draws, is seen) and every WAIT_POLL_MS (a page in the background gets no frames).
      return new Promise((resolve, reject) => {
        const ends = Date.now() + seconds * 1000;
        let done = false;
        /** @type {unknown} */
        let poll = null;
        const look = () => {
          if (done) return;
          let met = false;
          try {
            met = holds();
          } catch (err) {
            done = true;
            win.clearInterval(poll);
            reject(err);
            return;
          }
          if (met || Date.now() >= ends) {
            done = true;
            win.clearInterval(poll);
            if (met) resolve(undefined);
            else reject(late());
          } else if (typeof win.requestAnimationFrame === "function") {
            win.requestAnimationFrame(look);
          }
        };
        poll = win.setInterval(look, WAIT_POLL_MS);
        if (typeof win.requestAnimationFrame === "function") win.requestAnimationFrame(look);
      });
    };
  }

  /**
   * @param {string} where
   * @param {string} key  the `when` expression's key
   * @returns {boolean}
   */
  function whenHolds(where, key) {
    const fn = exprs.get(key);
    if (!fn) throw new BindingError(where, "when.expr did not compile (its error is in the page's console)");
    try {
      return Boolean(fn());
    } catch (err) {
      throw new BindingError(where, `when.expr threw: ${messageOf(err)}`);
    }
  }

  /**
   * Check one step of an action; return what runs it.
   * @param {string} where  `actions.<name>`
   * @param {string} field  `bind.` for an action of one step, `bind[2].` for the third of several
   * @param {StepSpec} step
   * @returns {() => unknown}  a wait step's returns a promise while it waits
   */
  function prepareStep(where, field, step) {
    if (step.click !== undefined) {
      const selector = step.click;
      /** @param {Element} found */
      const clickable = (found) => {
        const element = /** @type {HTMLElement} */ (found);
        if (/** @type {HTMLButtonElement} */ (element).disabled) {
          throw new BindingError(where, `${field}click '${selector}' is disabled`);
        }
        if (typeof element.click !== "function") {
          throw new BindingError(where, `${field}click '${selector}' matches a ${tagOf(element)}, which cannot be clicked`);
        }
        return element;
      };
      if (step.all) {
        // every match, in document order, as found when the step runs (clearing a board: each live
        // cell); none is fine (a board with no live cell is clear), an invalid selector is not
        const each = () => {
          try {
            return Array.from(win.document.querySelectorAll(selector)).map(clickable);
          } catch (err) {
            if (err instanceof BindingError) throw err;
            throw new BindingError(where, `${field}click '${selector}' is not a valid CSS selector (${messageOf(err)})`);
          }
        };
        each();
        return () => {
          for (const element of each()) clickLikeAPerson(element);
        };
      }
      const check = () => clickable(select(where, `${field}click`, selector)[0]);
      check();
      return () => clickLikeAPerson(check()); // looked up again: an earlier step may have replaced it
    }
    if (step.key !== undefined) return prepareKey(where, field, step);
    if (step.assign !== undefined) {
      const path = step.assign;
      const text = JSON.stringify(step.value ?? null);
      prepareGlobal(where, path, null, `${field}assign`); // the check: the path can be written
      // a fresh copy each run: an array assigned and then filled by the page is not the next run's
      return () => prepareGlobal(where, path, JSON.parse(text), `${field}assign`)();
    }
    if (step.wait !== undefined) return prepareWait(where, field, step);
    if (step.set !== undefined) {
      const values = step.set;
      const known = /** @type {BindingSpec} */ (spec).params.map((p) => p.path);
      const unknown = Object.keys(values).filter((path) => !known.includes(path));
      if (unknown.length) throw new BindingError(where, `${field}set names no bound parameter: ${unknown.join(", ")}`);
      return () => apply(values);
    }
    const path = /** @type {string} */ (step.call);
    const { fn, owner } = functionAt(where, `${field}call`, path);
    const args = step.args ?? [];
    return () => {
      const result = fn.apply(owner, args);
      // Not awaited: the target API runs requests one after another, and a function that runs a
      // long animation would hold every later call; its failure shows in the page's console.
      if (result !== null && typeof result === "object" && typeof (/** @type {any} */ (result).then) === "function") {
        /** @type {Promise<unknown>} */ (result).then(undefined, (err) => console.error(`${where}: ${messageOf(err)}`));
      }
    };
  }

  // -- readiness and reports ------------------------------------------------------------------

  /** @returns {boolean} */
  function readyNow() {
    const condition = /** @type {BindingSpec} */ (spec).ready;
    if (condition.global !== undefined) {
      try {
        return walk("ready", "global", condition.global) !== undefined;
      } catch {
        return false;
      }
    }
    if (condition.selector !== undefined) {
      try {
        return win.document.querySelector(condition.selector) !== null;
      } catch {
        return false;
      }
    }
    return win.document.readyState === "complete";
  }

  /**
   * Call `then` once the ready condition holds: checked now, on DOMContentLoaded and load, on DOM
   * changes (a selector condition) and every READY_POLL_MS. On a headless page that poll runs on
   * the virtual clock, which stands still until an advance, and an advance waits for ready: there
   * a condition that only the page's own timers or animation frames can make true never holds.
   * @param {() => void} then
   */
  function whenReady(then) {
    /** @type {MutationObserver | null} */
    let observer = null;
    /** @type {unknown} */
    let poll = null;
    let done = false;
    const check = () => {
      if (done || !readyNow()) return;
      done = true;
      observer?.disconnect();
      if (poll !== null) win.clearInterval(poll);
      then();
    };
    check();
    if (done) return;
    win.addEventListener("load", check);
    win.document.addEventListener("DOMContentLoaded", check);
    if (/** @type {BindingSpec} */ (spec).ready.selector !== undefined && win.MutationObserver) {
      observer = new win.MutationObserver(check);
      observer.observe(win.document, { childList: true, subtree: true, attributes: true });
    }
    poll = win.setInterval(check, READY_POLL_MS);
  }

  /** Report the state when it changed since the last one sent; a problem is logged once, not thrown. */
  function report() {
    const api = win.SplitBrain;
    if (!api) return;
    let state;
    try {
      state = read();
    } catch (err) {
      const text = messageOf(err);
      if (!logged.has(text)) {
        logged.add(text);
        console.warn(`SplitBrain bindings: ${text}`);
      }
      return;
    }
    const json = JSON.stringify(state);
    if (json === lastSent) return;
    lastSent = json;
    api.state(state);
  }

  return Object.freeze({
    /**
     * Register an observable's compiled `read.expr` (the generated scripts, one per expression).
     * @param {string} name
     * @param {() => unknown} fn
     */
    expr(name, fn) {
      exprs.set(name, fn);
    },

    /**
     * Register the manifest's `setup` that runs once the page is ready, before it says so.
     * @param {() => void} fn
     */
    setup(fn) {
      onReady = fn;
    },

    /**
     * Take the manifest's bindings and the roots' accessors, register the handlers and wait for
     * the ready condition. Runs once; a second call is ignored.
     * @param {BindingSpec} bindingSpec
     * @param {Record<string, RootAccessor>} rootAccessors
     */
    start(bindingSpec, rootAccessors) {
      if (started) return;
      started = true;
      spec = bindingSpec;
      roots = rootAccessors;
      const api = win.SplitBrain;
      if (!api) return; // a standalone copy: nothing to talk to
      api.onApply((values, ctx) => {
        // values a page gets outside a call come with no id (js/host/relay.js: as it opens, or the
        // `values` trait assigned directly): it takes what it can of them, and names the rest
        if (ctx !== undefined && ctx.id === undefined) return withRefusals(applyWhatHolds(values));
        apply(values);
        return fresh();
      });
      api.onReset((defaults) => withRefusals(applyWhatHolds(defaults)));
      api.onState(() => fresh());
      if (typeof api.onAction === "function") api.onAction((name) => act(name));
      whenReady(() => {
        if (onReady !== null) {
          try {
            onReady();
          } catch (err) {
            console.error(`SplitBrain bindings: setup (when ready) threw: ${messageOf(err)}`);
          }
        }
        api.ready();
        report();
        win.setInterval(report, REPORT_MS);
      });
    },

    /** The state now (a read that finds nothing is null, named under ERRORS_KEY). */
    read,

    /**
     * Set values as an apply would (for a look from the console of a standalone copy).
     * @param {Record<string, unknown>} values
     */
    apply,
  });
}

if (typeof window !== "undefined") installBindings(/** @type {BindingsWindow} */ (/** @type {unknown} */ (window)));
