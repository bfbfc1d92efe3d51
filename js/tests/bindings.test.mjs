// Specification of js/page/bindings.js, the runtime of a bound page.
//
// Each test installs the runtime into a fake window: a document whose querySelectorAll answers
// from a table of fake controls (their `value` / `checked` setters on the prototype, as in a
// browser, and every dispatched event recorded), a fake target API recording what the runtime
// registers and reports, and timers the test runs by hand. The roots' accessors are closures over
// local `let` bindings, as the generated script's are over the page's top-level ones.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import vm from "node:vm";

import {
  BindingError,
  DEFAULT_EVENTS,
  DRAG_MOVES,
  NAMED_KEYS,
  ERRORS_KEY,
  READY_POLL_MS,
  REFUSED_KEY,
  WAIT_POLL_MS,
  REPORT_MS,
  firstNumber,
  fromPage,
  holdsValue,
  installBindings,
  toPage,
} from "../page/bindings.js";

/**
 * @param {() => boolean} predicate
 * @param {number} [ms]
 */
async function until(predicate, ms = 5000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error("timed out waiting for a condition");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

class FakeEvent {
  /**
   * @param {string} type
   * @param {{bubbles?: boolean}} [init]
   */
  constructor(type, init = {}) {
    this.type = type;
    this.bubbles = Boolean(init.bubbles);
  }
}

/** A form control; `value` and `checked` live on the prototype, as a browser's do. */
class FakeControl {
  /**
   * @param {string} tagName
   * @param {{type?: string, value?: string, checked?: boolean, options?: string[], disabled?: boolean, text?: string, attrs?: Record<string, string>}} [init]
   */
  constructor(tagName, init = {}) {
    this.tagName = tagName.toUpperCase();
    this.type = init.type ?? "";
    this._value = init.value ?? "";
    this._checked = init.checked ?? false;
    this.options = (init.options ?? []).map((value) => ({ value }));
    this.disabled = init.disabled ?? false;
    this.textContent = init.text ?? "";
    this.attrs = init.attrs ?? {};
    /** @type {{type: string, bubbles: boolean, value: string, checked: boolean}[]} */
    this.events = [];
    this.clicks = 0;
    /** @type {string[]} how the value was set: "native" through the prototype setter */
    this.sets = [];
  }
  get value() {
    return this._value;
  }
  set value(v) {
    this.sets.push("native");
    this._value = String(v);
  }
  get checked() {
    return this._checked;
  }
  set checked(v) {
    this.sets.push("native");
    this._checked = Boolean(v);
  }
  /** @param {FakeEvent} event */
  dispatchEvent(event) {
    this.events.push({ type: event.type, bubbles: event.bubbles, value: this._value, checked: this._checked });
    if (event.type === "change") this.onchange?.();
    return true;
  }
  /** @param {string} name */
  getAttribute(name) {
    return name in this.attrs ? this.attrs[name] : null;
  }
  click() {
    this.clicks += 1;
    this.onclick?.();
  }
  /** @type {(() => void) | undefined} */
  onclick = undefined;
  /** @type {(() => void) | undefined} a page's own change handler */
  onchange = undefined;
}

/** An event that keeps what it was made with (a window's MouseEvent or KeyboardEvent in tests). */
class InitEvent {
  /** @param {string} type @param {any} init */
  constructor(type, init) {
    Object.assign(this, init, { type });
  }
}

/**
 * A page with a custom slider: a 200-pixel rail `#rail` from x 100 to 300 and a 20-pixel handle
 * `#knob` whose left edge is at `knobLeft`; every event either one gets goes to `onEvent` (with `knob`
 * or `rail`), as the page's own handlers would see it.
 * @param {number} knobLeft
 * @param {(event: any, on: string) => void} onEvent
 */
function railPage(knobLeft, onEvent) {
  /** @param {string} name @param {{left: number, top: number, width: number, height: number}} box */
  const element = (name, box) => ({
    tagName: "DIV",
    getBoundingClientRect: () => ({ ...box, right: box.left + box.width, bottom: box.top + box.height }),
    dispatchEvent(/** @type {any} */ e) {
      onEvent(e, name);
      return true;
    },
  });
  const page = makePage({
    elements: {
      "#knob": [/** @type {any} */ (element("knob", { left: knobLeft, top: 44, width: 20, height: 20 }))],
      "#rail": [/** @type {any} */ (element("rail", { left: 100, top: 50, width: 200, height: 8 }))],
    },
  });
  page.win.MouseEvent = InitEvent;
  return page;
}

/**
 * A fake window with the runtime installed.
 * @param {{elements?: Record<string, any[]>, api?: boolean, onAction?: boolean, readyState?: string}} [options]
 */
function makePage({ elements = {}, api = true, onAction = true, readyState = "loading" } = {}) {
  /** @type {Record<string, Function[]>} */
  const listeners = {};
  /** @type {{fn: () => void, ms: number, cleared: boolean}[]} */
  const intervals = [];
  const registered = /** @type {Record<string, Function>} */ ({});
  const reports = /** @type {any[]} */ ([]);
  let readyCalls = 0;
  const document = {
    readyState,
    /** @param {string} selector */
    querySelectorAll(selector) {
      if (selector === "!!") throw new SyntaxError("'!!' is not a valid selector");
      return elements[selector] ?? [];
    },
    /** @param {string} selector */
    querySelector(selector) {
      return (elements[selector] ?? [])[0] ?? null;
    },
    /** @param {string} type @param {Function} fn */
    addEventListener(type, fn) {
      (listeners[`document:${type}`] ??= []).push(fn);
    },
  };
  /** @type {any} */
  const SplitBrain = {
    onApply: (/** @type {Function} */ fn) => (registered.apply = fn),
    onReset: (/** @type {Function} */ fn) => (registered.reset = fn),
    onState: (/** @type {Function} */ fn) => (registered.state = fn),
    state: (/** @type {any} */ s) => reports.push(structuredClone(s)),
    ready: () => (readyCalls += 1),
  };
  if (onAction) SplitBrain.onAction = (/** @type {Function} */ fn) => (registered.action = fn);
  /** @type {any} */
  const win = {
    document,
    Event: FakeEvent,
    setInterval(/** @type {() => void} */ fn, /** @type {number} */ ms) {
      intervals.push({ fn, ms, cleared: false });
      return intervals.length - 1;
    },
    clearInterval(/** @type {number} */ id) {
      if (intervals[id]) intervals[id].cleared = true;
    },
    addEventListener(/** @type {string} */ type, /** @type {Function} */ fn) {
      (listeners[`window:${type}`] ??= []).push(fn);
    },
  };
  if (api) win.SplitBrain = SplitBrain;
  const runtime = installBindings(win);
  return {
    win,
    runtime,
    registered,
    reports,
    intervals,
    get readyCalls() {
      return readyCalls;
    },
    /** Run every live interval of `ms` once (the runtime's poll or reporter). */
    tick(/** @type {number} */ ms) {
      for (const timer of intervals) if (timer.ms === ms && !timer.cleared) timer.fn();
    },
    /** The page finished loading. */
    load() {
      document.readyState = "complete";
      for (const fn of listeners["window:load"] ?? []) fn();
    },
  };
}

/**
 * Run the wait polls once as if `ms` had passed (the clock moved on past a wait's timeout).
 * @param {{tick: (ms: number) => void}} page
 * @param {number} ms
 */
function tickLater(page, ms) {
  const realNow = Date.now;
  Date.now = () => realNow() + ms;
  try {
    page.tick(WAIT_POLL_MS);
  } finally {
    Date.now = realNow;
  }
}

/**
 * A spec with defaults for what a test does not name.
 * @param {Partial<import("../page/bindings.js").BindingSpec>} parts
 * @returns {import("../page/bindings.js").BindingSpec}
 */
function spec(parts) {
  return { params: [], observables: [], actions: [], ready: { load: true }, ...parts };
}

/** @param {() => unknown} fn @param {RegExp | string} message */
function throwsNaming(fn, message) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof BindingError, `expected a BindingError, got ${err}`);
    if (typeof message === "string") assert.equal(/** @type {Error} */ (err).message, message);
    else assert.match(/** @type {Error} */ (err).message, message);
    return true;
  });
}

