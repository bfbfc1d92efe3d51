// @ts-check
/**
 * The notebook view's side of its sandbox frame (../host/sandbox.js): the frame itself, the ops the view
 * posts into it, and the messages it posts back, which go to the kernel. The relay and the target's
 * iframe run inside the frame (../host/host.js); the view knows the target only through it.
 *
 * The frame is `<iframe sandbox="allow-scripts">` loaded from the `_sandbox` trait (the module and
 * the target's policy, assembled by the registry), named with a nonce of its own; only messages from
 * that frame's window with that nonce count. Ops posted before the frame said hello wait here (a
 * message posted to a frame still loading goes to its initial empty document, and is lost).
 *
 * When the relay stops a flooding page, the view replaces the whole frame by an empty one: what the
 * page posted and the frame has not handled yet goes with it. The view itself then answers the
 * kernel's requests with `not_ready` until the target is restarted.
 */
import {
  SANDBOX_SOURCE,
  errorReplyMessage,
  isKernelRequest,
  kernelRequest,
  makeNonce,
  pictureProblem,
  viewOpsMessage,
  withLook,
} from "../protocol.js";

/** The ids of the view's own snapshot requests start with this (the kernel's start with "r"). */
export const VIEW_PICTURE_PREFIX = "view-picture-";
/** How long the view waits for its page's picture. */
export const PICTURE_TIMEOUT_MS = 10_000;

/** The largest batch of messages the view takes from its sandbox frame in one post. */
const MAX_BATCH = 10_000;

/**
 * @typedef {object} Sandbox
 * @property {() => void} load  (re)create the frame and its target: fresh frame, fresh nonces
 * @property {() => void} reloadTarget  the target's page changed (`_html`): load it in the same frame
 * @property {(msg: unknown) => void} fromKernel  a custom message from the kernel
 * @property {() => void} valuesChanged  the `values` trait changed
 * @property {() => void} setHeight  the `height` trait changed
 * @property {() => boolean} targetReady  whether the target said ready (and was not lost since)
 * @property {() => Promise<import("../protocol.js").Picture | null>} snapshot  the page's picture of itself
 *   (1.8), asked by the view itself; null when the page gave none (no canvas, a forged one, stopped)
 * @property {() => HTMLIFrameElement} iframe  the sandbox frame's element
 * @property {() => void} dispose
 */

/**
 * @param {object} opts
 * @param {HTMLIFrameElement} opts.placeholder  an element in the document, replaced by each load
 * @param {string} opts.viewId
 * @param {import("../host/relay.js").Model} opts.model
 * @param {AbortSignal} opts.signal  ends the message listener
 * @param {() => void} [opts.onLoad]  before each load
 * @param {(status: "loading" | "ready" | "error", detail?: string) => void} [opts.onStatus]
 * @param {(why: string) => void} [opts.onStopped]  the target was stopped (its frame is gone)
 * @param {() => import("../protocol.js").Look} [opts.look]  the notebook's theme and motion, given to each page load
 * @returns {Sandbox}
 */
