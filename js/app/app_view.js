// @ts-check
/**
 * The MCP App view: a target as a chat renders it (MCP Apps, spec 2026-01-26). The MCP server serves
 * this module in the `ui://splitbrain/<widget>` resource (splitbrain_widget/mcp/_apps.py), in a
 * document of ours with the target's policy, the target's page assembled as the registry assembles
 * it, and the widget's tools as data (`#splitbrain-app`). The page runs in a sandboxed frame inside
 * this document, hosted by the same code as a notebook view's sandbox frame and a headless page
 * (../host/host.js: the relay, the nonce, the message budget), never in this document: the chat host
 * accepts messages from this window only, so the page's own code cannot call tools or write into the
 * conversation.
 *
 * Towards the host it speaks JSON-RPC over postMessage (`window.parent`, checked as `event.source`):
 * `ui/initialize`, then `ui/notifications/initialized`; it takes `tool-input`, `tool-result`,
 * `tool-cancelled`, `host-context-changed` (theme, container size) and `ui/resource-teardown` (answered
 * once the page is stopped), and sends `ui/update-model-context` (the page's state after each change)
 * and `ui/notifications/size-changed`.
 *
 * Towards the server it has only the tool calls its host passes on (`hostCapabilities.serverTools`):
 * `splitbrain_app_attach` makes it a view of the widget, and `splitbrain_app_sync` carries its
 * messages (replies, events) up and the widget's requests down, waiting for one when it has nothing to
 * say (a long poll). What the model asked (`tool-input`) is shown; what the page applies is the
 * request the server validated, so units, ranges and approval hold as in the notebook. Where the host
 * calls an App's own tools (`appCapabilities.tools`, the draft extension), `tools/list` answers the
 * widget's tools with the server's schemas, and `tools/call` runs the server's tool of that name.
 */
import { createHost } from "../host/host.js";
import { errorText, withLook } from "../protocol.js";

/** The MCP Apps protocol version this view speaks. */
export const APP_PROTOCOL_VERSION = "2026-01-26";
export const ATTACH_TOOL = "splitbrain_app_attach";
export const SYNC_TOOL = "splitbrain_app_sync";
/** The id of the data block the server writes (splitbrain_widget/manifest/_page.py APP_DATA_ID). */
export const DATA_ID = "splitbrain-app";
/** Messages one sync carries up at most (the server's MAX_MESSAGES). */
export const MAX_BATCH = 256;
/** How long a request to the host may take, in ms (a long poll is answered within its own wait). */
export const REQUEST_TIMEOUT_MS = 60_000;
/** The page's state goes to the model at most this often (ms); the last one always goes. */
export const CONTEXT_INTERVAL_MS = 1_000;
/** Characters of state put in the model's context as text. */
export const CONTEXT_CHARS = 4_000;
/**
 * The page's own state reports go up to the server at most this often (ms), the latest one; replies
 * at once. Within BUSY_MS of a request (a seek waits for the page to settle), as often as the relay
 * forwards them (every 100 ms).
 */
export const STATE_UP_INTERVAL_MS = 1_000;
export const BUSY_STATE_INTERVAL_MS = 100;
export const BUSY_MS = 5_000;
/** How long the poll loop waits for the replies to the requests it took before it polls again (ms). */
export const REPLY_WAIT_MS = 2_000;
/** How long a view waits before it sends again what the server did not take (ms). */
export const PUSH_RETRY_MS = 1_000;
/** How long a teardown waits for the server to hear that the view went (ms). */
export const TEARDOWN_FLUSH_MS = 2_000;

/**
 * @typedef {object} AppData  what the server writes into the document
 * @property {string} widget  the widget's id on the server (tools are `<widget>__<tool>`)
 * @property {string} target  the target whose page `html` is
 * @property {string} uri  this resource's own `ui://` URI (read again when the widget switches target)
 * @property {string} title
 * @property {string} html  the target's page, as the registry assembles it
 * @property {number} height
 * @property {Record<string, unknown>} values  the values when the resource was read
 * @property {number} poll_s  how long one sync may wait on the server
 * @property {string} page_data_note  how the model is told that the page's data is data
 * @property {string[] | null} [observables]  what the lesson lets the model read of the page (null: all)
 * @property {{name: string, description?: string, inputSchema: Record<string, unknown>}[]} tools
 */