describe("globals: top-level let / const / var through the generated roots", () => {
  test("a one-identifier path is written through its setter and read back", () => {
    let speed = 2;
    const page = makePage();
    page.runtime.start(spec({ params: [{ path: "motion.speed", type: "number", bind: { global: "speed" } }] }), {
      speed: { get: () => speed, set: (v) => (speed = /** @type {number} */ (v)) },
    });
    assert.deepEqual(page.registered.apply({ "motion.speed": 7.5 }), { "motion.speed": 7.5 });
    assert.equal(speed, 7.5);
  });

  test("a dotted path is walked from its root and set as a property", () => {
    const config = { gain: 1 };
    const page = makePage();
    page.runtime.start(spec({ params: [{ path: "gain", type: "integer", bind: { global: "config.gain" } }] }), {
      config: { get: () => config },
    });
    assert.deepEqual(page.registered.apply({ gain: 4 }), { gain: 4 });
    assert.equal(config.gain, 4);
  });

  test("values are set in manifest order, and each distinct `after` runs once after all of them", () => {
    const order = /** @type {string[]} */ ([]);
    const sim = {
      set a(/** @type {number} */ v) {
        order.push(`a=${v}`);
      },
      set b(/** @type {number} */ v) {
        order.push(`b=${v}`);
      },
      a_: 0,
    };
    const redraw = () => order.push("redraw");
    const page = makePage();
    page.runtime.start(
      spec({
        params: [
          { path: "p.a", type: "number", bind: { global: "sim.a", after: "redraw" } },
          { path: "p.b", type: "number", bind: { global: "sim.b", after: "redraw" } },
        ],
      }),
      { sim: { get: () => sim }, redraw: { get: () => redraw } },
    );
    page.runtime.apply({ "p.b": 2, "p.a": 1 });
    assert.deepEqual(order, ["a=1", "b=2", "redraw"]);
  });

  test("an undeclared name answers an error naming the binding, and is not created", () => {
    const page = makePage();
    page.runtime.start(spec({ params: [{ path: "settings.bias", type: "number", bind: { global: "BIAS" } }] }), {
      BIAS: {
        get: () => {
          throw new ReferenceError("BIAS is not defined");
        },
        set: () => assert.fail("an undeclared name must not be assigned"),
      },
    });
    throwsNaming(
      () => page.registered.apply({ "settings.bias": 1 }),
      "settings.bias: bind.global 'BIAS' is not defined in the page (BIAS is not defined)",
    );
  });

  test("a const is refused before any other value is set", () => {
    let speed = 1;
    const page = makePage();
    page.runtime.start(
      spec({
        params: [
          { path: "speed", type: "number", bind: { global: "speed" } },
          { path: "gravity", type: "number", bind: { global: "GRAVITY" } },
        ],
      }),
      {
        speed: { get: () => speed, set: (v) => (speed = /** @type {number} */ (v)) },
        GRAVITY: {
          get: () => 9.81,
          set: () => {
            throw new TypeError("Assignment to constant variable.");
          },
        },
      },
    );
    throwsNaming(() => page.registered.apply({ speed: 5, gravity: 1 }), /^gravity: bind.global 'GRAVITY' is a const/);
    assert.equal(speed, 1, "a refused apply leaves the page untouched");
  });

  test("a missing object on the way names the part that is missing", () => {
    const page = makePage();
    page.runtime.start(spec({ params: [{ path: "x", type: "number", bind: { global: "sim.params.x" } }] }), {
      sim: { get: () => ({}) },
    });
    throwsNaming(() => page.registered.apply({ x: 1 }), "x: bind.global 'sim.params.x': 'sim.params' is undefined");
  });

  test("an `after` that is no function is refused before anything is set", () => {
    let speed = 1;
    const page = makePage();
    page.runtime.start(spec({ params: [{ path: "speed", type: "number", bind: { global: "speed", after: "draw" } }] }), {
      speed: { get: () => speed, set: (v) => (speed = /** @type {number} */ (v)) },
      draw: { get: () => 3 },
    });
    throwsNaming(() => page.runtime.apply({ speed: 2 }), "speed: bind.after 'draw' is not a function (got number 3)");
    assert.equal(speed, 1);
  });
});

