// @ts-check
/**
 * One target page in a sandboxed iframe, wired to a Relay (./relay.js): the iframe creation, the
 * per-load nonce, the message listener that accepts only the iframe's own window, the ready
 * timeout and the unloading of a page that broke its message budget.
 *
 * Shared by the notebook view (./widget.js) and the headless host page (./host.js), so that the
 * sandbox and the checks are one implementation. Wire formats: docs/protocol.md.
 */
import { READY_TIMEOUT_MS, Relay } from "./relay.js";

/**
 * @typedef {object} TargetFrame
 * @property {Relay} relay
 * @property {() => void} load  (re)load the page in a fresh iframe with a fresh nonce
 * @property {() => HTMLIFrameElement} iframe  the current iframe element
 * @property {() => void} dispose  stop the timers (the listener ends with `signal`)
 */

/**
 * Mount a target frame in place of `placeholder` (it is replaced on the first `load()`).
 * @param {object} opts
 * @param {HTMLIFrameElement} opts.placeholder  an element in the document, replaced by each load
 * @param {string} opts.viewId
 * @param {() => string} opts.html  the page (target API injected), read at each load
 * @param {() => string} opts.frameTitle  the iframe's title attribute
 * @param {() => number} opts.height  CSS pixels
 * @param {(msg: any) => void} opts.sendToKernel
 * @param {() => Record<string, unknown>} opts.currentValues  the `values` trait
 * @param {AbortSignal} opts.signal  ends the message listener
 * @param {(status: "loading" | "ready" | "error", detail?: string) => void} [opts.onStatus]
 * @param {() => void} [opts.onLoad]  before each load (the view hides its Restart button)
 * @param {(why: string) => void} [opts.onStopped]  after a flooding page was unloaded
 * @param {() => number} [opts.now]  the Relay's budget clock in ms (a headless host adds virtual time)
 * @param {Window} [opts.win]  where the listener goes (the document's window)
 * @returns {TargetFrame}
 */
export function mountTargetFrame(opts) {
  const { viewId, signal } = opts;
  const win = opts.win ?? window;
  const doc = opts.placeholder.ownerDocument;
  let iframe = opts.placeholder;
  /** @type {ReturnType<typeof setTimeout> | null} */
  let readyTimer = null;
  /** @type {Window | null} the page last stopped for flooding (its queued messages are dropped) */
  let stoppedWindow = null;

  /**
   * A fresh iframe per page load: Chromium gives a loaded page the `name` its iframe had when it
   * was inserted, so the nonce must be set before insertion, on a new element.
   * @param {string} nonce
   */
  function freshIframe(nonce) {
    const frame = doc.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.setAttribute("title", opts.frameTitle());
    frame.name = nonce;
    frame.style.height = `${opts.height()}px`;
    frame.srcdoc = opts.html();
    return frame;
  }

  const relay = new Relay({
    viewId,
    sendToKernel: opts.sendToKernel,
    postToTarget: (msg) => iframe.contentWindow?.postMessage(msg, "*"),
    currentValues: opts.currentValues,
    now: opts.now,
    onStopped: (why) => {
      // Unload the page (its timers and its flood end with it).
      stoppedWindow = iframe.contentWindow;
      const stoppedFrame = doc.createElement("iframe");
      stoppedFrame.setAttribute("sandbox", "");
      stoppedFrame.setAttribute("title", "stopped target");
      stoppedFrame.style.height = `${opts.height()}px`;
      iframe.replaceWith(stoppedFrame);
      iframe = stoppedFrame;
      if (readyTimer) clearTimeout(readyTimer);
      opts.onStopped?.(why);
    },
    onStatus: (s, detail) => {
      opts.onStatus?.(s, detail);
      if (s !== "loading" && readyTimer) clearTimeout(readyTimer);
    },
  });

  function load() {
    opts.onLoad?.();
    relay.reload();
    const frame = freshIframe(relay.nonce);
    iframe.replaceWith(frame);
    iframe = frame;
    if (readyTimer) clearTimeout(readyTimer);
    readyTimer = setTimeout(() => {
      if (relay.ready) return;
      const message = `the target did not call SplitBrain.ready() within ${READY_TIMEOUT_MS / 1000} s`;
      relay.onStatus("error", message);
      opts.sendToKernel({ kind: "event", view_id: viewId, type: "error", payload: { code: "not_ready", message } });
    }, READY_TIMEOUT_MS);
  }

  win.addEventListener(
    "message",
    (event) => {
      // What a stopped page posted before it was unloaded may still be queued (a flood: 100,000s of
      // events): end each one here, in the capture phase, before any other listener of the page.
      if (event.source !== null && event.source === stoppedWindow) {
        event.stopImmediatePropagation();
        return;
      }
      // Checked before event.data is read: other frames' messages (a flood among them) cost nothing here.
      if (event.source === null || event.source !== iframe.contentWindow) return;
      relay.fromTarget(event.data, true);
    },
    { signal, capture: true },
  );

  return {
    relay,
    load,
    iframe: () => iframe,
    dispose() {
      if (readyTimer) clearTimeout(readyTimer);
      readyTimer = null;
      relay.dispose();
    },
  };
}
