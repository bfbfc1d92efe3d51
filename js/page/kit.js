// @ts-check
/**
 * kit.js: the target kit, the look and plumbing the built-in simulations share
 * (docs/writing-targets.md, "The target kit").
 *
 * The registry inlines the bundle (an IIFE, js/build.mjs) in the head of every
 * page whose manifest says `"kit": true`, right after the target API and before
 * the page's own scripts. Loading it:
 *
 * - inserts KIT_CSS as a `<style data-splitbrain-kit>` at the start of `<head>`,
 *   so any CSS of the page's own comes later and wins;
 * - defines `window.Kit`: the palette from the CSS variables (kept current across
 *   colour-scheme changes; `<html data-splitbrain-theme>` forces one, as an MCP App view does), canvas sizing with devicePixelRatio, checked
 *   parameters, a fixed-timestep driver, the animation loop (paused while
 *   `document.hidden`), the throttled state reporter, `run` (loop, handlers and
 *   readiness wired the way every built-in page does), the info panel and a few
 *   drawing and number helpers; and `target`, which builds a whole page from
 *   them: the stage (canvas and info panel), then the page's own simulation
 *   (its `setup`), then the panel, the reporter and `run`.
 *
 * Until #18 each built-in page carried its own copy of this block; `window.Kit`
 * keeps that copy's API (plus `run`, `stage` and `target`, which the built-in
 * pages are written with). The helpers that need no DOM are exported as well,
 * for the node tests.
 */

import { MOTION_ATTR, THEME_ATTR } from "../protocol.js";

/** @typedef {import("./target_api.js").SplitBrainApi} SplitBrainApi */
/** @typedef {import("./target_api.js").HandlerContext} HandlerContext */
/** @typedef {import("../protocol.js").State} State */

const FAMILY = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
export const FONT = `12px ${FAMILY}`;
export const FONT_SMALL = `11px ${FAMILY}`;
export const FONT_BOLD = `600 12px ${FAMILY}`;
export const REPORT_INTERVAL_MS = 100; // at most 10 state reports per second
export const MAX_FRAME_S = 0.1; // a longer gap between frames (GC, a busy tab) is not simulated
/** With reduced motion the loop draws this often (twice a second); the physics runs at its own pace. */
export const REDUCED_MOTION_INTERVAL_MS = 500;
/** The longest real time one reduced-motion tick simulates (a slower tick loses the rest, like a hidden tab). */
const MAX_REDUCED_TICK_S = 1;
/** A canvas's text alternative changes at most this often (the latest text wins). */
export const TEXT_ALTERNATIVE_INTERVAL_MS = 1000;
const COLOR_NAMES = /** @type {const} */ ([
  "bg", "fg", "muted", "grid", "axis", "ground", "halo", "c1", "c2", "c3", "c4", "c5", "c6",
]);

/** The dark palette: the reader's colour scheme, unless the page's `<html>` says otherwise (THEME_ATTR). */
const DARK_VARS = `
    --bg: #14171c;
    --fg: #e6e9ef;
    --muted: #9ba5b4;
    --grid: rgba(230, 233, 239, 0.075);
    --axis: rgba(230, 233, 239, 0.42);
    --ground: rgba(230, 233, 239, 0.055);
    --halo: rgba(20, 23, 28, 0.9);
    --panel: rgba(25, 29, 36, 0.88);
    --panel-line: rgba(230, 233, 239, 0.15);
    --c1: #5b9dff;
    --c2: #ff8c42;
    --c3: #5fd068;
    --c4: #d77cf2;
    --c5: #f7679a;
    --c6: #ffc53d;
`;
/**
 * The splitbrain look: the palette as CSS variables (light and dark), the stage that fills the
 * frame, the info panel (`.sb-panel`) and the note shown when the target API is missing.
 */
