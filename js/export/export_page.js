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
// the panel's conversation has no assistant here: only its inspector (parameters, actions, observables)
const style = document.createElement("style");
style.textContent = `.sb-panel-head, .sb-log, .sb-banners, .sb-input { display: none !important; }
body { margin: 0; padding: 8px; font-family: system-ui, sans-serif; }`;
document.head.append(style);
