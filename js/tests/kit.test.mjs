// Specification of js/page/kit.js, the target kit (docs/writing-targets.md, "The target kit").
//
// The helpers that need no page are tested as they are; the rest through createKit on a
// fake window (just what the kit touches: a head, a body's dataset, matchMedia, computed
// styles, requestAnimationFrame). The last group runs the built IIFE from
// splitbrain_widget/static/ in a vm context, to cover what actually ships.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import vm from "node:vm";

import { MOTION_ATTR, THEME_ATTR } from "../protocol.js";
import { KIT_CSS, REDUCED_MOTION_INTERVAL_MS, alpha, createKit, fixedStep, fmt, params, random, round, spokenRow, ticks } from "../page/kit.js";

/** The members of window.Kit: the API the pages used when each carried a copy, plus run, stage and target. */
const KIT_API = [
  "FONT", "FONT_SMALL", "FONT_BOLD", "colors", "onTheme", "look", "textAlternative", "alpha", "targetApi", "surface", "params", "fixedStep",
  "loop", "reporter", "round", "fmt", "ticks", "text", "arrow", "scaleBar", "panel", "random", "run", "stage",
  "target",
];

/** @param {Record<string, unknown>} values */
const ctxOf = (values) => ({ get: (/** @type {string} */ path) => values[path] });

/**
 * A fake page: enough of window and document for createKit, with the animation frames under
 * the test's control (`frames.run(now)` runs the pending callbacks).
 * @param {{dark?: boolean, theme?: string, vars?: Record<string, string>, SplitBrain?: unknown, noBody?: boolean}} [opts]
 */
function fakePage(opts = {}) {
  /** @type {any[]} */
  const headChildren = [{ tagName: "META" }];
  /** @type {Record<string, ((...args: any[]) => void)[]>} */
  const docListeners = {};
  const element = (/** @type {string} */ tagName) => ({
    tagName: tagName.toUpperCase(),
    dataset: /** @type {Record<string, string>} */ ({}),
    textContent: "",
    className: "",
    id: "",
    /** @type {Record<string, string>} */
    attributes: {},
    /** @type {any[]} */
    children: [],
    clientWidth: 300,
    clientHeight: 200,
    width: 0,
    height: 0,
    append(/** @type {any[]} */ ...kids) {
      this.children.push(...kids);
    },
    appendChild(/** @type {any} */ kid) {
      this.children.push(kid);
    },
    prepend(/** @type {any} */ kid) {
      this.children.unshift(kid);
    },
    setAttribute(/** @type {string} */ name, /** @type {string} */ value) {
      this.attributes[name] = value;
    },
    getContext: () => ({ setTransform() {} }),
  });
  const body = element("body");
  const document = {
    readyState: "loading",
    hidden: false,
    head: {
      get firstChild() {
        return headChildren[0] ?? null;
      },
      insertBefore(/** @type {any} */ node, /** @type {any} */ before) {
        headChildren.splice(before ? headChildren.indexOf(before) : headChildren.length, 0, node);
      },
    },
    documentElement: {
      lang: "",
      getAttribute: (/** @type {string} */ name) => (name === THEME_ATTR ? opts.theme ?? null : name === MOTION_ATTR ? opts.motion ?? null : null),
    },
    /** @type {any} null until the parser gets to the body, with `noBody` */
    body: opts.noBody ? null : body,
    createElement: element,
    addEventListener(/** @type {string} */ type, /** @type {(...args: any[]) => void} */ fn) {
      (docListeners[type] ??= []).push(fn);
    },
    fire(/** @type {string} */ type) {
      for (const fn of docListeners[type] ?? []) fn();
    },
  };
  const vars = { c1: "#1f6feb", fg: "#1b2430", halo: "rgba(251, 250, 247, 0.9)", ...opts.vars };
  /** @type {Map<number, (now: number) => void>} */
  const pending = new Map();
  let nextFrame = 1;
  const frames = {
    pending,
    run(/** @type {number} */ now) {
      const due = [...pending.values()];
      pending.clear();
      for (const fn of due) fn(now);
    },
  };
  const win = {
    document,
    SplitBrain: opts.SplitBrain,
    devicePixelRatio: 1,
    matchMedia: (/** @type {string} */ query) => ({
      matches: query.includes("color-scheme") ? Boolean(opts.dark) : Boolean(query.includes("reduced-motion") && opts.reducedMotion),
      addEventListener() {},
    }),
    getComputedStyle: () => ({
      getPropertyValue: (/** @type {string} */ name) => ` ${vars[/** @type {keyof typeof vars} */ (name.slice(2))] ?? ""} `,
    }),
    addEventListener() {},
  };
  return { win, document, body, headChildren, vars, frames, nextFrame: () => nextFrame++ };
}

