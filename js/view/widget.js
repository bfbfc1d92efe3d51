// @ts-check
/**
 * The view: a target page in a sandbox frame of its own (./view_sandbox.js, which runs the relay and
 * the target's iframe, ../host/host.js, as the headless host page does), with the status bar and the chat
 * panel (./panel.js).
 *
 * Wire formats: docs/protocol.md. Shapes and validators: ../protocol.js.
 */
import { PANEL_STYLE, changeWords, mountObservables, mountPanel } from "./panel.js";
import { attachedEvent, detachedEvent, makeNonce, pictureMessage, readyEvent, visibilityEvent } from "../protocol.js";
import { SR_ONLY_STYLE, createAnnouncer } from "./announcer.js";
import { mountSandbox } from "./view_sandbox.js";
import { keepKeys, notebookLook, watchLook } from "./keys_and_look.js";


/** @typedef {import("../host/relay.js").Model} Model */

/** How long the page must go without a change before its picture is taken (ms). */
export const PICTURE_SETTLE_MS = 500;
/** The fewest ms between two pictures of one view. */
export const PICTURE_INTERVAL_MS = 1000;

const STYLE = `
.splitbrain-view { font-family: var(--jp-ui-font-family, system-ui, sans-serif); color: var(--jp-ui-font-color1, #222);
  border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px; overflow: hidden; background: var(--jp-layout-color1, #fff); }
.splitbrain-view iframe { display: block; width: 100%; border: 0; background: transparent; }
.splitbrain-view iframe:focus-visible, .splitbrain-view iframe:focus { outline: 2px solid var(--jp-brand-color1, #1976d2); outline-offset: -2px; }
.splitbrain-view .sb-measured { border-top: 1px solid var(--jp-border-color2, #ddd); }
.splitbrain-view .sb-measured:has(.sb-observables[hidden]) { display: none; }
.splitbrain-view .sb-measured .sb-observables { border-top: 0; }
.splitbrain-status { display: flex; gap: .5em; align-items: center; font-size: var(--jp-ui-font-size1, 13px);
  padding: 3px 8px; border-top: 1px solid var(--jp-border-color2, #ddd); background: var(--jp-layout-color2, #f5f5f5); }
.splitbrain-status .sb-title { font-weight: 600; }
.splitbrain-status .sb-restart { margin-left: auto; font: inherit; cursor: pointer; }
.splitbrain-status .sb-dot { width: .6em; height: .6em; border-radius: 50%; background: #bbb; flex: none; }
.splitbrain-status[data-status="ready"] .sb-dot { background: #2e9d4d; }
.splitbrain-status[data-status="error"] .sb-dot { background: #d33; }
.splitbrain-status[data-status="error"] .sb-detail { color: var(--jp-error-color1, #d33); }
`;

/**
 * @param {{ model: Model, el: HTMLElement }} props
 * @returns {() => void} cleanup
 */