export function mountSandbox(opts) {
  const { model, viewId } = opts;
  const doc = opts.placeholder.ownerDocument;
  let frame = opts.placeholder;
  let nonce = "";
  let hello = false;
  let ready = false;
  /** why the target is stopped ("" while it runs) */
  let stopped = "";
  /** @type {unknown[]} ops waiting for the frame's hello */
  let waiting = [];
  /** the view's own snapshot requests, by id: their replies are the view's, never the kernel's */
  const pictures = new Map();
  let pictureCount = 0;

  const height = () => `${model.get("height") ?? 420}px`;
  const title = () => String(model.get("manifest")?.title ?? model.get("target_id") ?? "simulation");
  /** the target's page, told how the notebook looks */
  const page = () => withLook(model.get("_html") ?? "", opts.look?.() ?? {});
  /** A page with controls of its own (a bound page) is a tab stop; a canvas is not (nothing to operate). */
  const focusable = () => Boolean(model.get("manifest")?.operable);

  /** @param {unknown[]} ops */
  function post(...ops) {
    if (stopped) return;
    if (!hello) {
      waiting.push(...ops);
      return;
    }
    frame.contentWindow?.postMessage(viewOpsMessage(nonce, ops), "*");
  }

  function load() {
    opts.onLoad?.();
    nonce = makeNonce();
    hello = false;
    ready = false;
    stopped = "";
    const fresh = doc.createElement("iframe");
    fresh.setAttribute("sandbox", "allow-scripts");
    fresh.setAttribute("referrerpolicy", "no-referrer");
    fresh.setAttribute("title", title());
    if (!focusable()) fresh.tabIndex = -1;
    fresh.name = nonce;
    fresh.style.height = height();
    fresh.srcdoc = model.get("_sandbox") ?? "";
    frame.replaceWith(fresh);
    frame = fresh;
    waiting = [
      {
        op: "create",
        opts: {
          viewId,
          html: page(),
          values: model.get("values") ?? {},
          height: model.get("height") ?? 420,
          title: title(),
          focusable: focusable(),
        },
      },
    ];
    opts.onStatus?.("loading");
  }

  /** @param {string} why */
  function stop(why) {
    stopped = why;
    ready = false;
    waiting = [];
    const empty = doc.createElement("iframe");
    empty.setAttribute("sandbox", "");
    empty.setAttribute("title", "stopped target");
    empty.style.height = height();
    frame.replaceWith(empty);
    frame = empty;
    opts.onStopped?.(why);
  }

  window.addEventListener(
    "message",
    (event) => {
      // Checked before event.data is read: other frames' messages cost nothing here.
      if (event.source === null || event.source !== frame.contentWindow) return;
      const data = event.data;
      if (typeof data !== "object" || data === null || data.source !== SANDBOX_SOURCE || data.nonce !== nonce) return;
      if (data.hello === true && !hello) {
        hello = true;
        const ops = waiting;
        waiting = [];
        post(...ops);
      }
      if (Array.isArray(data.messages)) {
        for (const msg of data.messages.slice(0, MAX_BATCH)) {
          if (typeof msg !== "object" || msg === null || typeof msg.kind !== "string") continue;
          if (msg.kind === "reply" && pictures.has(msg.id)) {
            const done = pictures.get(msg.id);
            pictures.delete(msg.id);
            done(msg.ok === true && pictureProblem(msg.picture) === null ? msg.picture : null);
            continue;
          }
          if (msg.kind === "event" && msg.type === "ready") ready = true;
          model.send(msg);
        }
      }
      const status = data.status;
      if (status && typeof status === "object" && ["loading", "ready", "error"].includes(status.status)) {
        if (status.status !== "ready") ready = false;
        opts.onStatus?.(status.status, typeof status.detail === "string" ? status.detail : undefined);
      }
      if (typeof data.stopped === "string") stop(data.stopped.slice(0, 2000));
    },
    { signal: opts.signal },
  );

  return {
    load,
    reloadTarget() {
      if (stopped) return load(); // a stopped target's frame is gone: a new page starts afresh
      frame.setAttribute("title", title()); // another target (select_target) under the same policy
      post({ op: "reload", html: page() });
    },
    fromKernel(msg) {
      if (!stopped) {
        post({ op: "send", msg });
      } else if (isKernelRequest(msg)) {
        // the target and its frame are gone: the kernel keeps the change, the restarted page gets it
        model.send(errorReplyMessage(/** @type {{id: string}} */ (msg).id, viewId, "not_ready", stopped));
      }
    },
    valuesChanged: () => post({ op: "values", values: model.get("values") ?? {} }),
    setHeight() {
      frame.style.height = height();
      post({ op: "height", px: model.get("height") ?? 420 });
    },
    targetReady: () => ready,
    snapshot() {
      if (stopped || !ready) return Promise.resolve(null);
      pictureCount += 1;
      const id = `${VIEW_PICTURE_PREFIX}${viewId}-${pictureCount}`;
      return new Promise((resolve) => {
        pictures.set(id, resolve);
        post({ op: "send", msg: kernelRequest(id, "snapshot") });
        setTimeout(() => {
          if (pictures.delete(id)) resolve(null); // no answer: the page is busy or gone
        }, PICTURE_TIMEOUT_MS);
      });
    },
    iframe: () => frame,
    dispose() {
      stopped = "the view was removed";
      waiting = [];
    },
  };
}