describe("form controls are set like a person's input", () => {
  test("a range gets its value through the native setter, then bubbling input and change", () => {
    const range = new FakeControl("input", { type: "range", value: "8" });
    const page = makePage({ elements: { "#speed": [range] } });
    page.runtime.start(spec({ params: [{ path: "speed", type: "number", bind: { selector: "#speed" } }] }), {});
    assert.deepEqual(page.registered.apply({ speed: 12.5 }), { speed: 12.5 });
    assert.deepEqual(range.sets, ["native"]);
    assert.deepEqual(
      range.events.map((e) => [e.type, e.bubbles, e.value]),
      [
        ["input", true, "12.5"],
        ["change", true, "12.5"],
      ],
    );
    assert.deepEqual(DEFAULT_EVENTS, ["input", "change"]);
  });

  test("the native setter is used even when the element has its own value property (React)", () => {
    const range = new FakeControl("input", { type: "number", value: "1" });
    Object.defineProperty(range, "value", {
      get: () => "tracked",
      set: () => assert.fail("the element's own setter hides the change from a framework"),
    });
    const page = makePage({ elements: { "#n": [range] } });
    page.runtime.start(spec({ params: [{ path: "n", type: "integer", bind: { selector: "#n", event: ["change"] } }] }), {});
    page.runtime.apply({ n: 3 });
    assert.equal(range._value, "3");
    assert.deepEqual(
      range.events.map((e) => e.type),
      ["change"],
    );
  });

  test("a number control reads back as a number, a text control as a string", () => {
    const count = new FakeControl("input", { type: "number", value: "10" });
    const name = new FakeControl("input", { type: "text", value: "ball" });
    const page = makePage({ elements: { "#count": [count], "#name": [name] } });
    page.runtime.start(
      spec({
        params: [
          { path: "count", type: "integer", bind: { selector: "#count" } },
          { path: "name", type: "string", bind: { selector: "#name" } },
        ],
      }),
      {},
    );
    assert.deepEqual(page.registered.state(), { count: 10, name: "ball" });
  });

  test("a checkbox is checked for true and reads back its checked state", () => {
    const box = new FakeControl("input", { type: "checkbox" });
    const page = makePage({ elements: { "#trail": [box] } });
    page.runtime.start(spec({ params: [{ path: "trail", type: "boolean", bind: { selector: "#trail" } }] }), {});
    assert.deepEqual(page.registered.apply({ trail: true }), { trail: true });
    assert.equal(box.checked, true);
    assert.deepEqual(
      box.events.map((e) => [e.type, e.checked]),
      [
        ["input", true],
        ["change", true],
      ],
    );
  });

  test("a control that already shows the value is left alone: no setter, no event", () => {
    // A page whose checkbox handler toggles its own flag on each event would flip on the catch-up
    // apply that sends every current value after ready (examples/third_party/lorossi_boids).
    const box = new FakeControl("input", { type: "checkbox" });
    const range = new FakeControl("input", { type: "range", value: "8" });
    const page = makePage({ elements: { "#trail": [box], "#speed": [range] } });
    page.runtime.start(
      spec({
        params: [
          { path: "trail", type: "boolean", bind: { selector: "#trail" } },
          { path: "speed", type: "number", bind: { selector: "#speed" } },
        ],
      }),
      {},
    );
    assert.deepEqual(page.registered.apply({ trail: false, speed: 8 }), { trail: false, speed: 8 });
    assert.deepEqual([box.events, range.events, range.sets], [[], [], []]);
    page.registered.apply({ trail: true, speed: 8 });
    assert.deepEqual(box.events.map((e) => e.type), ["input", "change"]);
    assert.deepEqual(range.events, []);
  });

  test("a control is looked at again when its turn comes: an earlier step's events may have changed it", () => {
    // A preset select whose change handler moves the speed slider to 10: the 5 asked for must still land.
    const speed = new FakeControl("input", { type: "range", value: "8" });
    const preset = new FakeControl("select", { value: "slow", options: ["slow", "fast"] });
    preset.dispatchEvent = (event) => {
      if (event.type === "change") speed._value = "10";
      return true;
    };
    const page = makePage({ elements: { "#preset": [preset], "#speed": [speed] } });
    page.runtime.start(
      spec({
        params: [
          { path: "s.preset", type: "string", bind: { selector: "#preset" } },
          { path: "s.speed", type: "number", bind: { selector: "#speed" } },
        ],
      }),
      {},
    );
    assert.deepEqual(page.registered.apply({ "s.preset": "fast", "s.speed": 8 }), { "s.preset": "fast", "s.speed": 8 });
  });

  test("a disabled control is refused, naming it, and nothing of the call is set", () => {
    const on = new FakeControl("input", { type: "checkbox" });
    const off = new FakeControl("input", { type: "range", value: "1", disabled: true });
    const page = makePage({ elements: { "#on": [on], "#off": [off] } });
    page.runtime.start(
      spec({
        params: [
          { path: "on", type: "boolean", bind: { selector: "#on" } },
          { path: "off", type: "number", bind: { selector: "#off" } },
        ],
      }),
      {},
    );
    throwsNaming(() => page.runtime.apply({ on: true, off: 2 }), "off: bind.selector '#off' is disabled (a person could not change it now)");
    assert.deepEqual([on.checked, on.events, off._value], [false, [], "1"]);
    page.runtime.apply({ on: true, off: 1 }); // the value it shows already: nothing to change, no refusal
    assert.equal(on.checked, true);
  });

  test("a checkbox bound to a parameter that is not boolean is refused", () => {
    const page = makePage({ elements: { "#trail": [new FakeControl("input", { type: "checkbox" })] } });
    page.runtime.start(spec({ params: [{ path: "n", type: "number", bind: { selector: "#trail" } }] }), {});
    throwsNaming(() => page.runtime.apply({ n: 1 }), /^n: bind.selector '#trail' matches a checkbox; expected a boolean/);
  });

  test("in a radio group the button of that value is checked, and the events go to it", () => {
    const radios = ["simple", "double", "chaotic"].map(
      (value, i) => new FakeControl("input", { type: "radio", value, checked: i === 0 }),
    );
    const page = makePage({ elements: { "input[name=mode]": radios } });
    page.runtime.start(spec({ params: [{ path: "mode", type: "string", bind: { selector: "input[name=mode]" } }] }), {});
    radios[0]._checked = false; // a browser unchecks the others when one is checked
    assert.deepEqual(page.registered.apply({ mode: "double" }), { mode: "double" });
    assert.equal(radios[1].checked, true);
    assert.deepEqual(
      radios[1].events.map((e) => e.type),
      ["input", "change"],
    );
    assert.equal(radios[0].events.length + radios[2].events.length, 0);
  });

  test("a radio group without the value lists the values it has", () => {
    const radios = ["a", "b"].map((value) => new FakeControl("input", { type: "radio", value }));
    const page = makePage({ elements: { "[name=m]": radios } });
    page.runtime.start(spec({ params: [{ path: "m", type: "string", bind: { selector: "[name=m]" } }] }), {});
    throwsNaming(
      () => page.runtime.apply({ m: "c" }),
      `m: bind.selector '[name=m]' has no radio button of value "c" (values: "a", "b")`,
    );
  });

  test("a select takes one of its options, and refuses any other value", () => {
    const color = new FakeControl("select", { value: "steelblue", options: ["steelblue", "red"] });
    const page = makePage({ elements: { "#color": [color] } });
    page.runtime.start(spec({ params: [{ path: "color", type: "string", bind: { selector: "#color" } }] }), {});
    assert.deepEqual(page.registered.apply({ color: "red" }), { color: "red" });
    throwsNaming(
      () => page.runtime.apply({ color: "green" }),
      `color: bind.selector '#color' has no option of value "green" (options: "steelblue", "red")`,
    );
    assert.equal(color.value, "red");
  });

  test("a selector that matches nothing, several controls, a non-control or bad CSS is named", () => {
    const page = makePage({
      elements: { "#many": [new FakeControl("input"), new FakeControl("input")], "#div": [new FakeControl("div")] },
    });
    page.runtime.start(
      spec({
        params: [
          { path: "a", type: "number", bind: { selector: "#nothing" } },
          { path: "b", type: "number", bind: { selector: "#many" } },
          { path: "c", type: "number", bind: { selector: "#div" } },
          { path: "d", type: "number", bind: { selector: "!!" } },
        ],
      }),
      {},
    );
    throwsNaming(() => page.runtime.apply({ a: 1 }), "a: bind.selector '#nothing' matches no element");
    throwsNaming(() => page.runtime.apply({ b: 1 }), /^b: bind.selector '#many' matches 2 elements; expected one control/);
    throwsNaming(() => page.runtime.apply({ c: 1 }), /^c: bind.selector '#div' matches a <div>; expected an <input>/);
    throwsNaming(() => page.runtime.apply({ d: 1 }), /^d: bind.selector '!!' is not a valid CSS selector/);
  });
});

describe("observables", () => {
  test("a global, an expression and an element's text, value or attribute are read", () => {
    const stats = new FakeControl("p", { text: "  range 40.5 m  ", attrs: { "data-n": "n=7" } });
    const field = new FakeControl("input", { value: "−3.5e1 units" });
    const particles = [1, 2, 3];
    const page = makePage({ elements: { "#stats": [stats], "#field": [field] } });
    page.runtime.expr("double", () => particles.length * 2);
    page.runtime.start(
      spec({
        observables: [
          { name: "t", read: { global: "sim.t" } },
          { name: "double", read: { expr: "particles.length * 2" } },
          { name: "text", read: { selector: "#stats" } },
          { name: "range", read: { selector: "#stats", number: true } },
          { name: "n", read: { selector: "#stats", attr: "data-n", number: true } },
          { name: "missing_attr", read: { selector: "#stats", attr: "data-x" } },
          { name: "field", read: { selector: "#field", attr: "value", number: true } },
        ],
      }),
      { sim: { get: () => ({ t: 1.5 }) } },
    );
    assert.deepEqual(page.runtime.read(), {
      t: 1.5,
      double: 6,
      text: "range 40.5 m",
      range: 40.5,
      n: 7,
      missing_attr: null,
      field: -35,
    });
  });

  test("values are plain JSON: NaN and undefined are null, objects are copied", () => {
    const sim = { nan: NaN, obj: { a: [1, 2] }, fn: () => 1 };
    const page = makePage();
    page.runtime.start(
      spec({
        observables: [
          { name: "nan", read: { global: "sim.nan" } },
          { name: "none", read: { global: "sim.none" } },
          { name: "obj", read: { global: "sim.obj" } },
        ],
      }),
      { sim: { get: () => sim } },
    );
    const state = page.runtime.read();
    assert.deepEqual(state, { nan: null, none: null, obj: { a: [1, 2] } });
    assert.notEqual(state.obj, sim.obj);
  });

  test("a function is no state value: null, and the error names the observable", () => {
    const page = makePage();
    page.runtime.start(spec({ observables: [{ name: "f", read: { global: "fn" } }] }), { fn: { get: () => () => 1 } });
    const state = page.registered.state();
    assert.equal(state.f, null);
    assert.match(state[ERRORS_KEY].f, /^f: the value cannot be reported as JSON/);
  });

  test("an expression that did not compile or throws is named", () => {
    const page = makePage();
    page.runtime.expr("bad", () => {
      throw new TypeError("particles is undefined");
    });
    page.runtime.start(
      spec({
        observables: [
          { name: "broken", read: { expr: "(" } },
          { name: "bad", read: { expr: "particles.length" } },
        ],
      }),
      {},
    );
    const state = page.registered.state();
    assert.deepEqual([state.broken, state.bad], [null, null]);
    assert.deepEqual(state[ERRORS_KEY], {
      broken: "broken: read.expr did not compile (its error is in the page's console)",
      bad: "bad: read.expr threw: particles is undefined",
    });
  });

  test("a read that finds nothing does not fail the call: what it set stays set, the state says what was not read", () => {
    // An observable of an element that exists only while a checkbox is on (lorossi_boids' #stats):
    // failing the apply would make the kernel put back values the page did take.
    const box = new FakeControl("input", { type: "checkbox" });
    const page = makePage({ elements: { "#stats-on": [box] } });
    page.runtime.start(
      spec({
        params: [{ path: "show_stats", type: "boolean", bind: { selector: "#stats-on" } }],
        observables: [{ name: "fps", read: { selector: "#stats", number: true } }],
      }),
      {},
    );
    const state = page.registered.apply({ show_stats: true });
    assert.equal(box.checked, true);
    assert.deepEqual(state, { show_stats: true, fps: null, [ERRORS_KEY]: { fps: "fps: read.selector '#stats' matches no element" } });
  });

  test("firstNumber takes the first number of a text, a Unicode minus included", () => {
    assert.equal(firstNumber("speed 12.5 m/s, 3 bounces"), 12.5);
    assert.equal(firstNumber("θ −12°"), -12);
    assert.equal(firstNumber(".5"), 0.5);
    assert.equal(firstNumber("none"), null);
  });
});

