// @ts-check
/**
 * What a screen reader hears and what the keys do (#40): the words of a change and of a chip, the
 * announcer's regions and pacing, and the notebook's look as the view reads it.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ANNOUNCE_INTERVAL_MS, createAnnouncer } from "../view/announcer.js";
import { SUPPRESS_SHORTCUTS_ATTR, keepKeys, notebookLook } from "../view/keys_and_look.js";
import { changeWords, chipOutcome, valueWords } from "../view/panel.js";

describe("words", () => {
  const parameters = {
    "pendulum.length": { type: /** @type {const} */ ("number"), unit: "m", label: "Length" },
    "display.show_trail": { type: /** @type {const} */ ("boolean") },
    "pendulum.mode": { type: /** @type {const} */ ("string") },
  };

  test("a change says each parameter that changed, by its label, with its unit", () => {
    const before = { "pendulum.length": 1, "display.show_trail": false, "pendulum.mode": "simple" };
    const after = { "pendulum.length": 2.5, "display.show_trail": true, "pendulum.mode": "simple" };
    assert.equal(changeWords(parameters, before, after), "Length 2.5 m, show_trail on");
    assert.equal(changeWords(parameters, before, before), "", "nothing changed: nothing to say");
    assert.equal(changeWords(parameters, before, after, (p) => p === "pendulum.length"), "show_trail on", "the operated control says its own");
  });

  test("values in words: booleans on / off, numbers with about four digits and their unit", () => {
    assert.equal(valueWords(true, undefined), "on");
    assert.equal(valueWords(9.80665, "m/s²"), "9.807 m/s²");
    assert.equal(valueWords("red", "m"), "red");
  });

  test("a chip says what came of its call", () => {
    assert.equal(chipOutcome("pending"), "running");
    assert.equal(chipOutcome("ok", { ok: true }), "applied");
    assert.equal(chipOutcome("ok", { ok: true, applied: false }), "kept, not applied");
    assert.equal(chipOutcome("cancelled"), "cancelled");
    assert.equal(
      chipOutcome("error", { error: { code: "invalid_value", message: "length must be from 0.1 to 10 m" } }),
      "refused (invalid_value): length must be from 0.1 to 10 m",
    );
    assert.ok(chipOutcome("error", { error: { code: "x", message: "m".repeat(500) } }).length < 200, "bounded");
  });
});

/** A document just big enough for the announcer: elements with children, text and attributes. */
function fakeDocument() {
  const element = () => {
    /** @type {any} */
    const el = {
      children: /** @type {any[]} */ ([]),
      dataset: /** @type {Record<string, string>} */ ({}),
      attributes: /** @type {Record<string, string>} */ ({}),
      textContent: "",
      className: "",
      parent: /** @type {any} */ (null),
      setAttribute(/** @type {string} */ k, /** @type {string} */ v) {
        el.attributes[k] = v;
      },
      append(/** @type {any} */ kid) {
        kid.parent = el;
        el.children.push(kid);
      },
      remove() {
        if (el.parent) el.parent.children.splice(el.parent.children.indexOf(el), 1);
      },
      get childElementCount() {
        return el.children.length;
      },
      get firstElementChild() {
        return el.children[0] ?? null;
      },
    };
    return el;
  };
  const doc = { createElement: element };
  const parent = element();
  parent.ownerDocument = doc;
  return parent;
}

describe("the announcer", () => {
  test("polite words wait for a batch, one paragraph each; a later one with the same key replaces it", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const parent = fakeDocument();
    const announcer = createAnnouncer(parent);
    const [polite, assertive] = parent.children;
    assert.deepEqual([polite.attributes.role, polite.attributes["aria-live"]], ["status", "polite"]);
    assert.deepEqual([assertive.attributes.role, assertive.attributes["aria-live"]], ["alert", "assertive"]);
    let spoken = 0;
    announcer.say("Changed: Length 1.5 m.", { key: "values" });
    announcer.say("Changed: Length 2 m.", { key: "values", onSpoken: () => (spoken += 1) });
    announcer.say("The period is 2.8 s.");
    announcer.say("refused (invalid_value): too long", { urgent: true });
    assert.deepEqual(assertive.children.map((/** @type {any} */ p) => p.textContent), ["refused (invalid_value): too long"], "at once");
    assert.equal(polite.children.length, 0, "not yet");
    t.mock.timers.tick(0);
    assert.deepEqual(polite.children.map((/** @type {any} */ p) => p.textContent), ["Changed: Length 2 m.", "The period is 2.8 s."]);
    assert.equal(spoken, 1);
    announcer.say("Changed: Length 3 m.", { key: "values" });
    t.mock.timers.tick(ANNOUNCE_INTERVAL_MS - 1);
    assert.equal(polite.children.length, 2, "at most one batch a second");
    t.mock.timers.tick(1);
    assert.equal(polite.children.length, 3);
    for (let i = 0; i < 10; i += 1) announcer.say(`n${i}`, { urgent: true });
    assert.ok(assertive.children.length <= 4, "old paragraphs go (removals are not announced)");
    announcer.dispose();
    assert.equal(parent.children.length, 0);
  });
});

describe("keys and look", () => {
  test("a control that takes focus keeps its keys from the notebook's shortcuts; Escape goes to the cell", () => {
    /** @type {Record<string, (e: any) => void>} */
    const listeners = {};
    const cell = { hasAttribute: () => true, tabIndex: -1, focused: false, focus() { this.focused = true; } };
    const root = /** @type {any} */ ({
      addEventListener: (/** @type {string} */ type, /** @type {(e: any) => void} */ fn) => (listeners[type] = fn),
      closest: (/** @type {string} */ sel) => (sel === ".jp-Cell" ? cell : null),
    });
    keepKeys(root, new AbortController().signal);
    /** @type {Record<string, string>} */
    const attrs = {};
    const slider = Object.assign(Object.create(globalThis.Element?.prototype ?? Object.prototype), {
      hasAttribute: (/** @type {string} */ k) => k in attrs,
      setAttribute: (/** @type {string} */ k, /** @type {string} */ v) => (attrs[k] = v),
    });
    if (globalThis.Element) {
      listeners.focusin({ target: slider });
      assert.equal(attrs[SUPPRESS_SHORTCUTS_ATTR], "true");
    }
    let prevented = false;
    listeners.keydown({ key: "Escape", defaultPrevented: false, preventDefault: () => (prevented = true) });
    assert.ok(cell.focused && prevented);
  });

  test("the notebook's theme from JupyterLab's body, VS Code's classes, else none; reduced motion from the page", () => {
    const doc = (/** @type {Record<string, string>} */ dataset, /** @type {string[]} */ classes, reduce = false) =>
      /** @type {any} */ ({
        body: { dataset, classList: { contains: (/** @type {string} */ c) => classes.includes(c) } },
        defaultView: { matchMedia: () => ({ matches: reduce }) },
      });
    assert.deepEqual(notebookLook(doc({ jpThemeLight: "false" }, [])), { theme: "dark", reducedMotion: false });
    assert.deepEqual(notebookLook(doc({ jpThemeLight: "true" }, [], true)), { theme: "light", reducedMotion: true });
    assert.deepEqual(notebookLook(doc({}, ["vscode-dark"])), { theme: "dark", reducedMotion: false });
    assert.deepEqual(notebookLook(doc({}, [])), { theme: "", reducedMotion: false });
  });
});