/** Where else in a state an observable may sit (splitbrain_widget/features/_observables.py NESTS). */
const NESTS = ["observables", "values", "params"];

/**
 * The page's state as the model may read it: the parameters' values and the observables the lesson
 * lets callers read (`readable`; null: every one), at the top or under observables / values / params.
 * The translation of splitbrain_widget/agent/_reads.py `only`.
 * @param {Record<string, unknown>} state
 * @param {string[] | null | undefined} readable
 * @param {Record<string, unknown>} values  the parameters' values (their paths are always readable)
 * @returns {Record<string, unknown>}
 */
export function readableState(state, readable, values) {
  if (!Array.isArray(readable)) return state;
  /** @param {string} key */
  const kept = (key) => readable.includes(key) || Object.hasOwn(values, key);
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [key, value] of Object.entries(state)) {
    if (kept(key)) out[key] = value;
    else if (NESTS.includes(key) && value && typeof value === "object" && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).filter(([inner]) => kept(inner)));
    }
  }
  return out;
}

/** A JSON-RPC error the other side answered with. */
export class RpcError extends Error {
  /** @param {{code?: unknown, message?: unknown}} error */
  constructor(error) {
    super(typeof error?.message === "string" ? error.message : "JSON-RPC error");
    this.code = typeof error?.code === "number" ? error.code : -32603;
  }
}

/**
 * JSON-RPC 2.0 over one postMessage peer: requests with ids and deadlines, notifications, and the
 * handlers of the other side's requests and notifications.
 * @param {(message: Record<string, unknown>) => void} post
 * @param {Record<string, (params: any) => unknown>} handlers
 */