describe("handlers, readiness and reports", () => {
  test("reset applies the defaults it is given and answers a fresh state", () => {
    let speed = 9;
    const page = makePage();
    page.runtime.start(spec({ params: [{ path: "speed", type: "number", bind: { global: "speed" } }] }), {
      speed: { get: () => speed, set: (v) => (speed = /** @type {number} */ (v)) },
    });
    assert.deepEqual(page.registered.reset({ speed: 2 }), { speed: 2 });
  });

  test("every answer is read fresh, not taken from the last report", () => {
    let t = 0;
    const page = makePage({ readyState: "complete" });
    page.runtime.start(spec({ observables: [{ name: "t", read: { global: "t" } }] }), { t: { get: () => t } });
    t = 1;
    assert.deepEqual(page.registered.state(), { t: 1 });
    t = 2;
    assert.deepEqual(page.registered.state(), { t: 2 });
  });

  test("ready waits for load by default, then reports at once and every REPORT_MS when changed", () => {
    let t = 0;
    const page = makePage();
    page.runtime.start(spec({ observables: [{ name: "t", read: { global: "t" } }] }), { t: { get: () => t } });
    assert.equal(page.readyCalls, 0, "not before the page has loaded");
    page.load();
    assert.equal(page.readyCalls, 1);
    assert.deepEqual(page.reports, [{ t: 0 }]);
    page.tick(REPORT_MS);
    assert.equal(page.reports.length, 1, "no report when nothing changed");
    t = 0.1;
    page.tick(REPORT_MS);
    assert.deepEqual(page.reports.at(-1), { t: 0.1 });
    t = 0.2;
    page.registered.state(); // an answer carries it: no report repeats it
    page.tick(REPORT_MS);
    assert.equal(page.reports.length, 2);
  });

  test("a report with a read that finds nothing is sent once, with the value null and the error named", () => {
    const page = makePage({ readyState: "complete" });
    page.runtime.start(spec({ observables: [{ name: "x", read: { selector: "#gone" } }] }), {});
    page.tick(REPORT_MS);
    page.tick(REPORT_MS);
    assert.equal(page.readyCalls, 1);
    assert.deepEqual(page.reports, [{ x: null, [ERRORS_KEY]: { x: "x: read.selector '#gone' matches no element" } }]);
  });

  test("ready on a global waits until it exists and is not undefined", () => {
    /** @type {any} */
    let app;
    const page = makePage({ readyState: "complete" });
    page.runtime.start(spec({ ready: { global: "app.started" } }), {
      app: {
        get: () => {
          if (app === undefined) throw new ReferenceError("app is not defined");
          return app;
        },
      },
    });
    page.tick(READY_POLL_MS);
    assert.equal(page.readyCalls, 0);
    app = {};
    page.tick(READY_POLL_MS);
    assert.equal(page.readyCalls, 0, "app.started is still undefined");
    app.started = false;
    page.tick(READY_POLL_MS);
    assert.equal(page.readyCalls, 1);
    assert.ok(page.intervals.filter((i) => i.ms === READY_POLL_MS).every((i) => i.cleared), "the poll stops");
  });

  test("ready on a selector waits for a matching element", () => {
    /** @type {Record<string, any[]>} */
    const elements = {};
    const page = makePage({ elements, readyState: "complete" });
    page.runtime.start(spec({ ready: { selector: "canvas" } }), {});
    page.tick(READY_POLL_MS);
    assert.equal(page.readyCalls, 0);
    elements.canvas = [new FakeControl("canvas")];
    page.tick(READY_POLL_MS);
    assert.equal(page.readyCalls, 1);
  });

  test("start runs once; a second call changes nothing", () => {
    const page = makePage({ readyState: "complete" });
    page.runtime.start(spec({}), {});
    page.runtime.start(spec({ params: [{ path: "x", type: "number", bind: { global: "x" } }] }), {});
    assert.equal(page.readyCalls, 1);
    assert.deepEqual(page.registered.state(), {});
  });
});

describe("actions", () => {
  test("a click action clicks the element and answers the state after it", async () => {
    let runs = 0;
    const button = new FakeControl("button");
    button.onclick = () => (runs += 1);
    const page = makePage({ elements: { "#run": [button] } });
    page.runtime.start(
      spec({ observables: [{ name: "runs", read: { global: "runs" } }], actions: [{ name: "run", steps: [{ click: "#run" }] }] }),
      { runs: { get: () => runs } },
    );
    assert.deepEqual(await page.registered.action("run"), { runs: 1 });
    assert.equal(button.clicks, 1);
  });

  test("a call action calls the function with its object as this; a promise it returns is not awaited", async (t) => {
    // The target API runs requests one after another: a function running a long animation must not hold them.
    const error = t.mock.method(console, "error", () => {});
    const view = {
      resets: 0,
      async reset() {
        await Promise.resolve();
        this.resets += 1;
      },
    };
    const page = makePage();
    page.runtime.start(
      spec({
        observables: [{ name: "resets", read: { global: "view.resets" } }],
        actions: [{ name: "reset_view", steps: [{ call: "view.reset" }] }],
      }),
      { view: { get: () => view } },
    );
    assert.deepEqual(page.registered.action("reset_view"), { resets: 0 });
    await until(() => view.resets === 1);
    view.reset = () => Promise.reject(new Error("no scene"));
    page.registered.action("reset_view");
    await until(() => error.mock.callCount() === 1);
    assert.equal(error.mock.calls[0].arguments[0], "actions.reset_view: no scene");
  });

  test("a disabled button, a missing element or a non-function is named", async () => {
    const page = makePage({ elements: { "#off": [new FakeControl("button", { disabled: true })] } });
    page.runtime.start(
      spec({
        actions: [
          { name: "off", steps: [{ click: "#off" }] },
          { name: "gone", steps: [{ click: "#gone" }] },
          { name: "call", steps: [{ call: "sim.go" }] },
        ],
      }),
      { sim: { get: () => ({ go: 1 }) } },
    );
    assert.throws(() => page.registered.action("off"), { message: "actions.off: bind.click '#off' is disabled" });
    assert.throws(() => page.registered.action("gone"), { message: "actions.gone: bind.click '#gone' matches no element" });
    assert.throws(() => page.registered.action("call"), {
      message: "actions.call: bind.call 'sim.go' is not a function (got number 1)",
    });
    assert.throws(() => page.registered.action("nope"), /actions.nope: no such action in the manifest \(actions: off, gone, call\)/);
  });

  test("without SplitBrain.onAction (an older target API) no action handler is registered", () => {
    const page = makePage({ onAction: false });
    page.runtime.start(spec({ actions: [{ name: "run", steps: [{ click: "#run" }] }] }), {});
    assert.equal(page.registered.action, undefined);
    assert.equal(typeof page.registered.apply, "function");
  });
});