export const KIT_CSS = `
  :root {
    color-scheme: light dark;
    --font: ${FAMILY};
    --bg: #fbfaf7;
    --fg: #1b2430;
    --muted: #5b6676;
    --grid: rgba(27, 36, 48, 0.075);
    --axis: rgba(27, 36, 48, 0.42);
    --ground: rgba(27, 36, 48, 0.055);
    --halo: rgba(251, 250, 247, 0.9);
    --panel: rgba(255, 255, 255, 0.88);
    --panel-line: rgba(27, 36, 48, 0.13);
    --c1: #1f6feb; /* the thing that moves */
    --c2: #e8590c; /* forces, highlights */
    --c3: #2b8a3e; /* results, measurements */
    --c4: #9c36b5;
    --c5: #c2255c;
    --c6: #e09400; /* stars, warm accents */
  }
  @media (prefers-color-scheme: dark) {
    :root:not([${THEME_ATTR}="light"]) {${DARK_VARS}    }
  }
  :root[${THEME_ATTR}="dark"] { color-scheme: dark;${DARK_VARS}  }
  :root[${THEME_ATTR}="light"] { color-scheme: light; }
  html { background: transparent; }
  html, body { margin: 0; height: 100%; overflow: hidden; }
  body { font: 12px/1.35 var(--font); color: var(--fg); }
  #stage { position: absolute; inset: 0; background: var(--bg); border-radius: 6px; overflow: hidden; }
  #stage canvas { position: absolute; inset: 0; display: block; width: 100%; height: 100%; }
  .sb-panel {
    position: absolute; top: 8px; right: 8px; min-width: 150px; max-width: calc(50% - 16px);
    padding: 5px 9px 6px; border: 1px solid var(--panel-line); border-radius: 6px;
    background: var(--panel); box-shadow: 0 1px 3px rgba(0, 0, 0, 0.08);
    font-variant-numeric: tabular-nums; pointer-events: none;
  }
  .sb-panel header { display: flex; justify-content: space-between; align-items: baseline; gap: 10px; margin-bottom: 2px; font-weight: 600; }
  .sb-panel header small { font-weight: 400; font-size: 11px; color: var(--muted); }
  .sb-panel dl { display: grid; grid-template-columns: auto auto auto; column-gap: 6px; row-gap: 1px; margin: 0; }
  .sb-panel dt { color: var(--muted); white-space: nowrap; }
  .sb-panel dd { margin: 0; text-align: right; white-space: nowrap; }
  .sb-panel dd.unit { text-align: left; color: var(--muted); }
  @media (max-width: 420px) { .sb-panel { font-size: 11px; min-width: 0; padding: 4px 7px; } }
  .sb-missing { margin: 0; padding: 1em; color: #b00020; font: 13px/1.4 var(--font); }
  .sb-text-alternative { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
    clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0; }
`;

/** @typedef {typeof COLOR_NAMES[number]} ColorName */
/**
 * The palette: each `--name` CSS variable's value, and whether the dark scheme is on.
 * @typedef {{[name in ColorName]: string} & {dark: boolean}} Palette
 */

/**
 * A CSS colour with an alpha, for "#rrggbb" and "rgba(...)" palette entries; any other colour as it is.
 * @param {string} color
 * @param {number} a  0 to 1
 * @returns {string}
 */
export function alpha(color, a) {
  if (color.startsWith("#") && color.length === 7) {
    const n = parseInt(color.slice(1), 16);
    return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
  }
  const m = color.match(/rgba?\(([^)]+)\)/);
  if (!m) return color;
  const [r, g, b] = m[1].split(",").map((s) => s.trim());
  return `rgba(${r}, ${g}, ${b}, ${a})`;
}

// ---- parameters -------------------------------------------------------------------------------

/**
 * One parameter as the page knows it (a copy of its manifest entry).
 * @typedef {object} ParamSpec
 * @property {"number" | "integer" | "boolean" | "string"} type
 * @property {number | boolean | string} value  the default
 * @property {number} [min]
 * @property {number} [max]
 * @property {string[]} [enum]  the allowed strings
 * @property {string} [unit]  named in the error messages
 */

/**
 * @typedef {object} Params
 * @property {Readonly<Record<string, ParamSpec>>} spec
 * @property {Readonly<Record<string, any>>} defaults  every parameter's default by path
 * @property {(ctx: Pick<HandlerContext, "get">) => Record<string, any>} changes
 *   the known parameters in a handler's payload, each one checked; throws on the first bad one
 */

/**
 * The page's copy of its manifest's parameters: `{path: {type, value, min?, max?, enum?, unit?}}`.
 * `changes(ctx)` picks the known parameters out of a payload and checks each one before any is
 * used, so a bad value leaves the page untouched (the target API answers the throw as target_error).
 * @param {Record<string, ParamSpec>} spec
 * @returns {Readonly<Params>}
 */
export function params(spec) {
  /** @type {Record<string, any>} */
  const defaults = {};
  for (const [path, p] of Object.entries(spec)) defaults[path] = p.value;
  /**
   * @param {string} path
   * @param {unknown} value
   */
  function check(path, value) {
    const p = spec[path];
    const shown = JSON.stringify(value);
    const unit = p.unit ? ` ${p.unit}` : "";
    if (p.type === "boolean") {
      if (typeof value !== "boolean") throw new Error(`${path} must be true or false, got ${shown}`);
      return value;
    }
    if (p.type === "string") {
      if (typeof value !== "string" || (p.enum && !p.enum.includes(value))) {
        const allowed = p.enum ? `one of ${p.enum.map((e) => JSON.stringify(e)).join(", ")}` : "a string";
        throw new Error(`${path} must be ${allowed}, got ${shown}`);
      }
      return value;
    }
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new Error(`${path} must be a finite number${unit}, got ${shown}`);
    }
    if (p.type === "integer" && !Number.isInteger(value)) throw new Error(`${path} must be an integer, got ${shown}`);
    if ((p.min !== undefined && value < p.min) || (p.max !== undefined && value > p.max)) {
      throw new Error(`${path} must be from ${p.min} to ${p.max}${unit}, got ${shown}`);
    }
    return value;
  }
  return Object.freeze({
    spec,
    defaults: Object.freeze(defaults),
    /** @param {Pick<HandlerContext, "get">} ctx */
    changes(ctx) {
      /** @type {Record<string, any>} */
      const out = {};
      for (const path of Object.keys(spec)) {
        const value = ctx.get(path);
        if (value !== undefined) out[path] = check(path, value);
      }
      return out;
    },
  });
}