function render({ model, el }) {
  const controller = new AbortController();
  const { signal } = controller;
  const viewId = `v-${makeNonce().slice(0, 16)}`;

  const root = document.createElement("div");
  root.className = "splitbrain-view";
  const style = document.createElement("style");
  style.textContent = STYLE + PANEL_STYLE + SR_ONLY_STYLE;
  const iframe = document.createElement("iframe");
  const status = document.createElement("div");
  status.className = "splitbrain-status";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  status.innerHTML =
    '<span class="sb-dot"></span><span class="sb-title"></span><span class="sb-detail"></span>' +
    '<button type="button" class="sb-restart" hidden>Restart target</button>';
  const titleEl = /** @type {HTMLElement} */ (status.querySelector(".sb-title"));
  const detailEl = /** @type {HTMLElement} */ (status.querySelector(".sb-detail"));
  const restart = /** @type {HTMLButtonElement} */ (status.querySelector(".sb-restart"));
  const showTitle = () => {
    titleEl.textContent = model.get("manifest")?.title ?? model.get("target_id") ?? "";
  };
  const layout = document.createElement("div");
  layout.className = "sb-layout";
  const targetBox = document.createElement("div");
  targetBox.className = "sb-target";
  targetBox.append(iframe, status);
  layout.append(targetBox);
  root.append(style, layout);
  // Keys pressed in the widget stay in it (no notebook shortcut fires); Escape gives focus back to the cell.
  keepKeys(root, signal);
  const announcer = createAnnouncer(root);
  // What the page measures, in words: in the chat panel when it shows, else under the target.
  /** @type {(() => void) | null} */
  let unmountMeasured = null;
  const measuredBox = document.createElement("div");
  measuredBox.className = "sb-measured";
  const showMeasured = (/** @type {boolean} */ shown) => {
    if (shown && !unmountMeasured) {
      targetBox.append(measuredBox);
      unmountMeasured = mountObservables(measuredBox, model, signal, announcer);
    } else if (!shown && unmountMeasured) {
      unmountMeasured();
      unmountMeasured = null;
      measuredBox.replaceChildren();
      measuredBox.remove();
    }
  };

  /** @type {(() => void) | null} */
  let unmountPanel = null;
  const onChatEnabled = () => {
    const wanted = Boolean(model.get("chat_enabled"));
    if (wanted && !unmountPanel) {
      showMeasured(false);
      layout.style.setProperty("--sb-panel-height", `${(model.get("height") ?? 420) + 30}px`);
      unmountPanel = mountPanel(layout, model, signal, announcer);
    } else if (!wanted && unmountPanel) {
      unmountPanel();
      unmountPanel = null;
    }
    if (!wanted) showMeasured(true);
  };

  el.append(root);

  const sandbox = mountSandbox({
    placeholder: iframe,
    viewId,
    model,
    signal,
    look: () => notebookLook(document),
    onLoad: () => {
      restart.hidden = true;
      showTitle();
      root.dataset.target = model.get("target_id") ?? "";
    },
    // The page was unloaded for flooding: offer a restart.
    onStopped: () => {
      restart.hidden = false;
    },
    onStatus: (s, detail) => {
      status.dataset.status = s;
      detailEl.textContent = detail ?? (s === "loading" ? "loading…" : s);
      root.dataset.status = s;
      if (s === "ready") schedulePicture(); // a new page (a reload, another target) is a change too
    },
  });
  const loadPage = () => sandbox.load();

  restart.addEventListener("click", () => loadPage(), { signal });
  /** @param {any} msg */
  const onCustom = (msg) => sandbox.fromKernel(msg);
  const onHtml = () => sandbox.reloadTarget();
  const onSandbox = () => loadPage();
  // Every applied change, whoever made it (the agent, Python, an MCP client, another view), is said once:
  // the values the kernel holds, against those last announced; not the one control being operated here.
  let announced = { ...(model.get("values") ?? {}) };
  const announceChanges = () => {
    const now = { ...(model.get("values") ?? {}) };
    const focused = /** @type {HTMLElement | null} */ (root.contains(document.activeElement) ? document.activeElement : null);
    const operated = focused?.closest("[data-path]")?.getAttribute("data-path");
    // a path the last announcement did not know is another target's (select_target): its page says itself
    const skip = (/** @type {string} */ path) => path === operated || !(path in announced);
    const words = changeWords(model.get("manifest")?.parameters ?? {}, announced, now, skip);
    if (words) announcer.say(`Changed: ${words}.`, { key: "values", onSpoken: () => (announced = now) });
    else announced = now;
  };
  // The notebook's saved outputs keep the simulation's picture (protocol 1.8): after the page settles
  // from a change (PICTURE_SETTLE_MS with no other), at most once every PICTURE_INTERVAL_MS, the page
  // takes its picture and the kernel keeps it (the notebook server writes it into the output on save).
  /** @type {ReturnType<typeof setTimeout> | null} */
  let pictureTimer = null;
  let lastPicture = 0;
  const schedulePicture = () => {
    if (!model.get("_snapshots")) return;
    if (pictureTimer) clearTimeout(pictureTimer);
    const wait = Math.max(PICTURE_SETTLE_MS, lastPicture + PICTURE_INTERVAL_MS - Date.now());
    pictureTimer = setTimeout(async () => {
      pictureTimer = null;
      lastPicture = Date.now();
      const picture = await sandbox.snapshot();
      if (picture && !signal.aborted) {
        try {
          model.send(pictureMessage(viewId, picture));
        } catch {
          // the comm may be closed (the kernel restarted)
        }
      }
    }, wait);
  };
  signal.addEventListener("abort", () => pictureTimer && clearTimeout(pictureTimer));
  const onValues = () => {
    sandbox.valuesChanged();
    announceChanges();
    schedulePicture();
  };
  const onHeight = () => sandbox.setHeight();
  model.on("msg:custom", onCustom);
  model.on("change:_html", onHtml);
  model.on("change:_sandbox", onSandbox);
  model.on("change:height", onHeight);
  model.on("change:manifest", showTitle); // select_target: another page in the same frame
  model.on("change:chat_enabled", onChatEnabled);
  model.on("change:values", onValues);
  const detach = () => model.send(detachedEvent(viewId));
  window.addEventListener("pagehide", detach, { signal });
  // The notebook's page in the background (protocol 1.6): the kernel is told, so a call that needs the
  // page's clock answers page_hidden instead of waiting; back in front, the target is checked against
  // the values (the kernel sends the trait again too, answered by onValues).
  /**
   * @param {boolean} visible
   * @param {import("../protocol.js").VisibilityCause} cause
   */
  const tellVisibility = (visible, cause) => {
    try {
      model.send(visibilityEvent(viewId, visible, cause));
    } catch {
      // the comm may be closed (the kernel restarted): the next render attaches again
    }
    if (visible) onValues();
  };
  document.addEventListener("visibilitychange", () => tellVisibility(!document.hidden, "visibilitychange"), { signal });
  document.addEventListener("freeze", () => tellVisibility(false, "freeze"), { signal });
  document.addEventListener("resume", () => tellVisibility(!document.hidden, "resume"), { signal });
  const attach = () => model.send(attachedEvent(viewId, navigator.userAgent.slice(0, 200), !document.hidden));
  window.addEventListener(
    "pageshow",
    (event) => {
      // Back from the back-forward cache: its pagehide detached this view, so it attaches again (with
      // its target's ready, the page being as it was) and catches the target up.
      if (!event.persisted) return;
      attach();
      if (sandbox.targetReady()) model.send(readyEvent(viewId));
      onValues();
    },
    { signal },
  );

  // The notebook's theme and reduced motion reach the page: a change loads it again with the current values.
  watchLook(document, signal, () => sandbox.reloadTarget());

  loadPage();
  onChatEnabled();
  attach();

  return () => {
    controller.abort();
    model.off("msg:custom", onCustom);
    model.off("change:_html", onHtml);
    model.off("change:_sandbox", onSandbox);
    model.off("change:height", onHeight);
    model.off("change:manifest", showTitle);
    model.off("change:chat_enabled", onChatEnabled);
    model.off("change:values", onValues);
    unmountPanel?.();
    unmountMeasured?.();
    announcer.dispose();
    sandbox.dispose();
    try {
      detach();
    } catch {
      // the comm may already be closed
    }
    root.remove();
  };
}

export default { render };