describe("a standalone copy and the shipped bundle", () => {
  test("without a target API nothing is registered, and read() and apply() still work", () => {
    let speed = 1;
    const page = makePage({ api: false, readyState: "complete" });
    page.runtime.start(spec({ params: [{ path: "speed", type: "number", bind: { global: "speed" } }] }), {
      speed: { get: () => speed, set: (v) => (speed = /** @type {number} */ (v)) },
    });
    page.runtime.apply({ speed: 4 });
    assert.deepEqual(page.runtime.read(), { speed: 4 });
    assert.equal(page.intervals.length, 0, "no reporter without a target API");
  });

  test("installing twice returns the first runtime", () => {
    const page = makePage();
    assert.equal(installBindings(page.win), page.runtime);
  });

  test("the built IIFE installs __splitbrainBindings on the window it runs in", () => {
    const source = readFileSync(new URL("../../splitbrain_widget/static/bindings.js", import.meta.url), "utf8");
    assert.doesNotMatch(source, /<\/script|<!--/i, "the bundle is inlined in a <script> element");
    /** @type {any} */
    const context = { console };
    context.window = context;
    vm.createContext(context);
    vm.runInContext(source, context);
    assert.equal(typeof context.__splitbrainBindings.start, "function");
    assert.equal(typeof context.__splitbrainBindings.expr, "function");
  });

  test("the built IIFE refuses a write that a frozen object ignores (the bundle runs in strict mode)", () => {
    // In sloppy mode the write would be dropped without an error and the call would answer ok.
    const source = readFileSync(new URL("../../splitbrain_widget/static/bindings.js", import.meta.url), "utf8");
    /** @type {any} */
    const context = { console };
    context.window = context;
    vm.createContext(context);
    vm.runInContext(source, context);
    const CONFIG = Object.freeze({ speed: 1 });
    const runtime = context.__splitbrainBindings;
    runtime.start(
      { params: [{ path: "s.speed", type: "number", bind: { global: "CONFIG.speed" } }], observables: [], actions: [], ready: { load: true } },
      { CONFIG: { get: () => CONFIG } },
    );
    assert.throws(() => runtime.apply({ "s.speed": 5 }), /s\.speed: bind\.global 'CONFIG\.speed' (is read-only|cannot be written)/);
    assert.equal(CONFIG.speed, 1);
  });
});

describe("what real pages need: the page's model, conversions, calls, steps, setup on ready", () => {
  test("conversions cross both ways: scale and offset, a number kept as text, a values map", () => {
    assert.equal(toPage("p", "bind", 33, { scale: 0.01 }), 0.33);
    assert.equal(fromPage("p", "bind", 0.33, { scale: 0.01 }, "number"), 33); // not 33.00000000000001
    assert.equal(toPage("t", "bind", 20, { scale: 1.8, offset: 32 }), 68);
    assert.equal(fromPage("t", "bind", 68, { scale: 1.8, offset: 32 }, "integer"), 20);
    assert.equal(fromPage("n", "bind", "15", {}, "integer"), 15);
    const values = { values: { true: "1", false: "0" } };
    assert.equal(toPage("tax", "bind", true, values), "1");
    assert.equal(fromPage("tax", "bind", "0", values, "boolean"), false);
    assert.equal(fromPage("tax", "bind", 1, values, "boolean"), true); // a page's 1 is the map's "1"
    throwsNaming(() => fromPage("tax", "bind", "2", values, "boolean"), 'tax: bind.values: the page holds "2", which no manifest value maps to');
    throwsNaming(() => toPage("mode", "bind", "slow", { values: { fast: 2 } }), 'mode: bind.values has no page value for "slow"');
    assert.ok(holdsValue(0.1 + 0.2, 0.3) && !holdsValue(150, 500) && holdsValue([1, 2], [1, 2]) && !holdsValue("1", 1));
  });

  test("a value the page's model did not take fails naming both, and the control is put back", () => {
    const { page, model, field } = cappedFlock([]);
    assert.deepEqual(page.registered.apply({ "flock.population": 120 }), { "flock.population": 120 });
    throwsNaming(() => page.registered.apply({ "flock.population": 500 }), "flock.population: set 500, the page holds 120");
    assert.equal(field.value, "120"); // the form shows what the model holds again
    assert.equal(model.count, 120);
  });

  test("a call binding calls the function with the page's value; its read says what the page holds", () => {
    let rate = 30;
    const frameRate = (/** @type {number | undefined} */ n) => {
      if (n === undefined) return rate;
      rate = Math.min(60, n);
      return undefined;
    };
    const page = makePage();
    page.runtime.expr("param sketch.speed", () => frameRate());
    page.runtime.start(
      spec({ params: [{ path: "sketch.speed", type: "number", bind: { call: "frameRate" }, read: { expr: "frameRate()" } }] }),
      { frameRate: { get: () => frameRate } },
    );
    assert.deepEqual(page.registered.apply({ "sketch.speed": 24 }), { "sketch.speed": 24 });
    throwsNaming(() => page.registered.apply({ "sketch.speed": 100 }), "sketch.speed: set 100, the page holds 60");
  });

  test("a calls binding calls the value's own function (loop / noLoop); its read says which holds", () => {
    let looping = true;
    const page = makePage();
    page.runtime.expr("param sketch.running", () => looping);
    page.runtime.start(
      spec({
        params: [
          {
            path: "sketch.running",
            type: "boolean",
            bind: { calls: { true: "loop", false: "noLoop" } },
            read: { expr: "isLooping()" },
          },
        ],
      }),
      { loop: { get: () => () => (looping = true) }, noLoop: { get: () => () => (looping = false) } },
    );
    assert.deepEqual(page.registered.apply({ "sketch.running": false }), { "sketch.running": false });
    assert.equal(looping, false);
    assert.deepEqual(page.registered.apply({ "sketch.running": true }), { "sketch.running": true });
    assert.equal(looping, true);
  });

  test("an action's steps are all checked before the first runs; `when` keeps a toggle from flipping", () => {
    let running = false;
    let cleared = /** @type {unknown[]} */ ([]);
    const toggle = new FakeControl("button");
    toggle.onclick = () => (running = !running);
    const page = makePage({ elements: { "#toggle": [toggle] } });
    page.runtime.expr("action start", () => !running);
    page.runtime.start(
      spec({
        params: [{ path: "arms.theta", type: "number", bind: { global: "theta" } }],
        actions: [
          { name: "start", steps: [{ click: "#toggle" }], when: true },
          { name: "restart", steps: [{ set: { "arms.theta": 1 } }, { call: "clear", args: [0, "all"] }] },
          { name: "broken", steps: [{ set: { "arms.theta": 2 } }, { click: "#missing" }] },
        ],
      }),
      {
        theta: { get: () => theta, set: (v) => (theta = /** @type {number} */ (v)) },
        clear: { get: () => (/** @type {unknown[]} */ ...args) => (cleared = args) },
      },
    );
    let theta = 0.5;
    page.registered.action("start");
    page.registered.action("start");
    assert.equal(running, true); // the second "start" found it running: nothing clicked
    assert.equal(toggle.clicks, 1);
    assert.deepEqual(page.registered.action("restart"), { "arms.theta": 1 });
    assert.deepEqual(cleared, [0, "all"]);
    assert.throws(() => page.registered.action("broken"), { message: "actions.broken: bind[1].click '#missing' matches no element" });
    assert.equal(theta, 1); // its first step never ran
  });

  test("a wait step holds the steps after it until its expression holds, or fails naming itself", async () => {
    let landed = false;
    const log = /** @type {string[]} */ ([]);
    const page = makePage({ readyState: "complete" }); // ready at once: no ready poll beside the wait's
    page.runtime.expr("action drop step 1", () => landed);
    page.runtime.expr("action stuck step 0", () => false);
    page.runtime.start(
      spec({
        actions: [
          {
            name: "drop",
            steps: [{ call: "release" }, { wait: "landed", expr_key: "action drop step 1", timeout: 1 }, { call: "score" }],
          },
          { name: "stuck", steps: [{ wait: "false", expr_key: "action stuck step 0", timeout: 0.2 }, { call: "score" }] },
        ],
      }),
      { release: { get: () => () => log.push("release") }, score: { get: () => () => log.push("score") } },
    );
    const done = page.registered.action("drop");
    assert.ok(done instanceof Promise, "a waiting action answers once its wait is over");
    assert.deepEqual(log, ["release"]);
    page.tick(WAIT_POLL_MS);
    assert.deepEqual(log, ["release"], "still waiting");
    landed = true;
    page.tick(WAIT_POLL_MS);
    await done;
    assert.deepEqual(log, ["release", "score"]);
    assert.ok(page.intervals.filter((i) => i.ms === WAIT_POLL_MS).every((i) => i.cleared), "the poll stops");
    // without a wait, an action answers at once, as before
    const stuck = page.registered.action("stuck");
    tickLater(page, 1_000); // past its 0.2 s
    await assert.rejects(stuck, { message: "actions.stuck: bind[0].wait: 'false' did not hold within 0.2 s" });
    assert.deepEqual(log, ["release", "score"], "the step after a failed wait never runs");
  });

  test("on a live page a wait looks at every animation frame: a condition true for one frame is seen", async () => {
    let frame = 0;
    const page = makePage({ readyState: "complete" });
    /** @type {FrameRequestCallback[]} */
    let queued = [];
    page.win.requestAnimationFrame = (/** @type {FrameRequestCallback} */ fn) => queued.push(fn);
    const runFrame = () => {
      frame += 1; // the page's own draw, then the callbacks requested for this frame
      const now = queued;
      queued = [];
      for (const fn of now) fn(frame);
    };
    page.runtime.expr("action between step 0", () => frame === 3); // true for frame 3 only
    page.runtime.start(spec({ actions: [{ name: "between", steps: [{ wait: "frame === 3", expr_key: "action between step 0", timeout: 5 }] }] }), {});
    const done = page.registered.action("between");
    for (let i = 0; i < 5; i += 1) runFrame();
    await done; // no interval tick ran: frames alone saw it
  });

  test("a wait step on a headless page runs the virtual clock on instead of polling", async () => {
    let frames = 0;
    const page = makePage({ readyState: "complete" }); // ready at once: no ready poll beside the wait's
    /** @type {number[]} */
    const asked = [];
    page.win.__splitbrainClock = {
      runUntil: (/** @type {() => boolean} */ holds, /** @type {number} */ ms) => {
        asked.push(ms);
        while (!holds()) frames += 1;
        return Promise.resolve(true);
      },
    };
    page.runtime.expr("action go step 0", () => frames >= 30);
    page.runtime.start(spec({ actions: [{ name: "go", steps: [{ wait: "frames >= 30", expr_key: "action go step 0", timeout: 2 }] }] }), {});
    await page.registered.action("go");
    assert.deepEqual(asked, [2000]);
    assert.equal(frames, 30);
    assert.equal(page.intervals.filter((i) => i.ms === WAIT_POLL_MS).length, 0, "no poll");
  });

  test("a setup that waits for ready runs after the page's scripts, before the page says it is ready", () => {
    const seen = /** @type {string[]} */ ([]);
    const page = makePage({ readyState: "loading" });
    page.runtime.setup(() => seen.push(`setup at ${page.readyCalls} ready calls`));
    page.runtime.start(spec({}), {});
    assert.deepEqual(seen, []);
    page.load();
    assert.deepEqual(seen, ["setup at 0 ready calls"]);
    assert.equal(page.readyCalls, 1);
  });
});