// ---- time -------------------------------------------------------------------------------------

/**
 * @typedef {object} FixedStep
 * @property {(simSeconds: number, dt: number) => number} advance  run the whole steps due; how many ran
 * @property {() => void} clear  drop the carried remainder (after a restart)
 */

/**
 * A fixed physics timestep, decoupled from the frame rate: `advance(simSeconds, dt)` runs
 * whole steps of `dt` and carries the remainder to the next frame. At most `maxSteps` and
 * about `budgetMs` of script time per frame; beyond that the simulation falls behind (runs
 * slower than asked) instead of dropping frames. The step itself never changes.
 * `step(dt)` returning false stops the current frame's steps (the run ended).
 * @param {(dt: number) => boolean | void} step
 * @param {number} [maxSteps]
 * @param {number} [budgetMs]
 * @returns {FixedStep}
 */
export function fixedStep(step, maxSteps = 5000, budgetMs = 6) {
  let carry = 0;
  return {
    advance(simSeconds, dt) {
      const began = performance.now();
      carry += simSeconds;
      let n = Math.floor(carry / dt);
      if (n > maxSteps) {
        n = maxSteps;
        carry = 0;
      } else {
        carry -= n * dt;
      }
      for (let i = 0; i < n; i += 1) {
        if (step(dt) === false) {
          carry = 0;
          return i + 1;
        }
        if (performance.now() - began > budgetMs) {
          carry = 0; // out of time for this frame: the rest is not simulated
          return i + 1;
        }
      }
      return n;
    },
    clear() {
      carry = 0;
    },
  };
}

// ---- numbers ----------------------------------------------------------------------------------

/**
 * `value` rounded to `digits` decimals; null for null, NaN or infinities.
 * @param {number | null | undefined} value
 * @param {number} digits
 * @returns {number | null}
 */
export function round(value, digits) {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  const r = Math.round(value * f) / f;
  return Object.is(r, -0) ? 0 : r;
}

/**
 * `value` with `digits` decimals and a typographic minus; "—" when there is none.
 * @param {number | null | undefined} value
 * @param {number} digits
 * @returns {string}
 */
export function fmt(value, digits) {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  let v = value;
  if (Math.abs(v) < 0.5 * 10 ** -digits) v = 0;
  return v.toFixed(digits).replace("-", "\u2212");
}

/**
 * About `count` round steps ("1, 2, 5 x 10^n") covering [min, max].
 * @param {number} min
 * @param {number} max
 * @param {number} count
 * @returns {{step: number, values: number[], digits: number}}  `digits`: the decimals a label needs
 */
export function ticks(min, max, count) {
  const span = Math.max(max - min, 1e-12);
  const raw = span / Math.max(1, count);
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  const step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
  const values = [];
  for (let v = Math.ceil(min / step - 1e-9) * step; v <= max + step * 1e-9; v += step) {
    values.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  }
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return { step, values, digits };
}

/**
 * A small deterministic random generator (mulberry32), so a reset replays the same start.
 * @param {number} seed
 * @returns {() => number}  uniform in [0, 1)
 */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- the parts that need a page ---------------------------------------------------------------

/**
 * A canvas sized to its CSS box times devicePixelRatio; `w`, `h` in CSS pixels.
 * @typedef {object} Surface
 * @property {HTMLCanvasElement} canvas
 * @property {CanvasRenderingContext2D} ctx  its transform maps CSS pixels to device pixels
 * @property {number} w
 * @property {number} h
 * @property {number} dpr
 */

/**
 * @typedef {object} TextOptions
 * @property {string} [font]  default FONT
 * @property {CanvasTextAlign} [align]  default "left"
 * @property {CanvasTextBaseline} [baseline]  default "middle"
 * @property {boolean} [halo]  false: no halo in the background colour
 * @property {string} [color]  default the foreground colour
 */

/**
 * A row of the info panel: the state's `key`, shown with `digits` decimals (Kit.fmt) or as
 * `format(value, state)` gives it.
 * @typedef {object} PanelRow
 * @property {string} key
 * @property {string} label
 * @property {string} [unit]
 * @property {number} [digits]  Kit.fmt(value, digits)
 * @property {(value: any, state: any) => string} [format]  default String(value), or Kit.fmt with `digits`
 */

/**
 * @typedef {object} Reporter
 * @property {(now: number) => void} tick  from the loop: report when the state changed, at most every 100 ms
 * @property {() => State} fresh  a new snapshot for a handler to return (the reply; not posted again)
 * @property {() => void} post  report a new snapshot now
 */

/**
 * The figures the loop keeps on `window`, for tests and benchmarks.
 * @typedef {object} LoopFigures
 * @property {number} __frames  frames so far
 * @property {number} __fps  the rate over the last ~2 s
 * @property {number} __fpsSpan  ms that rate was measured over
 * @property {number} __frameMs  script time per frame (simulation and drawing), an exponential average
 */