/**
 * createKit on a fake page, with requestAnimationFrame routed to the page's frames.
 * @param {Parameters<typeof fakePage>[0]} [opts]
 */
function kitOnFakePage(opts) {
  const page = fakePage(opts);
  const saved = { raf: globalThis.requestAnimationFrame, caf: globalThis.cancelAnimationFrame };
  globalThis.requestAnimationFrame = (fn) => {
    const id = page.nextFrame();
    page.frames.pending.set(id, fn);
    return id;
  };
  globalThis.cancelAnimationFrame = (id) => void page.frames.pending.delete(id);
  const kit = createKit(/** @type {any} */ (page.win));
  return { ...page, kit, restore: () => Object.assign(globalThis, { requestAnimationFrame: saved.raf, cancelAnimationFrame: saved.caf }) };
}

describe("params: the page's checked copy of its parameters", () => {
  const P = params({
    "launch.angle": { type: "number", value: 45, min: 0, max: 90, unit: "deg" },
    "flock.count": { type: "integer", value: 150, min: 1, max: 500 },
    "display.on": { type: "boolean", value: true },
    "display.map": { type: "string", value: "a", enum: ["a", "b"] },
  });

  test("defaults are every parameter's value, frozen", () => {
    assert.deepEqual(P.defaults, { "launch.angle": 45, "flock.count": 150, "display.on": true, "display.map": "a" });
    assert.ok(Object.isFrozen(P.defaults));
  });

  test("changes picks the known parameters a payload carries and ignores the rest", () => {
    assert.deepEqual(P.changes(ctxOf({ "launch.angle": 30, other: 1 })), { "launch.angle": 30 });
  });

  test("a bad value throws naming the path, the rule and the value", () => {
    assert.throws(() => P.changes(ctxOf({ "launch.angle": 91 })), /launch\.angle must be from 0 to 90 deg, got 91/);
    assert.throws(() => P.changes(ctxOf({ "launch.angle": "fast" })), /launch\.angle must be a finite number deg, got "fast"/);
    assert.throws(() => P.changes(ctxOf({ "flock.count": 1.5 })), /flock\.count must be an integer, got 1\.5/);
    assert.throws(() => P.changes(ctxOf({ "display.on": 1 })), /display\.on must be true or false, got 1/);
    assert.throws(() => P.changes(ctxOf({ "display.map": "c" })), /display\.map must be one of "a", "b", got "c"/);
  });
});

describe("fixedStep: whole steps of dt, the rest carried", () => {
  test("runs the whole steps due and carries the remainder to the next call", () => {
    let steps = 0;
    const stepper = fixedStep(() => void (steps += 1));
    assert.equal(stepper.advance(0.3125, 0.125), 2);
    assert.equal(stepper.advance(0.0625, 0.125), 1); // 0.0625 carried + 0.0625
    assert.equal(steps, 3);
  });

  test("past maxSteps a frame's remaining time is dropped, not carried", () => {
    const stepper = fixedStep(() => {}, 10);
    assert.equal(stepper.advance(5, 0.1), 10);
    assert.equal(stepper.advance(0.05, 0.1), 0);
  });

  test("a step returning false ends the frame's steps", () => {
    const stepper = fixedStep(() => false);
    assert.equal(stepper.advance(1, 0.1), 1);
  });
});

describe("numbers and colours", () => {
  test("round gives null for what is not a finite number, and never -0", () => {
    assert.equal(round(1.23456, 2), 1.23);
    assert.equal(round(Number.NaN, 2), null);
    assert.equal(round(null, 2), null);
    assert.ok(Object.is(round(-0.0001, 2), 0));
  });

  test("fmt uses a typographic minus and a dash for no value", () => {
    assert.equal(fmt(-1.5, 1), "\u22121.5");
    assert.equal(fmt(-0.001, 1), "0.0");
    assert.equal(fmt(undefined, 1), "—");
  });

  test("ticks are round steps covering the range, with the decimals a label needs", () => {
    assert.deepEqual(ticks(0, 10, 5), { step: 2, values: [0, 2, 4, 6, 8, 10], digits: 0 });
    assert.equal(ticks(0, 1, 4).digits, 1);
  });

  test("random replays the same sequence for the same seed", () => {
    const a = random(7), b = random(7);
    const first = [a(), a(), a()];
    assert.deepEqual([b(), b(), b()], first);
    assert.ok(first.every((x) => x >= 0 && x < 1));
  });

  test("alpha works on #rrggbb and rgba() palette entries", () => {
    assert.equal(alpha("#1f6feb", 0.5), "rgba(31, 111, 235, 0.5)");
    assert.equal(alpha("rgba(27, 36, 48, 0.42)", 0.1), "rgba(27, 36, 48, 0.1)");
    assert.equal(alpha("teal", 0.1), "teal");
  });
});

