// @ts-check
/**
 * The module of an exported page (`sim.to_html()`, splitbrain_widget/features/_export.py): the
 * notebook view's own `render` on a local model (./local_model.js) made from the widget's traits,
 * which the page holds as JSON in a data block. The target runs in the same sandbox frame as in a
 * notebook, under the same policy; the inspector's controls steer it; no kernel, no network.
 */
import widget from "../view/widget.js";
import { createLocalModel } from "./local_model.js";

/** The id of the data block holding the traits. */
export const EXPORT_DATA_ID = "splitbrain-export-data";

const block = document.getElementById(EXPORT_DATA_ID);
const data = JSON.parse(block?.textContent ?? "{}");
const model = createLocalModel(data.traits ?? {});
const el = document.createElement("main");
el.setAttribute("aria-label", String(data.traits?.manifest?.title ?? "simulation"));
document.body.append(el);
widget.render({ model, el });
// what the page holds and answered, for a reader's console (and the tests): read-only
Object.defineProperty(window, "splitbrainExport", {
  value: Object.freeze({ values: () => model.get("values"), state: () => model.get("state"), answered: model.answered }),
});
// the panel's conversation has no assistant here: only its inspector (parameters, actions, observables)
const style = document.createElement("style");
style.textContent = `.sb-panel-head, .sb-log, .sb-banners, .sb-input { display: none !important; }
body { margin: 0; padding: 8px; font-family: system-ui, sans-serif; }`;
document.head.append(style);

/**
 * @typedef {object} ReplayStep  one step of the session (splitbrain_widget/core/_to_code.py replay_steps)
 * @property {string} label  what caused it: "chat: make it red → color = 'red'"
 * @property {Record<string, unknown>} values  every value after it
 * @property {string} [action]  the action the page ran at this step
 */

/** @type {ReplayStep[]} */
const steps = Array.isArray(data.traits?.replay) ? data.traits.replay : [];
if (steps.length > 1) mountReplay(steps);

/**
 * The replay: the session's changes as steps; choosing one puts the page at its values (and runs its
 * action, if it ran one). It opens at the last step, where the widget was when it was exported.
 * @param {ReplayStep[]} list
 */
function mountReplay(list) {
  const section = document.createElement("section");
  section.className = "sb-replay";
  section.setAttribute("aria-labelledby", "sb-replay-heading");
  section.innerHTML =
    '<h2 id="sb-replay-heading">Replay: the session\'s changes</h2>' +
    '<div class="sb-replay-nav"><button type="button" data-go="-1">Previous</button>' +
    '<button type="button" data-go="1">Next</button><span class="sb-replay-now" role="status"></span></div><ol></ol>';
  const olist = /** @type {HTMLOListElement} */ (section.querySelector("ol"));
  const now = /** @type {HTMLElement} */ (section.querySelector(".sb-replay-now"));
  const buttons = list.map((step, index) => {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = step.label;
    button.addEventListener("click", () => go(index));
    item.append(button);
    olist.append(item);
    return button;
  });
  let at = list.length - 1;
  let actions = 0;
  /** @param {number} index */
  function go(index) {
    at = Math.max(0, Math.min(list.length - 1, index));
    const step = list[at];
    model.set("values", { ...step.values });
    if (step.action) {
      actions += 1;
      model.emit("msg:custom", { kind: "request", id: `replay-${actions}`, op: "action", payload: { name: step.action } });
    }
    show();
  }
  function show() {
    buttons.forEach((b, i) => (i === at ? b.setAttribute("aria-current", "step") : b.removeAttribute("aria-current")));
    now.textContent = `Step ${at + 1} of ${list.length}: ${list[at].label}`;
    section.dataset.step = String(at);
  }
  for (const nav of section.querySelectorAll("[data-go]")) {
    nav.addEventListener("click", () => go(at + Number(/** @type {HTMLElement} */ (nav).dataset.go)));
  }
  show();
  const css = document.createElement("style");
  css.textContent = `.sb-replay { margin-top: 12px; font-size: 14px; }
.sb-replay h2 { font-size: 15px; margin: 4px 0; }
.sb-replay-nav { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
.sb-replay button { font: inherit; min-height: 24px; }
.sb-replay li button[aria-current] { font-weight: 600; outline: 2px solid #1565c0; }`;
  document.head.append(css);
  el.after(section);
}