test("a drag binding presses the handle, moves across its track and releases where the value lies", () => {
  const model = { speed: 0 };
  const sent = /** @type {{type: string, x: number, on: string}[]} */ ([]);
  const page = railPage(90, (e, on) => {
    sent.push({ type: e.type, x: e.clientX, on });
    if (e.type === "mousemove" && e.buttons === 1) model.speed = ((e.clientX - 100) / 200) * 100;
  });
  page.runtime.start(
    spec({
      params: [{ path: "dial.speed", type: "number", min: 0, max: 100, bind: { drag: "#knob", track: "#rail" }, read: { global: "model.speed" } }],
    }),
    { model: { get: () => model } },
  );
  const state = page.registered.apply({ "dial.speed": 30 });
  assert.equal(model.speed, 30);
  assert.deepEqual(state, { "dial.speed": 30 });
  const types = sent.map((e) => e.type);
  assert.deepEqual(types.slice(0, 2), ["pointerdown", "mousedown"]);
  assert.deepEqual(types.slice(-2), ["pointerup", "mouseup"]);
  assert.equal(types.filter((t) => t === "mousemove").length, DRAG_MOVES);
  assert.equal(sent[0].x, 100); // pressed at the handle's centre
  assert.equal(sent.at(-1)?.x, 160); // released 30% along the 200-pixel rail
});

/**
 * A page whose form sets a flock's population, which its model caps at 150 (its own rule), beside
 * `more` parameters on the same model (`model.speed` starts at 1).
 * @param {any[]} more
 */
function cappedFlock(more) {
  const model = { count: 40, speed: 1 };
  const field = new FakeControl("input", { type: "number", value: "40" });
  field.onchange = () => {
    const wanted = Number(field.value);
    if (wanted <= 150) model.count = wanted;
  };
  const page = makePage({ elements: { "#count": [field] } });
  const population = { path: "flock.population", type: "integer", bind: { selector: "#count" }, read: { global: "model.count" } };
  page.runtime.start(spec({ params: [population, ...more] }), { model: { get: () => model } });
  return { page, model, field };
}

/**
 * A custom slider as pages build them: a 200-pixel rail from x 100 to 300; while the pointer is
 * down, the page's handler writes the value under it, `lo` at the rail's left end and `hi` at its
 * right (so a falling track when `hi < lo`), rounded to `step` of its own units.
 * @param {{lo?: number, hi?: number, step?: number}} track
 * @param {Record<string, unknown>} bind  the binding, beside the handle and the track
 * @param {{min: number, max: number}} range  the parameter's, in the manifest's units
 */
function sliderPage({ lo = 0, hi = 1, step = 0 }, bind, range) {
  const model = { value: lo, presses: 0, releasedAt: NaN };
  const page = railPage(90, (e) => {
    if (e.type === "mousedown") model.presses += 1;
    if (e.type === "mouseup") model.releasedAt = e.clientX;
    if (e.type === "mousemove" && e.buttons === 1) {
      const value = lo + Math.min(1, Math.max(0, (e.clientX - 100) / 200)) * (hi - lo);
      model.value = step ? Math.round(value / step) * step : value;
    }
  });
  const scale = /** @type {{scale?: number}} */ (bind).scale;
  page.runtime.start(
    spec({
      params: [
        {
          path: "rule.bias",
          type: "number",
          ...range,
          bind: { drag: "#knob", track: "#rail", ...bind },
          read: { global: "model.value", ...(scale === undefined ? {} : { scale }) },
        },
      ],
    }),
    { model: { get: () => model } },
  );
  return { page, model };
}