/** A fake target API that records what the page posts and keeps the handlers it registers. */
function fakeApi() {
  /** @type {string[]} */
  const calls = [];
  /** @type {Record<string, (...args: any[]) => any>} */
  const handlers = {};
  const SplitBrain = {
    onApply: (/** @type {any} */ fn) => void (handlers.apply = fn),
    onReset: (/** @type {any} */ fn) => void (handlers.reset = fn),
    onState: (/** @type {any} */ fn) => void (handlers.state = fn),
    state: (/** @type {any} */ s) => calls.push(`state ${JSON.stringify(s)}`),
    ready: () => calls.push("ready"),
  };
  return { calls, handlers, SplitBrain };
}

describe("createKit on a page", () => {
  test("the look goes in first in the head, so the page's own CSS comes later and wins", () => {
    const { headChildren, restore } = kitOnFakePage();
    restore();
    assert.equal(headChildren.length, 2);
    assert.equal(headChildren[0].tagName, "STYLE");
    assert.equal(headChildren[0].textContent, KIT_CSS);
    assert.equal(headChildren[1].tagName, "META");
  });

  test("the page's <html data-splitbrain-theme> forces the scheme over the reader's (an MCP App's host theme)", () => {
    for (const [dark, theme, expected] of [[true, "light", false], [false, "dark", true], [true, null, true], [false, null, false]]) {
      const { kit, restore } = kitOnFakePage({ dark: Boolean(dark), theme: /** @type {any} */ (theme) ?? undefined });
      restore();
      assert.equal(kit.colors.dark, expected, `reader dark=${dark}, page theme=${theme}`);
    }
    assert.match(KIT_CSS, /:root\[data-splitbrain-theme="dark"\] \{ color-scheme: dark;\s+--bg: #14171c;/);
    assert.match(KIT_CSS, /:root:not\(\[data-splitbrain-theme="light"\]\)/);
  });

  test("the palette is read again at DOMContentLoaded, with the page's own CSS variables, and redraws", () => {
    const { kit, document, vars, restore } = kitOnFakePage();
    restore();
    assert.equal(kit.colors.c1, "#1f6feb");
    /** @type {string[]} */
    const seen = [];
    kit.onTheme((colors) => seen.push(colors.c1));
    vars.c1 = "#ff0000"; // the page's own <style> overrides --c1
    document.fire("DOMContentLoaded");
    assert.equal(kit.colors.c1, "#ff0000");
    assert.deepEqual(seen, ["#ff0000"]);
  });

  test("targetApi without the target API leaves a note in the page and throws", () => {
    const { kit, document, restore } = kitOnFakePage();
    restore();
    assert.throws(() => kit.targetApi("rocket"), /rocket: window\.SplitBrain is missing/);
    assert.equal(document.body.children[0].className, "sb-missing");
  });

  test("run: draws, reports, starts the loop and calls ready, in that order", () => {
    const { calls, handlers, SplitBrain } = fakeApi();
    const { kit, frames, document, restore } = kitOnFakePage({ SplitBrain });
    try {
      const P = kit.params({ "a.x": { type: "number", value: 1, min: 0, max: 10 } });
      let values = { ...P.defaults };
      const report = kit.reporter(kit.targetApi("t"), () => ({ ...values }));
      kit.run(kit.targetApi("t"), P, {
        report,
        draw: () => calls.push("draw"),
        frame: (seconds) => calls.push(`frame ${seconds}`),
        apply: (changes) => void (values = { ...values, ...changes }),
        reset: (all) => void (values = all),
      });
      assert.deepEqual(calls, ["draw", 'state {"a.x":1}', "ready"]);
      assert.equal(frames.pending.size, 1, "the loop asked for a frame before ready");
      assert.equal(document.body.dataset.running, "true");

      calls.length = 0;
      frames.run(1000);
      frames.run(1050);
      assert.deepEqual(calls, ["frame 0", "draw", "frame 0.05", "draw"]);

      assert.deepEqual(handlers.apply({}, ctxOf({ "a.x": 3 })), { "a.x": 3 }, "an apply answers with a fresh state");
      assert.throws(() => handlers.apply({}, ctxOf({ "a.x": 11 })), /a\.x must be from 0 to 10/);
      assert.deepEqual(handlers.reset({}, ctxOf({})), { "a.x": 1 }, "a reset starts from the defaults");
      assert.deepEqual(handlers.state(), { "a.x": 1 });
    } finally {
      restore();
    }
  });
});

describe("reduced motion: the physics keeps its pace, the picture changes twice a second", () => {
  /**
   * @param {{motion?: string, reducedMotion?: boolean}} look
   */
  function runOn(look) {
    const { calls, handlers, SplitBrain } = fakeApi();
    const timers = /** @type {{fn: () => void, ms: number}[]} */ ([]);
    const saved = globalThis.setTimeout;
    globalThis.setTimeout = /** @type {any} */ ((/** @type {() => void} */ fn, /** @type {number} */ ms) => timers.push({ fn, ms }));
    const page = kitOnFakePage({ SplitBrain, ...look });
    const P = page.kit.params({ "a.x": { type: "number", value: 1, min: 0, max: 10 } });
    let values = { ...P.defaults };
    const report = page.kit.reporter(page.kit.targetApi("t"), () => ({ ...values }));
    page.kit.run(page.kit.targetApi("t"), P, {
      report,
      draw: () => calls.push("draw"),
      frame: (seconds) => calls.push(`frame ${Math.round(seconds * 1000) / 1000}`),
      apply: (changes) => void (values = { ...values, ...changes }),
      reset: (all) => void (values = all),
    });
    const restore = () => {
      globalThis.setTimeout = saved;
      page.restore();
    };
    return { calls, handlers, timers, page, restore };
  }

  for (const [why, look] of /** @type {const} */ ([
    ["the view says so (MOTION_ATTR)", { motion: "reduce" }],
    ["the reader's own setting", { reducedMotion: true }],
  ])) {
    test(`ticks on a timer, simulating the time between ticks in steps, drawing once: ${why}`, () => {
      const { calls, handlers, timers, page, restore } = runOn(look);
      try {
        assert.equal(page.frames.pending.size, 0, "no animation frame is asked for");
        assert.equal(timers.length, 1);
        assert.equal(timers[0].ms, REDUCED_MOTION_INTERVAL_MS);
        assert.equal(page.document.body.dataset.motion, "reduced");
        const realNow = performance.now;
        let now = 1000;
        performance.now = () => now;
        try {
          calls.length = 0;
          timers.shift()?.fn(); // the first tick: no time passed yet
          now = 1250;
          timers.shift()?.fn(); // 250 ms later: three steps of at most 0.1 s, one drawing
          assert.deepEqual(calls, ["frame 0", "draw", "frame 0.1", "frame 0.1", "frame 0.05", "draw"]);
        } finally {
          performance.now = realNow;
        }
        calls.length = 0;
        handlers.apply({}, ctxOf({ "a.x": 3 }));
        assert.deepEqual(calls, ["draw"], "a change is drawn at once, not at the next tick");
      } finally {
        restore();
      }
    });
  }

  test("without it, one frame per animation frame, as before", () => {
    const { timers, page, restore } = runOn({});
    try {
      assert.equal(page.frames.pending.size, 1);
      assert.equal(timers.length, 0);
      assert.equal(page.document.body.dataset.motion, "full");
      assert.deepEqual(page.kit.look(), { theme: "light", reducedMotion: false });
    } finally {
      restore();
    }
  });
});

test("a panel row in words: its label, the value shown, its unit (none for no value)", () => {
  assert.equal(spokenRow("range", "35.3", "m"), "range 35.3 m");
  assert.equal(spokenRow("mode", "auto"), "mode auto");
  assert.equal(spokenRow("period", "—", "s"), "period —");
});

/** A page's declaration for Kit.target: two parameters, a panel of one row. */
const SPEC = {
  label: "A dot",
  title: "Dot",
  tag: (/** @type {any} */ state) => `${state["a.y"]}×`,
  rows: [{ key: "a.x", label: "x", unit: "m", digits: 2 }],
  params: {
    "a.x": { type: /** @type {const} */ ("number"), value: 1, min: 0, max: 10, unit: "m" },
    "a.y": { type: /** @type {const} */ ("number"), value: 2, min: 0, max: 10 },
  },
};

describe("target: a whole page from its setup and its declaration", () => {
  test("builds the stage, runs the setup, then the panel, the first report and ready", () => {
    const { calls, handlers, SplitBrain } = fakeApi();
    const { kit, document, restore } = kitOnFakePage({ SplitBrain });
    try {
      /** @type {any} */
      let parts;
      /** @type {any[]} */
      const applied = [];
      kit.target("dot", (given) => {
        parts = given;
        let values = { ...given.P.defaults };
        return {
          snapshot: () => ({ ...values }),
          draw: () => calls.push("draw"),
          frame: () => {},
          apply: (all, changes) => {
            applied.push([all, changes]);
            values = all;
          },
          reset: (all) => void (values = all),
        };
      }, SPEC);
      const stage = document.body.children[0];
      assert.equal(stage.id, "stage");
      const [canvas, panel] = stage.children;
      assert.equal(canvas.id, "view");
      const words = [...stage.children, ...document.body.children].find((c) => c.className === "sb-text-alternative");
      assert.deepEqual(canvas.attributes, { role: "img", "aria-label": "A dot", "aria-describedby": words.id });
      assert.equal(words.className, "sb-text-alternative", "the canvas's text alternative, beside it");
      assert.equal(words.textContent, "Dot: x 1.00 m.", "what the panel shows, in words, from the first report");
      assert.equal(panel.className, "sb-panel");
      assert.equal(document.documentElement.lang, "en", "a page without a lang gets the panel's");
      assert.equal(parts.surface.canvas, canvas);
      assert.deepEqual(parts.P.defaults, { "a.x": 1, "a.y": 2 });
      assert.deepEqual(calls, ["draw", 'state {"a.x":1,"a.y":2}', "ready"]);

      const [header, list] = panel.children;
      assert.equal(header.children[0].textContent, "Dot");
      assert.equal(header.children[1].textContent, "2×", "the tag comes from the state");
      assert.equal(list.children[1].textContent, "1.00", "a row with digits shows Kit.fmt(value, digits)");

      assert.deepEqual(handlers.apply({}, ctxOf({ "a.y": 3 })), { "a.x": 1, "a.y": 3 });
      assert.deepEqual(applied, [[{ "a.x": 1, "a.y": 3 }, { "a.y": 3 }]], "apply gets every value and the changes");
      handlers.apply({}, ctxOf({ "a.x": 4 }));
      assert.deepEqual(applied[1][0], { "a.x": 4, "a.y": 3 }, "the values accumulate over applies");
      assert.deepEqual(handlers.reset({}, ctxOf({})), { "a.x": 1, "a.y": 2 });
      handlers.apply({}, ctxOf({ "a.x": 5 }));
      assert.deepEqual(applied[2][0], { "a.x": 5, "a.y": 2 }, "after a reset, from the reset's values");
    } finally {
      restore();
    }
  });

  test("a script in the head (no body yet) builds the page at DOMContentLoaded", () => {
    const { calls, SplitBrain } = fakeApi();
    const { kit, document, body, restore } = kitOnFakePage({ SplitBrain, noBody: true });
    try {
      const sim = { snapshot: () => ({}), draw: () => {}, frame: () => {}, apply: () => {}, reset: () => {} };
      kit.target("dot", () => sim, SPEC);
      assert.deepEqual(calls, []);
      document.body = body;
      document.fire("DOMContentLoaded");
      assert.equal(body.children[0].id, "stage");
      assert.deepEqual(calls, ["state {}", "ready"]);
    } finally {
      restore();
    }
  });
});

describe("the built kit (splitbrain_widget/static/kit.js)", () => {
  test("defines window.Kit with the pages' API and puts its style first in the head", () => {
    const page = fakePage();
    const context = vm.createContext({ window: page.win, document: page.document, performance, console });
    page.win.window = page.win;
    vm.runInContext(readFileSync(new URL("../../splitbrain_widget/static/kit.js", import.meta.url), "utf8"), context);
    const kit = /** @type {any} */ (page.win).Kit;
    assert.deepEqual(Object.keys(kit).sort(), [...KIT_API].sort());
    assert.ok(Object.isFrozen(kit));
    assert.equal(page.headChildren[0].tagName, "STYLE");
    assert.ok("splitbrainKit" in page.headChildren[0].dataset);
  });
});