/**
 * What a page gives `Kit.run`.
 * @typedef {object} RunOptions
 * @property {Reporter} report  the page's reporter (Kit.reporter)
 * @property {(changes: Record<string, any>) => void} apply
 *   take an apply's changes: only the parameters it names, each checked (Kit.params)
 * @property {(values: Record<string, any>) => void} reset
 *   take every value after a reset (the payload's, checked, over the defaults) and start again
 * @property {(seconds: number, now: number) => void} frame
 *   one frame's simulation: `seconds` of real time (at most MAX_FRAME_S; the page scales them by
 *   its time scale) and the frame's timestamp
 * @property {() => void} draw  the whole picture, from the page's current state
 */

/**
 * What a page declares to `Kit.target`: the picture, the panel and the parameters.
 * @typedef {object} TargetSpec
 * @property {string} label  what the picture shows (the canvas's aria-label)
 * @property {string} title  the info panel's title
 * @property {PanelRow[]} rows  the info panel's rows
 * @property {(state: any) => string} [tag]  the panel's tag (time scale, mode), from each new state
 * @property {Record<string, ParamSpec>} [params]  the parameters; by default the manifest's, which the
 *   registry puts beside the kit (MANIFEST_PARAMS_SELECTOR), so that the page holds no copy of them
 */

/**
 * What `Kit.target` hands the page's setup.
 * @typedef {object} TargetParts
 * @property {Readonly<Params>} P  the checked parameters (`P.defaults`, `P.spec`)
 * @property {Surface} surface  the stage's canvas, sized for the screen
 * @property {Palette} colors  the palette (kept current)
 */

/**
 * What the page's setup returns: `RunOptions` without the reporter, plus `snapshot` and `resize`.
 * `apply` gets every parameter's value after the apply (the checked changes over the values the
 * page had), `reset` the checked payload over the defaults.
 * @typedef {object} Simulation
 * @property {() => State} snapshot  every parameter by its path and every observable
 * @property {() => void} draw
 * @property {(seconds: number, now: number) => void} frame
 * @property {(values: Record<string, any>, changes: Record<string, any>) => void} apply
 * @property {(values: Record<string, any>) => void} reset
 * @property {(surface: Surface) => void} [resize]  after the canvas changed size (not at the start)
 */

/**
 * A panel row's value as the text alternative says it: "range 35.3 m".
 * @param {string} label
 * @param {string} shown  the value as the panel shows it
 * @param {string} [unit]
 * @returns {string}
 */
export function spokenRow(label, shown, unit) {
  return `${label} ${shown}${unit && shown !== "" && shown !== "—" ? ` ${unit}` : ""}`;
}

/**
 * Insert KIT_CSS as the first element of the document's head.
 * @param {Document} doc
 * @returns {HTMLStyleElement}
 */
export function installStyle(doc) {
  const style = doc.createElement("style");
  style.dataset.splitbrainKit = "";
  style.textContent = KIT_CSS;
  const head = doc.head || doc.documentElement;
  head.insertBefore(style, head.firstChild);
  return style;
}

/** The element in which the registry gives the kit the manifest's parameters (JSON), before the kit. */
export const MANIFEST_PARAMS_SELECTOR = "script[data-splitbrain-kit-params]";

/**
 * The manifest's parameters, as the registry put them beside the kit; null when it did not.
 * @param {Document} doc
 * @returns {Record<string, ParamSpec> | null}
 */
export function manifestParams(doc) {
  const element = doc.querySelector(MANIFEST_PARAMS_SELECTOR);
  if (!element) return null;
  const parsed = JSON.parse(element.textContent ?? "");
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error("the manifest's parameters beside the kit are not an object");
  }
  return parsed;
}

/**
 * Build the kit for the page `win`: its style goes in at once, and the palette is read from it
 * (again when the page first asks for the target API and at DOMContentLoaded, by when the page's
 * own CSS is parsed, and on every colour-scheme change).
 * @param {Window & typeof globalThis} win
 */
