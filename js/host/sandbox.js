// @ts-check
/**
 * The sandbox frame's module: the notebook view (../view/widget.js) puts this frame between its page and
 * the target, `<iframe sandbox="allow-scripts" srcdoc=...>` holding only this module and the target's
 * Content-Security-Policy, and the target's own sandboxed iframe inside it (./host.js, the same code
 * as the headless host page). Why a frame of its own:
 *
 * - **Floods.** Message events run on the thread of the window they are posted to. A target posts to
 *   its parent, which is now this frame, in a process of its own (sandboxed frames are isolated from
 *   the notebook page), so a page posting without pause keeps this frame busy, not the notebook page
 *   and its other widgets; and when the relay stops such a page, the view removes this whole frame,
 *   and the messages still queued for it go with it.
 * - **Navigation.** A frame's navigation is checked against its parent's policy: this frame's CSP
 *   (the target's own, so `frame-src` falls back to `default-src 'none'`) refuses every navigation
 *   of the target to a network, `data:` or `blob:` URL before any request is made. Only
 *   `about:blank` and a reload remain, and ./frame.js replaces a frame that did either.
 *
 * Wire (docs/protocol.md, section 2, *The sandbox frame*): the view posts
 * `{source: "splitbrain-view", nonce, ops}` (the first op is `{op: "create", opts}`, then the host's
 * ops); this frame posts `{source: "splitbrain-sandbox", nonce, messages?, status?, stopped?}`. The
 * nonce is this frame's `window.name`, as for a target; only messages from `window.parent` count.
 */
import { createHost } from "./host.js";
import { VIEW_SOURCE, sandboxMessage } from "../protocol.js";

const nonce = typeof window.name === "string" ? window.name : "";
window.name = "";
/** @type {ReturnType<typeof createHost> | null} */
let host = null;

/** @param {import("../protocol.js").SandboxReport} body */
function toView(body) {
  window.parent.postMessage(sandboxMessage(nonce, body), "*");
}

const listening = new AbortController();
window.addEventListener("message", (event) => {
  if (event.source !== window.parent || event.source === null) return;
  const data = event.data;
  if (typeof data !== "object" || data === null || data.source !== VIEW_SOURCE || data.nonce !== nonce) return;
  if (!Array.isArray(data.ops)) return;
  for (const op of data.ops) {
    if (op?.op === "create") {
      if (host) continue;
      host = createHost({
        ...op.opts,
        deliver: (messages) => toView({ messages }),
        onStatus: (status, detail) => toView({ status: { status, detail: detail ?? null } }),
        onStopped: (why) => {
          // After the messages the relay sent as it stopped the page (not_ready replies, the error
          // event: they go out in a microtask queued before this one). Then the view replaces this
          // frame; what the page posted meanwhile meets no listener here.
          queueMicrotask(() => {
            toView({ stopped: why });
            listening.abort();
          });
        },
      });
    } else {
      host?.run([op]);
    }
  }
}, { signal: listening.signal });
toView({ status: { status: "loading", detail: null }, hello: true });