describe("a drag's units: the track's ends in the page's units, the tolerance a pixel in the manifest's", () => {
  test("with scale and no span, the manifest's min..max is converted to the page's units", () => {
    // the Polygons page: a share in 0..1, rounded to 1/400; the manifest says percent
    const { page, model } = sliderPage({ lo: 0, hi: 1, step: 0.0025 }, { scale: 0.01 }, { min: 0, max: 100 });
    const state = page.registered.apply({ "rule.bias": 33.3 });
    assert.ok(Math.abs(model.releasedAt - 166.6) < 1e-9, String(model.releasedAt));
    assert.ok(Math.abs(model.value - 0.3325) < 1e-12, String(model.value));
    assert.equal(state["rule.bias"], 33.25); // what the page took, within a pixel (0.5 %) of what was asked
  });

  test("with span, it is in the page's units, and a value within a pixel is taken", () => {
    const { page, model } = sliderPage({ lo: 0, hi: 1, step: 0.0025 }, { scale: 0.01, span: [0, 1] }, { min: 10, max: 90 });
    assert.equal(page.registered.apply({ "rule.bias": 33.3 })["rule.bias"], 33.25);
    assert.ok(Math.abs(model.releasedAt - 166.6) < 1e-9, String(model.releasedAt));
  });

  test("a span may fall: a track whose value falls as the handle moves right", () => {
    const { page, model } = sliderPage({ lo: 1, hi: 0 }, { span: [1, 0] }, { min: 0, max: 1 });
    assert.equal(page.registered.apply({ "rule.bias": 0.25 })["rule.bias"], 0.25);
    assert.equal(model.releasedAt, 100 + 0.75 * 200);
  });

  test("a value more than a pixel from what the page can hold is refused, saying both", () => {
    const { page } = sliderPage({ lo: 0, hi: 1, step: 0.1 }, { scale: 0.01 }, { min: 0, max: 100 });
    throwsNaming(() => page.registered.apply({ "rule.bias": 33 }), "rule.bias: set 33, the page holds 30");
  });

  test("a drag to the value the page holds already is not made (a page may rebuild on every drag)", () => {
    const { page, model } = sliderPage({ lo: 0, hi: 1, step: 0.0025 }, { scale: 0.01 }, { min: 0, max: 100 });
    page.registered.apply({ "rule.bias": 33.3 });
    assert.equal(model.presses, 1);
    page.registered.apply({ "rule.bias": 33.25 });
    page.registered.apply({ "rule.bias": 33.3 }); // within a pixel of what it holds: it would land there again
    page.registered.reset({ "rule.bias": 33.25 });
    assert.equal(model.presses, 1);
    page.registered.apply({ "rule.bias": 50 });
    assert.equal(model.presses, 2);
  });
});

describe("a reset, and the values a page gets when it opens: what the page takes, and what it did not", () => {
  /** the flock, with a speed it always takes and a size whose global is missing */
  const cappedPage = () =>
    cappedFlock([
      { path: "flock.speed", type: "number", bind: { global: "model.speed" } },
      { path: "flock.size", type: "number", bind: { global: "model.missing.size" } },
    ]);

  test("a reset sets the others and names the refused one with what was asked and what the page holds", () => {
    const { page, model } = cappedPage();
    const state = page.registered.reset({ "flock.population": 500, "flock.speed": 3 });
    assert.equal(model.speed, 3);
    assert.equal(model.count, 40);
    assert.deepEqual(state[REFUSED_KEY], { "flock.population": { asked: 500, held: 40 } });
    assert.equal(state["flock.population"], 40);
  });

  test("a binding that finds nothing is one refusal, with its error; the others are set", () => {
    const { page, model } = cappedPage();
    const state = page.registered.reset({ "flock.population": 100, "flock.speed": 2, "flock.size": 4 });
    assert.deepEqual([model.count, model.speed], [100, 2]);
    assert.deepEqual(state[REFUSED_KEY], {
      "flock.size": { asked: 4, held: null, error: "bind.global 'model.missing.size': 'model.missing' is undefined" },
    });
  });

  test("a binding that cannot write is no refusal where the page holds the value already (a const)", () => {
    const GRAVITY = 9.81;
    const page = makePage();
    page.runtime.start(spec({ params: [{ path: "motion.g", type: "number", bind: { global: "GRAVITY" } }] }), {
      GRAVITY: { get: () => GRAVITY, set: () => { throw new TypeError("Assignment to constant variable."); } },
    });
    assert.equal(REFUSED_KEY in page.registered.reset({ "motion.g": 9.81 }), false);
    assert.deepEqual(Object.keys(page.registered.reset({ "motion.g": 1.6 })[REFUSED_KEY]), ["motion.g"]);
  });

  test("the values a page gets when it opens (no id) are taken the same way; a call's apply stays all or nothing", () => {
    const { page, model } = cappedPage();
    const opened = page.registered.apply({ "flock.population": 500, "flock.speed": 3 }, { id: undefined });
    assert.deepEqual(opened[REFUSED_KEY], { "flock.population": { asked: 500, held: 40 } });
    assert.equal(model.speed, 3);
    throwsNaming(() => page.registered.apply({ "flock.population": 500, "flock.speed": 4 }, { id: "r1" }), "flock.population: set 500, the page holds 40");
    assert.equal(model.speed, 3); // put back
    const taken = page.registered.reset({ "flock.population": 100, "flock.speed": 1 });
    assert.equal(REFUSED_KEY in taken, false);
  });
});