export function createRpc(post, handlers) {
  let next = 1;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
  const waiting = new Map();

  /** @param {Record<string, unknown>} message */
  const send = (message) => post({ jsonrpc: "2.0", ...message });

  return {
    /**
     * @param {string} method
     * @param {unknown} params
     * @param {number} [timeoutMs]
     * @returns {Promise<any>}
     */
    request(method, params, timeoutMs = REQUEST_TIMEOUT_MS) {
      const id = next++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`${method}: the host did not answer within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        waiting.set(id, {
          resolve: (value) => (clearTimeout(timer), resolve(value)),
          reject: (err) => (clearTimeout(timer), reject(err)),
        });
        send({ id, method, params });
      });
    },
    /**
     * @param {string} method
     * @param {unknown} [params]
     */
    notify(method, params) {
      send(params === undefined ? { method } : { method, params });
    },
    /** @param {unknown} data  a message from the peer (anything else is ignored) */
    async receive(data) {
      if (typeof data !== "object" || data === null) return;
      const message = /** @type {Record<string, any>} */ (data);
      if (message.jsonrpc !== "2.0") return;
      if (typeof message.method !== "string") {
        const entry = waiting.get(message.id);
        if (!entry) return;
        waiting.delete(message.id);
        if (message.error) entry.reject(new RpcError(message.error));
        else entry.resolve(message.result);
        return;
      }
      const handler = Object.prototype.hasOwnProperty.call(handlers, message.method) ? handlers[message.method] : null;
      const isRequest = message.id !== undefined && message.id !== null;
      if (!isRequest) {
        try {
          await handler?.(message.params ?? {});
        } catch (err) {
          console.error(`splitbrain app: ${message.method}: ${errorText(err)}`);
        }
        return;
      }
      if (!handler) {
        send({ id: message.id, error: { code: -32601, message: `method not found: ${message.method}` } });
        return;
      }
      try {
        send({ id: message.id, result: (await handler(message.params ?? {})) ?? {} });
      } catch (err) {
        send({ id: message.id, error: { code: -32603, message: errorText(err) } });
      }
    },
  };
}

/**
 * The page with its `<html>` saying the host's theme (the kit's look follows it): the registry's page
 * opens with its doctype (if any), then `<html><head>` of ours (manifest/_page.py `_before_page`).
 * @param {string} html
 * @param {unknown} theme
 */
export function themed(html, theme) {
  return theme === "light" || theme === "dark" ? withLook(html, { theme }) : html;
}

/**
 * A tool call's structured answer, or an error that says what the server said.
 * @param {any} result  a CallToolResult
 * @param {string} tool
 * @returns {Record<string, any>}
 */
export function structured(result, tool) {
  const body = result?.structuredContent;
  if (body && typeof body === "object") return body;
  const text = Array.isArray(result?.content) ? result.content.find((/** @type {any} */ c) => c?.type === "text")?.text : undefined;
  return { ok: false, error: { code: "internal_error", message: `${tool}: ${text ?? "no structured answer"}` } };
}

/**
 * Run the App view in this document.
 * @param {AppData} data
 */
export function startAppView(data) {
  const doc = document;
  const status = doc.createElement("div");
  status.setAttribute("data-splitbrain-app-status", "");
  status.style.cssText = "font:12px system-ui,sans-serif;padding:2px 6px;opacity:.75;white-space:nowrap;overflow:hidden;text-overflow:ellipsis";
  /** @param {string} text */
  const say = (text) => {
    status.textContent = text;
  };

  /** @type {ReturnType<typeof createHost> | null} */
  let host = null;
  let viewId = "";
  let stopped = false;
  let serverTools = false;
  let contextCapable = false;
  /** @type {string} the tool whose call this view was rendered for */
  let calledTool = "";
  /** @type {Record<string, unknown>} */
  let values = data.values ?? {};
  /** @type {string[] | null} what the lesson lets the model read of the page (null: all) */
  let readable = Array.isArray(data.observables) ? data.observables : null;
  /** @type {unknown[]} the view's messages waiting to go up */
  const outbox = [];
  let pushing = false;
  /** whether the poll loop's long poll is out (messages then go up in a push of their own) */
  let polling = false;
  /** @type {Set<string>} requests the page was given and has not answered yet */
  const awaiting = new Set();
  /** @type {(() => void) | null} wakes the poll loop waiting for replies */
  let loopWaiter = null;
  let height = data.height;
  /** @type {string} the theme the page was loaded with ("" for the reader's own) */
  let theme = "";
  /** @type {Record<string, unknown> | null} */
  let lastState = null;
  let contextTimer = /** @type {ReturnType<typeof setTimeout> | null} */ (null);
  let contextSentAt = 0;
  /** @type {unknown} the page's latest state report not sent up yet */
  let pendingStateEvent = null;
  let stateTimer = /** @type {ReturnType<typeof setTimeout> | null} */ (null);
  let stateSentAt = 0;
  let requestAt = 0;
  /** @type {Promise<void> | null} the page of another target being read (select_target ran) */
  let switching = null;

  const rpc = createRpc((message) => window.parent.postMessage(message, "*"), {
    "ui/notifications/tool-input": (params) => {
      say(`${calledTool || "call"} ${JSON.stringify(params?.arguments ?? {}).slice(0, 300)}`);
    },
    "ui/notifications/tool-input-partial": () => {},
    "ui/notifications/tool-result": (params) => {
      const body = params?.structuredContent;
      const error = body?.error?.message ?? (params?.isError ? "the call failed" : "");
      say(error ? `${calledTool || "call"}: ${String(error).slice(0, 300)}` : `${calledTool || "call"}: applied`);
    },
    "ui/notifications/tool-cancelled": (params) => {
      say(`${calledTool || "call"} cancelled${params?.reason ? `: ${String(params.reason).slice(0, 200)}` : ""}`);
    },
    "ui/notifications/host-context-changed": (params) => applyContext(params ?? {}),
    "ui/resource-teardown": async () => {
      await stop();
      return {};
    },
    ping: () => ({}),
    "tools/list": () => ({ tools: data.tools }),
    "tools/call": async (params) => {
      if (!serverTools) {
        const text = "this chat host does not pass tool calls to the server, which checks and applies them";
        return { content: [{ type: "text", text }], isError: true };
      }
      const name = String(params?.name ?? "");
      return rpc.request("tools/call", { name: `${data.widget}__${name}`, arguments: params?.arguments ?? {} });
    },
  });

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent || event.source === null) return;
    void rpc.receive(event.data);
  });

  /**
   * @param {string} name
   * @param {Record<string, unknown>} args
   * @returns {Promise<Record<string, any>>}
   */
  async function callServer(name, args) {
    return structured(await rpc.request("tools/call", { name, arguments: args }), name);
  }

  /** @param {Record<string, any>} context  the host's context (or the part that changed) */
  function applyContext(context) {
    if ((context.theme === "light" || context.theme === "dark") && context.theme !== theme) {
      doc.documentElement.style.colorScheme = context.theme;
      // The page learns it at load (a sandboxed frame's prefers-color-scheme is the browser's): a
      // change of theme loads it again, and it gets the current values once ready.
      if (theme && host) host.run([{ op: "reload", html: themed(data.html, context.theme) }]);
      theme = context.theme;
    }
    const dims = context.containerDimensions ?? {};
    const bar = status.offsetHeight || 18;
    const fixed = Number(dims.height);
    const most = Number(dims.maxHeight);
    if (Number.isFinite(fixed) && fixed > bar) height = fixed - bar;
    else if (Number.isFinite(most) && most > bar) height = Math.min(data.height, most - bar);
    host?.run([{ op: "height", px: height }]);
    sizeChanged();
  }

  function sizeChanged() {
    rpc.notify("ui/notifications/size-changed", {
      width: Math.ceil(doc.documentElement.scrollWidth),
      height: Math.ceil(height + (status.offsetHeight || 18)),
    });
  }

  /**
   * The host's view -> kernel messages, in order. Replies and events go up at once; the page's own
   * state reports (up to 10 a second) at most every STATE_UP_INTERVAL_MS, the latest one: each trip
   * is a tool call through the chat host.
   * @param {unknown[]} batch
   */
  function deliver(batch) {
    let urgent = false;
    for (const message of batch) {
      const m = /** @type {Record<string, any>} */ (message);
      if (m?.kind === "reply" && m.ok && m.state) noteState(m.state);
      if (m?.kind === "reply") replied(String(m.id));
      if (m?.kind === "event" && m.type === "state") {
        if (m.payload) noteState(m.payload);
        pendingStateEvent = message;
        continue;
      }
      takeStateEvent(); // an earlier report goes before this message, as the page sent them
      outbox.push(message);
      urgent = true;
    }
    if (urgent) send();
    else if (pendingStateEvent && !stateTimer) {
      stateTimer = setTimeout(() => {
        stateTimer = null;
        takeStateEvent();
        // Idle, a report rides with the next poll; busy (a seek waits for the page), it goes now.
        if (!polling || Date.now() - requestAt < BUSY_MS) send();
      }, Math.max(0, stateSentAt + stateInterval() - Date.now()));
    }
  }

  /**
   * Messages to go up: the poll loop carries them on its next sync, unless its long poll is out (then
   * a push of their own). One connection per view where it can: a browser-based host has six per
   * server, and calls waiting for views hold some of them.
   */
  function send() {
    if (polling) void push();
    else wakeLoop();
  }

  /** @param {string} id  a request the page answered */
  function replied(id) {
    awaiting.delete(id);
    if (awaiting.size === 0) wakeLoop();
  }

  function wakeLoop() {
    const wake = loopWaiter;
    loopWaiter = null;
    wake?.();
  }

  /**
   * Until the requests taken are answered (or `ms` pass): their replies go up with the next poll.
   * @param {number} ms
   */
  function repliesOrTimeout(ms) {
    if (awaiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        loopWaiter = null;
        resolve(undefined);
      }, ms);
      loopWaiter = () => {
        clearTimeout(timer);
        resolve(undefined);
      };
    });
  }

  function stateInterval() {
    return Date.now() - requestAt < BUSY_MS ? BUSY_STATE_INTERVAL_MS : STATE_UP_INTERVAL_MS;
  }

  function takeStateEvent() {
    if (pendingStateEvent === null) return;
    outbox.push(pendingStateEvent);
    pendingStateEvent = null;
    stateSentAt = Date.now();
  }

  /** @param {Record<string, unknown>} state */
  function noteState(state) {
    lastState = state;
    if (!contextCapable || contextTimer) return;
    const wait = Math.max(0, contextSentAt + CONTEXT_INTERVAL_MS - Date.now());
    contextTimer = setTimeout(sendContext, wait);
  }

  function sendContext() {
    contextTimer = null;
    if (stopped || lastState === null) return;
    contextSentAt = Date.now();
    const state = readableState(lastState, readable, values);
    const text =
      `${data.title} (MCP App view of ${data.widget}): values ${JSON.stringify(values)}; ` +
      `${data.page_data_note} ${JSON.stringify(state)}`;
    const structuredContent = { widget: data.widget, values, page_data: { note: data.page_data_note, state } };
    rpc
      .request("ui/update-model-context", {
        content: [{ type: "text", text: text.slice(0, CONTEXT_CHARS) }],
        structuredContent,
      })
      .catch((err) => console.warn(`splitbrain app: the model context was not updated: ${errorText(err)}`));
  }

  /** @param {Record<string, any>} answer  a sync's structured answer */
  function take(answer) {
    if (!host || stopped) return;
    if (typeof answer.target === "string" && answer.target !== data.target) {
      // The widget switched target: its page is read again (the requests wait for it, in order).
      switching ??= switchTarget(answer.target);
      const later = { ...answer, target: undefined };
      void switching.then(() => take(later));
      return;
    }
    if ("observables" in answer) readable = Array.isArray(answer.observables) ? answer.observables : null;
    /** @type {import("../host/host.js").HostOp[]} */
    const ops = [];
    if (answer.values && typeof answer.values === "object" && JSON.stringify(answer.values) !== JSON.stringify(values)) {
      values = answer.values;
      ops.push({ op: "values", values });
    }
    for (const msg of Array.isArray(answer.requests) ? answer.requests : []) {
      ops.push({ op: "send", msg });
      if (typeof msg?.id === "string") awaiting.add(msg.id);
    }
    if (ops.some((op) => op.op === "send")) requestAt = Date.now();
    if (ops.length > 0) host.run(ops);
  }

  /**
   * Read this resource again and load the page of the widget's new target (a resources/read through
   * the host; the data block of the document it answers, parsed without running it).
   * @param {string} target
   */
  async function switchTarget(target) {
    try {
      const read = await rpc.request("resources/read", { uri: data.uri });
      const text = read?.contents?.[0]?.text;
      const parsed = new DOMParser().parseFromString(String(text ?? ""), "text/html");
      const block = parsed.getElementById(DATA_ID)?.textContent;
      const fresh = block ? JSON.parse(block) : null;
      if (!fresh || fresh.target !== target) throw new Error(`the resource holds ${fresh?.target ?? "nothing"}`);
      data.target = fresh.target;
      data.html = fresh.html;
      data.title = fresh.title;
      data.tools = fresh.tools;
      host?.run([{ op: "reload", html: themed(data.html, theme) }]);
    } catch (err) {
      say(`the widget switched to ${target}, whose page could not be read: ${errorText(err)}`);
      data.target = target; // asked once: the requests go on to the page there is
    } finally {
      switching = null;
    }
  }

  /**
   * One sync: the messages up, the requests down.
   * @param {unknown[]} messages
   * @param {number} waitS
   */
  async function sync(messages, waitS) {
    const answer = await callServer(SYNC_TOOL, { view_id: viewId, messages, wait_s: waitS });
    if (answer.ok) take(answer);
    return answer;
  }

  /** Send what waits in the outbox now (one push at a time; a long poll may be waiting meanwhile). */
  async function push() {
    if (pushing || !viewId) return;
    pushing = true;
    try {
      while (outbox.length > 0) {
        const messages = outbox.splice(0, MAX_BATCH);
        try {
          const answer = await sync(messages, 0);
          if (!answer.ok) say(`the server refused the view's messages: ${answer.error?.message ?? "?"}`);
        } catch (err) {
          // Not lost: they go first on the next try (a reply late is a reply; its call has a deadline).
          outbox.unshift(...messages);
          say(`the server could not be reached: ${errorText(err)}`);
          if (!stopped) setTimeout(() => void push(), PUSH_RETRY_MS);
          return;
        }
      }
    } finally {
      pushing = false;
    }
  }

  /**
   * The view's channel: each sync carries what waits in the outbox up and long-polls for requests;
   * after requests came, the next sync waits (up to REPLY_WAIT_MS) for their replies and carries them.
   */
  async function poll() {
    let failures = 0;
    while (!stopped) {
      await repliesOrTimeout(REPLY_WAIT_MS);
      if (stopped) return;
      takeStateEvent();
      const messages = outbox.splice(0, MAX_BATCH);
      polling = true;
      try {
        const answer = await sync(messages, outbox.length > 0 ? 0 : data.poll_s);
        if (!answer.ok) {
          say(`the server refused this view: ${answer.error?.message ?? "?"}`);
          return;
        }
        failures = 0;
      } catch (err) {
        outbox.unshift(...messages); // not lost: they go first on the next try
        if (stopped) return;
        failures += 1;
        say(`the server could not be reached (${failures}): ${errorText(err)}`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 500 * 2 ** failures)));
      } finally {
        polling = false;
      }
    }
  }

  /** Stop the page and tell the server the view went (bounded: a teardown must not wait for ever). */
  async function stop() {
    if (stopped) return;
    stopped = true;
    if (contextTimer) clearTimeout(contextTimer);
    if (stateTimer) clearTimeout(stateTimer);
    const wasHost = host;
    host = null;
    wasHost?.dispose(); // the page's frame goes; its `detached` event is in the outbox now
    say("stopped");
    doc.body.append(status);
    if (!viewId || outbox.length === 0) return;
    const messages = outbox.splice(0);
    const flushed = callServer(SYNC_TOOL, { view_id: viewId, messages, wait_s: 0 }).catch(() => null);
    await Promise.race([flushed, new Promise((resolve) => setTimeout(resolve, TEARDOWN_FLUSH_MS))]);
  }

  async function start() {
    const init = await rpc.request("ui/initialize", {
      appInfo: { name: "splitbrain-widget", version: "1" },
      appCapabilities: { tools: { listChanged: false }, availableDisplayModes: ["inline"] },
      protocolVersion: APP_PROTOCOL_VERSION,
    });
    const capabilities = init?.hostCapabilities ?? {};
    serverTools = Boolean(capabilities.serverTools);
    contextCapable = Boolean(capabilities.updateModelContext);
    const context = init?.hostContext ?? {};
    const toolName = String(context.toolInfo?.tool?.name ?? "");
    calledTool = toolName.startsWith(`${data.widget}__`) ? toolName.slice(data.widget.length + 2) : toolName;
    rpc.notify("ui/notifications/initialized", {});
    if (stopped) return;
    if (serverTools) {
      const attached = await callServer(ATTACH_TOOL, { widget: data.widget });
      if (!attached.ok) throw new Error(attached.error?.message ?? "the server refused the view");
      viewId = String(attached.view_id);
      values = attached.values ?? values;
      if ("observables" in attached) readable = Array.isArray(attached.observables) ? attached.observables : null;
    } else {
      say("this chat host does not pass tool calls to the server: the page shows the values it was served with");
    }
    if (stopped) return;
    theme = context.theme === "light" || context.theme === "dark" ? context.theme : "";
    if (theme) doc.documentElement.style.colorScheme = theme;
    host = createHost({
      viewId: viewId || "app-unconnected",
      html: themed(data.html, theme),
      values,
      attach: Boolean(viewId),
      height,
      title: data.title,
      deliver: viewId ? deliver : () => {},
      onStatus: (state, detail) => {
        if (state === "error") say(detail ?? "the page failed");
      },
      onStopped: (why) => say(why),
    });
    doc.body.append(status);
    applyContext(context);
    if (viewId) void poll();
  }

  start().catch((err) => say(`the view could not start: ${errorText(err)}`));
  return { stop };
}

const dataBlock = typeof document !== "undefined" ? document.getElementById(DATA_ID) : null;
if (dataBlock) startAppView(JSON.parse(dataBlock.textContent ?? "{}"));
