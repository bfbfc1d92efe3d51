// @ts-check
/**
 * One target page in a sandboxed iframe, wired to a Relay (./relay.js): the iframe creation, the
 * per-load nonce, the message listener that accepts only the iframe's own window, the ready
 * timeout and the unloading of a page that broke its message budget.
 *
 * Shared by the notebook view (../view/widget.js) and the headless host page (./host.js), so that the
 * sandbox and the checks are one implementation. Wire formats: docs/protocol.md.
 */
import { errorEvent } from "../protocol.js";
import { READY_TIMEOUT_MS, Relay } from "./relay.js";

/** Marks the target's iframe (tests find it by it: the page takes its `window.name`, the nonce). */
export const TARGET_FRAME_ATTR = "data-splitbrain-target";
/** Most times a page may leave its frame (navigate, reload itself) within LEAVE_WINDOW_MS before it is stopped. */
export const MAX_LEAVES = 5;
export const LEAVE_WINDOW_MS = 10_000;
/**
 * Most times in a row a page may leave its frame soon after it loaded (within LEAVE_WINDOW_MS) without
 * answering a request before it is stopped: a page that navigates away on every load is stopped
 * however slowly it loads (on a busy machine each load may take seconds, so the rate alone would
 * let it churn for ever). A page that answered a call, or stayed LEAVE_WINDOW_MS, before it
 * reloaded itself (an honest restart) starts the count again.
 */
export const MAX_BRIEF_LEAVES = 5;
/** How long after its frame's first load event a page's own `loaded` may come (they travel apart). */
export const LOADED_GRACE_MS = 1_000;

/**
 * @typedef {object} TargetFrame
 * @property {Relay} relay
 * @property {(why?: string) => void} load  (re)load the page in a fresh iframe with a fresh nonce
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
 * @param {boolean} [opts.focusable]  whether the frame is a tab stop (default true); a page with nothing to
 *   operate by keyboard (a canvas) is not one
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

  /**
   * A fresh iframe per page load: Chromium gives a loaded page the `name` its iframe had when it
   * was inserted, so the nonce must be set before insertion, on a new element. The page itself is
   * given after insertion (`start`): a srcdoc set before it may run its scripts before the frame
   * has its size (Chromium, a sandboxed frame: `innerHeight` 0 in 40 of 100 headless loads), and a
   * page that sizes its canvas from the window at start (`innerHeight - 20`) is then broken.
   * Inserted empty, the frame gets its initial about:blank at once, with its size; its load event
   * comes during insertion (HTML's "process the iframe attributes"; Chromium, Safari, Firefox from
   * 148; an older Firefox fires none once srcdoc is set) and is not the page's.
   * @param {string} nonce
   * @returns {{frame: HTMLIFrameElement, start: () => void}}
   */
  function freshIframe(nonce) {
    const frame = doc.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.setAttribute("title", opts.frameTitle());
    if (opts.focusable === false) frame.tabIndex = -1;
    frame.setAttribute(TARGET_FRAME_ATTR, "");
    frame.name = nonce;
    frame.style.height = `${opts.height()}px`;
    let started = false;
    // Its first load is the page; any later one is another document in the same frame (a reload, a
    // navigation to about:blank, or the error page of a navigation the policy refused): gone.
    // The page announces its own load event first (target_api.js `loaded`): a first load of the frame
    // it did not announce is a document that took the frame before the page finished loading.
    let loads = 0;
    frame.addEventListener("load", () => {
      if (!started) return; // the initial about:blank, during insertion
      loads += 1;
      if (frame !== iframe) return;
      if (loads > 1) {
        left("the target page left its frame (it navigated or reloaded itself)");
      } else if (!relay.loaded) {
        setTimeout(() => {
          if (frame === iframe && !relay.loaded) left("the target page left its frame before it finished loading");
        }, LOADED_GRACE_MS);
      }
    });
    return {
      frame,
      start() {
        started = true;
        frame.getBoundingClientRect(); // lays the frame out: its about:blank has its size now
        frame.srcdoc = opts.html();
      },
    };
  }

  /** @type {number[]} when the last pages left their frames (ms) */
  const leaves = [];
  /** how many pages in a row left their frames soon after loading, having answered nothing */
  let brief = 0;
  /** when the current page was loaded (ms) */
  let loadedAt = Date.now();
  /**
   * The frame holds another document than the page it was given. That document never counts as the
   * page and never gets its nonce: the frame is replaced by a fresh one (fresh nonce), which gets
   * every current value once ready; what the old page held answers not_ready now. A page that
   * leaves more than MAX_LEAVES times within LEAVE_WINDOW_MS, or more than MAX_BRIEF_LEAVES times
   * in a row soon after loading without answering a request, is stopped instead.
   * @param {string} why
   */
  function left(why) {
    const now = Date.now();
    while (leaves.length > 0 && now - leaves[0] > LEAVE_WINDOW_MS) leaves.shift();
    leaves.push(now);
    brief = !relay.answered && now - loadedAt < LEAVE_WINDOW_MS ? brief + 1 : 0;
    const restart = "The change is kept and applies once it is restarted";
    if (leaves.length > MAX_LEAVES) {
      relay.stop(
        `the target was stopped: it left its frame (navigated or reloaded itself) ${leaves.length} times within ` +
          `${LEAVE_WINDOW_MS / 1000} s. ${restart}`,
      );
      return;
    }
    if (brief > MAX_BRIEF_LEAVES) {
      relay.stop(
        `the target was stopped: it left its frame (navigated or reloaded itself) ${brief} times in a row ` +
          `soon after loading, without answering a call. ${restart}`,
      );
      return;
    }
    load(why);
  }

  const relay = new Relay({
    viewId,
    sendToKernel: opts.sendToKernel,
    postToTarget: (msg) => iframe.contentWindow?.postMessage(msg, "*"),
    currentValues: opts.currentValues,
    now: opts.now,
    onStopped: (why) => {
      // Unload the page (its timers and its flood end with it), and stop listening: what it posted
      // before it went may still be queued (a flood: 100,000s of events), and a window with no
      // listener takes them at the least cost (after the frame is gone their source is null).
      listening?.abort();
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
    onLeft: (why) => left(why),
  });

  /** @param {string} [why]  why the page loads again (what its requests are answered with) */
  function load(why) {
    opts.onLoad?.();
    if (relay.stopped) {
      listen(); // a restart: the stopped page's listener went with it
      leaves.length = 0;
      brief = 0;
    }
    loadedAt = Date.now();
    relay.reload(why);
    const { frame, start } = freshIframe(relay.nonce);
    iframe.replaceWith(frame);
    iframe = frame;
    start();
    if (readyTimer) clearTimeout(readyTimer);
    readyTimer = setTimeout(() => {
      if (relay.ready) return;
      const message = `the target did not call SplitBrain.ready() within ${READY_TIMEOUT_MS / 1000} s`;
      relay.onStatus("error", message);
      opts.sendToKernel(errorEvent(viewId, "not_ready", message));
    }, READY_TIMEOUT_MS);
  }

  /** @type {AbortController | null} ends the listener of the page that runs (aborted when it is stopped) */
  let listening = null;
  function listen() {
    listening?.abort();
    listening = new AbortController();
    win.addEventListener(
      "message",
      (event) => {
        // Checked before event.data is read: other frames' messages (a flood among them) cost nothing here.
        if (event.source === null || event.source !== iframe.contentWindow) return;
        relay.fromTarget(event.data, true);
      },
      { signal: listening.signal, capture: true },
    );
  }
  signal.addEventListener("abort", () => listening?.abort(), { once: true });
  listen();

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