describe("what pages by other authors need: toggles, keys, every match, assignments, a wait since the start", () => {
  /** A play button whose label says what a click does next: "Pause" while it runs. */
  function playButton() {
    const model = { running: false };
    const button = new FakeControl("button", { text: "Play" });
    button.onclick = () => {
      model.running = !model.running;
      button.textContent = model.running ? "Pause" : "Play";
      button.attrs["aria-pressed"] = String(model.running);
    };
    return { model, button };
  }

  for (const [how, pressed] of /** @type {[string, any][]} */ ([["its label", { text: "Pause" }], ["aria-pressed", undefined]])) {
    test(`a toggle button is clicked only when it does not show the value (read from ${how})`, () => {
      const { model, button } = playButton();
      const page = makePage({ elements: { "#play": [button] } });
      const bind = { toggle: "#play", ...(pressed ? { pressed } : {}) };
      page.runtime.start(spec({ params: [{ path: "sim.running", type: "boolean", bind }] }), {});
      assert.deepEqual(page.registered.apply({ "sim.running": true }), { "sim.running": true });
      assert.equal(model.running, true);
      page.registered.apply({ "sim.running": true }); // on already: no click, no flip
      assert.equal(button.clicks, 1);
      assert.deepEqual(page.registered.apply({ "sim.running": false }), { "sim.running": false });
      assert.deepEqual([model.running, button.clicks], [false, 2]);
    });
  }

  test("a toggle's class says it is on; a disabled one is refused as a person could not press it", () => {
    const button = new FakeControl("button");
    const classes = new Set();
    /** @type {any} */ (button).classList = { contains: (/** @type {string} */ c) => classes.has(c) };
    button.onclick = () => (classes.has("on") ? classes.delete("on") : classes.add("on"));
    const page = makePage({ elements: { "#go": [button] } });
    page.runtime.start(spec({ params: [{ path: "go", type: "boolean", bind: { toggle: "#go", pressed: { class: "on" } } }] }), {});
    assert.deepEqual(page.registered.apply({ go: true }), { go: true });
    button.disabled = true;
    throwsNaming(() => page.registered.apply({ go: false }), "go: bind.toggle '#go' is disabled (a person could not press it now)");
    assert.equal(page.registered.apply({ go: true }).go, true); // showing it already: nothing to press
  });

  test("a key step presses the key as a person does, with the legacy codes older pages read", () => {
    const page = makePage();
    const seen = /** @type {any[]} */ ([]);
    const body = { dispatchEvent: (/** @type {any} */ e) => seen.push(e) };
    page.win.document.body = body;
    page.win.KeyboardEvent = InitEvent;
    page.runtime.start(
      spec({
        actions: [
          { name: "pause", steps: [{ key: "p" }] },
          { name: "splat", steps: [{ key: " ", modifiers: ["shift"] }] },
          { name: "undo", steps: [{ key: "z", modifiers: ["ctrl"] }] },
          { name: "up", steps: [{ key: "ArrowUp" }] },
        ],
      }),
      {},
    );
    page.registered.action("pause");
    assert.deepEqual(seen.map((e) => [e.type, e.key, e.code, e.keyCode, e.which]), [
      ["keydown", "p", "KeyP", 80, 80],
      ["keypress", "p", "KeyP", 112, 112],
      ["keyup", "p", "KeyP", 80, 80],
    ]);
    assert.ok(seen.every((e) => e.bubbles && e.cancelable && !e.shiftKey));
    seen.length = 0;
    page.registered.action("splat");
    assert.deepEqual(seen.map((e) => [e.type, e.code, e.keyCode, e.shiftKey]), [
      ["keydown", "Space", 32, true],
      ["keypress", "Space", 32, true],
      ["keyup", "Space", 32, true],
    ]);
    seen.length = 0;
    page.registered.action("undo"); // a shortcut with ctrl types nothing: no keypress
    assert.deepEqual(seen.map((e) => [e.type, e.ctrlKey]), [["keydown", true], ["keyup", true]]);
    seen.length = 0;
    page.registered.action("up");
    assert.deepEqual(seen.map((e) => [e.type, e.keyCode]), [["keydown", NAMED_KEYS.ArrowUp.keyCode], ["keyup", 38]]);
  });

  test("a key step's `on` must name an element, checked before any step runs", () => {
    const page = makePage();
    page.runtime.start(spec({ actions: [{ name: "k", steps: [{ call: "go" }, { key: "p", on: "#canvas" }] }] }), {
      go: { get: () => () => assert.fail("no step runs when a later one cannot") },
    });
    throwsNaming(() => page.registered.action("k"), "actions.k: bind[1].on '#canvas' matches no element");
  });

  test("clicking every match clicks each cell as the step finds them; none is fine, a bad selector is not", () => {
    const cells = [new FakeControl("div"), new FakeControl("div"), new FakeControl("div")];
    const elements = { ".cell.alive": cells };
    const page = makePage({ elements });
    page.runtime.start(spec({ actions: [{ name: "clear", steps: [{ click: ".cell.alive", all: true }] }, { name: "bad", steps: [{ click: "!!", all: true }] }] }), {});
    page.win.MouseEvent = InitEvent;
    page.registered.action("clear");
    assert.deepEqual(cells.map((c) => c.clicks), [1, 1, 1]);
    // pressed and released as a mouse does, then clicked: a board whose cells act on the press works too
    assert.deepEqual(cells[0].events.map((e) => e.type), ["pointerdown", "mousedown", "pointerup", "mouseup"]);
    elements[".cell.alive"] = [];
    page.registered.action("clear"); // a clear board: nothing to click
    throwsNaming(() => page.registered.action("bad"), /^actions\.bad: bind\.click '!!' is not a valid CSS selector/);
  });

  test("an assign step writes a fresh copy of its value to the page's model each run", () => {
    let trail = [1, 2, 3];
    const scene = { trail: [4], settings: Object.freeze({ speed: 1 }) };
    const page = makePage();
    page.runtime.start(
      spec({
        actions: [
          { name: "clear", steps: [{ assign: "trail", value: [] }, { assign: "scene.trail", value: [] }] },
          { name: "frozen", steps: [{ assign: "scene.settings.speed", value: 2 }] },
          { name: "missing", steps: [{ assign: "nothing.here", value: 1 }] },
        ],
      }),
      { trail: { get: () => trail, set: (v) => (trail = /** @type {number[]} */ (v)) }, scene: { get: () => scene }, nothing: { get: () => undefined } },
    );
    page.registered.action("clear");
    assert.deepEqual([trail, scene.trail], [[], []]);
    trail.push(9);
    page.registered.action("clear");
    assert.deepEqual(trail, []); // not the array the page filled last time
    throwsNaming(() => page.registered.action("frozen"), /^actions\.frozen: bind\.assign 'scene\.settings\.speed' (is read-only|cannot be written)/);
    throwsNaming(() => page.registered.action("missing"), "actions.missing: bind.assign 'nothing.here': 'nothing' is undefined");
  });

  test("a wait since the start holds once its value changed from (or grew by `by` from) what it was as the action began", async () => {
    let generation = 7;
    const page = makePage();
    page.runtime.expr("action step step 1", () => generation);
    page.runtime.expr("action two step 1", () => generation);
    page.runtime.start(
      spec({
        actions: [
          { name: "step", steps: [{ call: "tick" }, { wait: "generation", expr_key: "action step step 1", timeout: 2, since: "start" }] },
          { name: "two", steps: [{ call: "tick" }, { wait: "generation", expr_key: "action two step 1", timeout: 2, since: "start", by: 2 }] },
        ],
      }),
      { tick: { get: () => () => {} } }, // the page's button: its next generation comes in its own time
    );
    const step = page.registered.action("step");
    let over = false;
    step.then(() => (over = true));
    page.tick(WAIT_POLL_MS);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(over, false, "the generation it began at does not count");
    generation += 1; // the page's own next generation
    page.tick(WAIT_POLL_MS);
    await step;
    const two = page.registered.action("two");
    generation += 1; // one generation only: it never grows by 2
    page.tick(WAIT_POLL_MS);
    tickLater(page, 3_000); // past its 2 s
    await assert.rejects(two, { message: "actions.two: bind[1].wait: 'generation' to grow by 2 from 8 did not hold within 2 s" });
  });
});

test("a drag's `position` places the handle by an expression over the call's values and the page's", () => {
  // a share of what another handle leaves: the handle sits at ratio * occupied along a 0..1 track
  const model = { handle: 0.25, occupied: 0.5 };
  const page = railPage(140, (e) => {
    if (e.type === "mousemove" && e.buttons === 1) model.handle = Math.min(1, Math.max(0, (e.clientX - 100) / 200));
  });
  page.runtime.expr("param board.ratio", () => model.handle / model.occupied);
  page.runtime.expr("position board.ratio", (/** @type {any} */ { ratio, occupied }) => ratio * occupied);
  page.runtime.start(
    spec({
      params: [
        {
          path: "board.ratio",
          type: "number",
          min: 0,
          max: 1,
          position_key: "position board.ratio",
          bind: { drag: "#knob", track: "#rail", span: [0, 1], position: "ratio * occupied" },
          read: { expr: "model.handle / model.occupied" },
        },
        { path: "board.occupied", type: "number", bind: { global: "model.occupied" } },
      ],
    }),
    { model: { get: () => model } },
  );
  assert.ok(Math.abs(page.registered.apply({ "board.ratio": 0.6 })["board.ratio"] - 0.6) < 0.02);
  assert.ok(Math.abs(model.handle - 0.3) < 0.01, String(model.handle)); // 0.6 of the 0.5 the page holds
  // in one call, the other value is the call's: 0.5 of 0.8 is 0.4 along the track
  const both = page.registered.apply({ "board.ratio": 0.5, "board.occupied": 0.8 });
  assert.ok(Math.abs(model.handle - 0.4) < 0.01 && model.occupied === 0.8, JSON.stringify(model));
  assert.ok(Math.abs(both["board.ratio"] - 0.5) < 0.02);
});