export function createKit(win) {
  const doc = win.document;
  installStyle(doc);
  const figures = /** @type {LoopFigures} */ (/** @type {unknown} */ (win));
  /** The virtual clock of a headless page (js/page/clock.js); undefined in a notebook. */
  const headlessClock = () =>
    /** @type {{__splitbrainClock?: {unseen: boolean}}} */ (/** @type {unknown} */ (win)).__splitbrainClock;

  /**
   * `window.SplitBrain`, or a readable note in the page (and an exception) when the target API is missing.
   * @param {string} name  the target's id, for the note
   * @returns {SplitBrainApi}
   */
  function targetApi(name) {
    refreshColors();
    const api = /** @type {{SplitBrain?: SplitBrainApi}} */ (/** @type {unknown} */ (win)).SplitBrain;
    if (api) return api;
    doc.body.innerHTML = "";
    const note = doc.createElement("p");
    note.className = "sb-missing";
    note.textContent =
      `${name}: window.SplitBrain is missing. Open this target through splitbrain_widget, ` +
      "whose registry injects the target API script before the page's own scripts.";
    doc.body.appendChild(note);
    throw new Error(`${name}: window.SplitBrain is missing (the splitbrain target API was not injected)`);
  }

  // ---- colours: read from the CSS variables, re-read when the scheme changes ----
  const colors = /** @type {Palette} */ ({ dark: false });
  /** @type {((colors: Palette) => void)[]} */
  const themeListeners = [];
  const darkQuery = win.matchMedia("(prefers-color-scheme: dark)");
  function readColors() {
    const style = win.getComputedStyle(doc.documentElement);
    for (const name of COLOR_NAMES) colors[name] = style.getPropertyValue(`--${name}`).trim();
    const forced = doc.documentElement.getAttribute(THEME_ATTR);
    colors.dark = forced === "dark" || (forced !== "light" && darkQuery.matches);
  }
  /** Read the palette again; tell the listeners when it changed. */
  function refreshColors() {
    const before = JSON.stringify(colors);
    readColors();
    if (JSON.stringify(colors) !== before) for (const fn of themeListeners) fn(colors);
  }
  readColors();
  darkQuery.addEventListener("change", () => {
    readColors();
    for (const fn of themeListeners) fn(colors);
  });
  if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", refreshColors);
  /** @param {(colors: Palette) => void} fn  called after every change of the palette */
  function onTheme(fn) {
    themeListeners.push(fn);
  }

  // ---- motion: the view's word (MOTION_ATTR), else the reader's own setting ----------------------
  const motionQuery = win.matchMedia("(prefers-reduced-motion: reduce)");
  /** Whether the reader asked for reduced motion: the loop then draws twice a second, not every frame. */
  function reducedMotion() {
    return doc.documentElement.getAttribute(MOTION_ATTR) === "reduce" || motionQuery.matches;
  }
  /** @type {(() => void)[]} */
  const motionListeners = [];
  motionQuery.addEventListener("change", () => {
    for (const fn of motionListeners) fn();
  });

  /**
   * The look the page is shown in: its colour scheme and whether motion is reduced.
   * @returns {{theme: "light" | "dark", reducedMotion: boolean}}
   */
  function look() {
    return { theme: colors.dark ? "dark" : "light", reducedMotion: reducedMotion() };
  }

  // ---- the text alternative -------------------------------------------------------------------
  /**
   * A text alternative for `element` (a canvas): a visually hidden paragraph that describes what it
   * shows now, linked by `aria-describedby`, written at most every TEXT_ALTERNATIVE_INTERVAL_MS (the
   * latest text wins). Not a live region: the widget around the page announces changes when asked.
   * @param {Element} element
   * @returns {{update: (text: string) => void, text: () => string}}
   */
  function textAlternative(element) {
    const p = doc.createElement("p");
    p.className = "sb-text-alternative";
    p.id = `sb-text-${Math.random().toString(36).slice(2, 10)}`;
    (element.parentElement ?? doc.body).append(p);
    element.setAttribute("aria-describedby", p.id);
    let pending = "";
    let lastAt = -Infinity;
    /** @type {ReturnType<typeof setTimeout> | 0} */
    let timer = 0;
    const write = () => {
      timer = 0;
      lastAt = performance.now();
      if (p.textContent !== pending) p.textContent = pending;
    };
    return {
      update(text) {
        pending = text;
        if (timer) return;
        const wait = lastAt + TEXT_ALTERNATIVE_INTERVAL_MS - performance.now();
        if (wait <= 0) write();
        else timer = setTimeout(write, wait);
      },
      text: () => p.textContent ?? "",
    };
  }

  // ---- canvas ---------------------------------------------------------------------------------
  /**
   * Size `canvas` to its CSS box times devicePixelRatio; drawing stays in CSS pixels.
   * `onResize(surface)` runs after each later resize (not during this call).
   * @param {HTMLCanvasElement} canvas
   * @param {(surface: Surface) => void} [onResize]
   * @returns {Surface}
   */
  function surface(canvas, onResize) {
    const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
    /** @type {Surface} */
    const s = { canvas, ctx, w: 0, h: 0, dpr: 1 };
    function fit() {
      s.w = canvas.clientWidth;
      s.h = canvas.clientHeight;
      s.dpr = win.devicePixelRatio || 1;
      canvas.width = Math.max(1, Math.round(s.w * s.dpr));
      canvas.height = Math.max(1, Math.round(s.h * s.dpr));
      ctx.setTransform(s.dpr, 0, 0, s.dpr, 0, 0);
    }
    const refit = () => {
      if (canvas.clientWidth === s.w && canvas.clientHeight === s.h && (win.devicePixelRatio || 1) === s.dpr) return;
      fit();
      if (onResize) onResize(s);
    };
    // The first layout of a srcdoc frame can come after its scripts ran: watch the box itself.
    if (win.ResizeObserver) new win.ResizeObserver(refit).observe(canvas);
    win.addEventListener("resize", refit);
    fit();
    return s;
  }

  // ---- the loop -------------------------------------------------------------------------------
  /**
   * The animation loop: `frame(realSeconds, now, shown)` once per requestAnimationFrame, stopped while
   * the document is hidden and restarted (without a time jump) when it is visible again. With reduced
   * motion it ticks every REDUCED_MOTION_INTERVAL_MS instead, simulating the time since the last tick
   * in steps of at most MAX_FRAME_S (`shown` true for the last step only: draw then), so the physics
   * and the observables keep their pace while the picture changes twice a second.
   * window.__frames counts ticks; window.__fps is the rate over the last ~2 s; window.__frameMs
   * is the script time one tick takes (simulation and drawing, averaged).
   * @param {(seconds: number, now: number, shown: boolean) => void} frame  `seconds` is at most MAX_FRAME_S
   * @returns {{start: () => void, stop: () => void}}
   */
  function loop(frame) {
    let request = 0;
    /** @type {ReturnType<typeof setTimeout> | 0} the reduced-motion tick's timer */
    let timer = 0;
    /** @type {number | null} */
    let last = null;
    let failed = false;
    /** @type {number[]} */
    const stamps = [];
    figures.__frames = 0;
    figures.__fps = 0;
    figures.__fpsSpan = 0;
    figures.__frameMs = 0;
    function next() {
      if (reducedMotion()) timer = setTimeout(() => tick(performance.now()), REDUCED_MOTION_INTERVAL_MS);
      else request = requestAnimationFrame(tick);
    }
    /** @param {number} now */
    function tick(now) {
      request = 0;
      timer = 0;
      if (doc.hidden) return;
      figures.__frames += 1;
      stamps.push(now);
      while (stamps.length > 2 && now - stamps[0] > 2000) stamps.shift();
      const span = now - stamps[0];
      figures.__fpsSpan = span;
      figures.__fps = span > 0 ? Math.round(((stamps.length - 1) * 10000) / span) / 10 : 0;
      const reduced = reducedMotion();
      let left = last === null ? 0 : Math.min((now - last) / 1000, reduced ? MAX_REDUCED_TICK_S : MAX_FRAME_S);
      last = now;
      const began = performance.now();
      try {
        do {
          const seconds = Math.min(left, MAX_FRAME_S);
          left -= seconds;
          frame(seconds, now, left <= 1e-9);
        } while (left > 1e-9);
      } catch (err) {
        if (!failed) console.error(err);
        failed = true;
      }
      // script time per frame (ms), an exponential average: the page's own cost, whatever the fps
      figures.__frameMs += 0.05 * (performance.now() - began - figures.__frameMs);
      next();
    }
    function start() {
      if (request || timer || doc.hidden) return;
      last = null;
      stamps.length = 0;
      next();
      doc.body.dataset.running = "true";
      doc.body.dataset.motion = reducedMotion() ? "reduced" : "full";
    }
    function stop() {
      if (request) cancelAnimationFrame(request);
      if (timer) clearTimeout(timer);
      request = 0;
      timer = 0;
      doc.body.dataset.running = "false";
    }
    doc.addEventListener("visibilitychange", () => (doc.hidden ? stop() : start()));
    // the reader changed the setting: the next tick comes the new way
    motionListeners.push(() => {
      if (!request && !timer) return;
      stop();
      start();
    });
    return { start, stop };
  }

  // ---- state ----------------------------------------------------------------------------------
  /**
   * `tick(now)` from the loop reports the state when it changed, at most every 100 ms.
   * `fresh()` is for the handlers: a new snapshot, returned to the target API (which answers the
   * request with it), not posted a second time. Both keep document.body.dataset.state current.
   * @param {SplitBrainApi} SplitBrain
   * @param {() => State} snapshot
   * @param {(state: State) => void} [onState]  after every snapshot (the panel's update)
   * @returns {Reporter}
   */
  function reporter(SplitBrain, snapshot, onState) {
    let lastAt = -Infinity;
    let lastJson = "";
    /** @param {State} state */
    function record(state) {
      lastJson = JSON.stringify(state);
      doc.body.dataset.state = lastJson;
      if (onState) onState(state);
      return state;
    }
    return {
      tick(now) {
        if (now - lastAt < REPORT_INTERVAL_MS) return;
        const state = snapshot();
        if (JSON.stringify(state) === lastJson) return;
        lastAt = now;
        SplitBrain.state(record(state));
      },
      fresh() {
        lastAt = performance.now();
        return record(snapshot());
      },
      post() {
        lastAt = performance.now();
        SplitBrain.state(record(snapshot()));
      },
    };
  }

  // ---- drawing --------------------------------------------------------------------------------
  /**
   * A label: 12 px system font, a halo in the background colour so it reads over anything,
   * kept inside the canvas horizontally.
   * @param {CanvasRenderingContext2D} ctx
   * @param {string} str
   * @param {number} x
   * @param {number} y
   * @param {TextOptions} [o]
   */
  function text(ctx, str, x, y, o = {}) {
    ctx.font = o.font || FONT;
    ctx.textAlign = o.align || "left";
    ctx.textBaseline = o.baseline || "middle";
    const width = ctx.measureText(str).width;
    const left = ctx.textAlign === "center" ? x - width / 2 : ctx.textAlign === "right" ? x - width : x;
    const room = ctx.canvas.clientWidth - 4 - width;
    if (room > 4) x += Math.max(4 - left, Math.min(0, room - left));
    if (o.halo !== false) {
      ctx.lineJoin = "round";
      ctx.lineWidth = 3;
      ctx.strokeStyle = colors.halo;
      ctx.strokeText(str, x, y);
    }
    ctx.fillStyle = o.color || colors.fg;
    ctx.fillText(str, x, y);
  }

  /**
   * An arrow from (x0, y0) to (x1, y1) in CSS pixels.
   * @param {CanvasRenderingContext2D} ctx
   * @param {number} x0
   * @param {number} y0
   * @param {number} x1
   * @param {number} y1
   * @param {string} color
   * @param {number} [width]
   * @param {boolean} [dashed]
   */
  function arrow(ctx, x0, y0, x1, y1, color, width = 2, dashed = false) {
    const len = Math.hypot(x1 - x0, y1 - y0);
    if (len < 2) return;
    const ux = (x1 - x0) / len;
    const uy = (y1 - y0) / len;
    const head = Math.min(8, len * 0.45);
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = width;
    ctx.lineCap = "round";
    ctx.setLineDash(dashed ? [4, 3] : []);
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1 - ux * head * 0.8, y1 - uy * head * 0.8);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - ux * head - uy * head * 0.45, y1 - uy * head + ux * head * 0.45);
    ctx.lineTo(x1 - ux * head + uy * head * 0.45, y1 - uy * head - ux * head * 0.45);
    ctx.closePath();
    ctx.fill();
  }

  /**
   * A scale bar of a round length, at most `maxPx` long, with its length and unit.
   * @param {CanvasRenderingContext2D} ctx
   * @param {number} x  the bar's left end
   * @param {number} y  its baseline
   * @param {number} pxPerUnit
   * @param {string} unit
   * @param {number} [maxPx]
   */
  function scaleBar(ctx, x, y, pxPerUnit, unit, maxPx = 120) {
    const raw = maxPx / pxPerUnit;
    const p = 10 ** Math.floor(Math.log10(raw));
    const f = raw / p;
    const length = (f >= 5 ? 5 : f >= 2 ? 2 : 1) * p;
    const px = length * pxPerUnit;
    ctx.strokeStyle = colors.fg;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(x, y - 4);
    ctx.lineTo(x, y);
    ctx.lineTo(x + px, y);
    ctx.lineTo(x + px, y - 4);
    ctx.stroke();
    const digits = Math.max(0, -Math.floor(Math.log10(length) + 1e-9));
    text(ctx, `${fmt(length, digits)} ${unit}`, x + px / 2, y - 10, { align: "center", font: FONT_SMALL });
  }

  // ---- the info panel -------------------------------------------------------------------------
  /**
   * The panel in the top right corner: a title, a small tag (time scale, mode) and one row per
   * observable. `update(state)` refreshes the rows, `tag(str)` the tag.
   * @param {HTMLElement} element  emptied first
   * @param {string} title
   * @param {PanelRow[]} rows
   * @returns {{update: (state: any) => void, tag: (str: string) => void, spoken: () => string}}
   */
  function panel(element, title, rows) {
    element.textContent = "";
    const header = doc.createElement("header");
    const name = doc.createElement("span");
    name.textContent = title;
    const tag = doc.createElement("small");
    header.append(name, tag);
    const list = doc.createElement("dl");
    const cells = rows.map((row) => {
      const dt = doc.createElement("dt");
      dt.textContent = row.label;
      const dd = doc.createElement("dd");
      const unit = doc.createElement("dd");
      unit.className = "unit";
      unit.textContent = row.unit || "";
      list.append(dt, dd, unit);
      return { row, dd, shown: /** @type {string | null} */ (null) };
    });
    element.append(header, list);
    return {
      update(state) {
        for (const cell of cells) {
          const value = state[cell.row.key];
          const { format, digits } = cell.row;
          const shown = format ? format(value, state) : digits !== undefined ? fmt(value, digits) : String(value);
          if (shown !== cell.shown) {
            cell.dd.textContent = shown;
            cell.shown = shown;
          }
        }
      },
      tag(str) {
        if (tag.textContent !== str) tag.textContent = str;
      },
      /** the rows as a sentence: "angle 30 deg, range 35.3 m" */
      spoken: () => cells.map((c) => spokenRow(c.row.label, c.shown ?? "", c.row.unit)).join(", "),
    };
  }

  // ---- running the page -----------------------------------------------------------------------
  /**
   * Run a page the way every built-in target does. Each frame: `frame(seconds, now)`, then
   * `draw()` unless a later frame of the same headless advance draws over this one (the virtual
   * clock's `unseen`, docs/writing-targets.md), then `report.tick(now)`; `draw()` again on a
   * colour-scheme change. An apply calls `apply(changes)`, a reset `reset(values)`; each of them,
   * and a state request, answers with `report.fresh()`. Then the page is drawn, its first state
   * reported, the loop started and `SplitBrain.ready()` called, in that order.
   * @param {SplitBrainApi} SplitBrain
   * @param {Readonly<Params>} P  the page's parameters: what an apply or a reset may carry
   * @param {RunOptions} o
   * @returns {{start: () => void, stop: () => void}}  the loop (it runs already)
   */
  function run(SplitBrain, P, o) {
    const frames = loop((seconds, now, shown) => {
      o.frame(seconds, now);
      if (shown && !headlessClock()?.unseen) o.draw();
      o.report.tick(now);
    });
    onTheme(() => o.draw());
    // a change is drawn at once, also when the loop draws only twice a second (reduced motion)
    SplitBrain.onApply((values, ctx) => {
      o.apply(P.changes(ctx));
      o.draw();
      return o.report.fresh();
    });
    SplitBrain.onReset((defaults, ctx) => {
      o.reset({ ...P.defaults, ...P.changes(ctx) });
      o.draw();
      return o.report.fresh();
    });
    SplitBrain.onState(() => o.report.fresh());
    o.draw();
    o.report.post();
    frames.start();
    SplitBrain.ready();
    return frames;
  }

  // ---- the page ---------------------------------------------------------------------------------
  /**
   * The page's stage, put at the start of its body: the canvas `#view` (an image labelled `label`)
   * and the info panel `#panel`.
   * @param {string} label
   * @returns {{canvas: HTMLCanvasElement, panel: HTMLElement}}
   */
  function stage(label) {
    const div = doc.createElement("div");
    div.id = "stage";
    const canvas = doc.createElement("canvas");
    canvas.id = "view";
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", label);
    const aside = doc.createElement("aside");
    aside.id = "panel";
    aside.className = "sb-panel";
    aside.setAttribute("aria-label", "Measured quantities");
    div.append(canvas, aside);
    doc.body.prepend(div);
    if (!doc.documentElement.lang) doc.documentElement.lang = "en"; // the panel's words are English
    return { canvas, panel: aside };
  }

  /**
   * A whole page from its setup and its declaration, the way the built-in simulations are
   * written: the target API (`targetApi(name)`), the stage (canvas and info panel, in a page
   * without a `lang` an English one), the checked parameters and the canvas's surface; then
   * `setup({P, surface, colors})` builds the simulation and returns its
   * `{snapshot, draw, frame, apply, reset, resize}`; then the panel (`title`, `rows`, and
   * `tag(state)` after each report), the reporter and `run`. A page whose script stands in the
   * head (no `<body>` yet) is built at DOMContentLoaded.
   * @param {string} name  the target's id, for the note when the target API is missing
   * @param {(parts: TargetParts) => Simulation} setup
   * @param {TargetSpec} spec
   */
  function target(name, setup, spec) {
    if (!doc.body) {
      doc.addEventListener("DOMContentLoaded", () => target(name, setup, spec), { once: true });
      return;
    }
    const SplitBrain = targetApi(name);
    const declared = spec.params ?? manifestParams(doc);
    if (!declared) {
      throw new Error(`${name}: no parameters: give Kit.target a params object, or open the page through its manifest ("kit": true)`);
    }
    const parts = stage(spec.label);
    const P = params(declared);
    /** @type {Simulation["resize"]} */
    let resize;
    const surf = surface(parts.canvas, (s) => resize?.(s));
    const sim = setup({ P, surface: surf, colors });
    resize = sim.resize;
    const info = panel(parts.panel, spec.title, spec.rows);
    const words = textAlternative(parts.canvas);
    const { tag } = spec;
    const report = reporter(SplitBrain, sim.snapshot, (state) => {
      info.update(state);
      if (tag) info.tag(tag(state));
      words.update(`${spec.title}: ${info.spoken()}.`);
    });
    const { draw, frame } = sim;
    let values = { ...P.defaults };
    run(SplitBrain, P, {
      report,
      draw,
      frame,
      apply(changes) {
        values = { ...values, ...changes };
        sim.apply(values, changes);
      },
      reset(next) {
        values = next;
        sim.reset(next);
      },
    });
  }

  return Object.freeze({
    FONT, FONT_SMALL, FONT_BOLD, colors, onTheme, look, textAlternative, alpha, targetApi, surface, params, fixedStep,
    loop, reporter, round, fmt, ticks, text, arrow, scaleBar, panel, random, run, stage, target,
  });
}

/** @typedef {ReturnType<typeof createKit>} Kit */

// Configurable, so that a page's own top-level `const Kit` (an older copy of the block) shadows it
// instead of failing to declare.
if (typeof window !== "undefined" && typeof document !== "undefined") {
  Object.defineProperty(window, "Kit", { value: createKit(window), enumerable: true, configurable: true });
}
