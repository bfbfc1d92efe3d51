// A chat host that renders MCP Apps, for tests/browser/test_mcp_apps_browser.py: the official host
// side of npm @modelcontextprotocol/ext-apps (its AppBridge) and the official MCP client, in a page of
// headless Chromium, connected to our MCP server over streamable HTTP. esbuild bundles this file in
// the test (nothing of it ships). It does what a web chat does and no more:
//
// - lists the server's tools and keeps the model's (`_meta.ui.visibility` without "model" hidden);
// - for a call of a tool with `_meta.ui.resourceUri`, reads that resource, renders it in a sandboxed
//   iframe (`allow-scripts`, an opaque origin) under the policy its `_meta.ui.csp` declares, connects
//   an AppBridge to it, sends the call's input, makes the call, sends the result;
// - passes a view's `tools/call` on to the server only for tools the view may call (visibility "app");
// - sizes a view's iframe as the view asks (within its container);
// - records what views put into the model's context and any message a view sends into the chat.
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const HOST_INFO = { name: "splitbrain-test-chat", version: "1.0.0" };
const EXTENSION = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";

/** @type {Client} */
let client;
/** @type {any[]} */
let tools = [];
/** Everything the views did that a test reads. */
const seen = { contexts: [], messages: [], refusedCalls: [], viewCalls: [], logs: [], initialized: [] };
/** @type {{bridge: AppBridge, iframe: HTMLIFrameElement, tool: string}[]} */
const views = [];

/** The policy a host applies to a view: the spec's restrictive default, plus the domains declared. */
function policyFor(csp) {
  const connect = (csp?.connectDomains ?? []).join(" ") || "'none'";
  const resources = (csp?.resourceDomains ?? []).join(" ");
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' 'wasm-unsafe-eval' blob: data: ${resources}`,
    `style-src 'unsafe-inline' ${resources}`,
    `img-src data: blob: ${resources}`,
    `font-src data: ${resources}`,
    `media-src data: blob: ${resources}`,
    `connect-src ${connect}`,
    "worker-src blob:",
    "frame-src 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** The view's document behind the host's policy: a `<meta>` before it lands in its head, first. */
function withPolicy(html, csp) {
  return `<meta http-equiv="Content-Security-Policy" content="${policyFor(csp)}">` + html;
}

function visibility(tool) {
  return tool?._meta?.ui?.visibility ?? ["model", "app"];
}

async function connect(url, token) {
  client = new Client(HOST_INFO, { capabilities: { extensions: { [EXTENSION]: { mimeTypes: [MIME] } } } });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  tools = (await client.listTools()).tools;
  return {
    all: tools.map((t) => ({ name: t.name, visibility: visibility(t), resourceUri: getToolUiResourceUri(t) ?? null })),
    model: tools.filter((t) => visibility(t).includes("model")).map((t) => t.name),
  };
}

/**
 * What a chat does when the model calls `name`: render the tool's view (if it has one), send it the
 * input, call the server, send it the result. Returns the server's result and the view's index.
 */
async function call(name, args, options = {}) {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  const uri = getToolUiResourceUri(tool);
  let view = null;
  if (uri && options.render !== false) view = await render(tool, uri, options);
  if (view) await view.bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name, arguments: args });
  if (view) await view.bridge.sendToolResult(result);
  return { result, view: view ? views.indexOf(view) : null };
}

async function render(tool, uri, options) {
  const read = await client.readResource({ uri });
  const content = read.contents[0];
  if (content.mimeType !== MIME) throw new Error(`${uri} is ${content.mimeType}, not ${MIME}`);
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.cssText = "width:640px;height:520px;border:1px solid #888;display:block";
  iframe.srcdoc = withPolicy(content.text, content._meta?.ui?.csp);
  document.body.append(iframe);
  const capabilities = options.capabilities ?? {
    serverTools: {},
    serverResources: {},
    updateModelContext: { text: {} },
    message: { text: {} },
    logging: {},
  };
  const hostContext = {
    theme: options.theme ?? "light",
    platform: "web",
    displayMode: "inline",
    containerDimensions: { width: 640, maxHeight: 520 },
    toolInfo: { id: views.length + 1, tool },
  };
  const bridge = new AppBridge(capabilities.serverTools ? client : null, HOST_INFO, capabilities, { hostContext });
  const view = { bridge, iframe, tool: tool.name };
  views.push(view);
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => {
      seen.initialized.push(tool.name);
      resolve(null);
    };
  });
  bridge.onupdatemodelcontext = async (params) => {
    seen.contexts.push({ view: views.indexOf(view), params });
    return {};
  };
  bridge.onmessage = async (params) => {
    seen.messages.push({ view: views.indexOf(view), params });
    return {};
  };
  bridge.onloggingmessage = (params) => seen.logs.push(params);
  bridge.onsizechange = ({ height }) => {
    if (Number.isFinite(height) && height > 0) iframe.style.height = `${Math.min(height, 520) + 2}px`;
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  if (capabilities.serverTools) {
    // AppBridge forwards every tools/call as it is; a host must keep a view to the tools it may call.
    bridge.oncalltool = async (params, extra) => {
      const called = tools.find((t) => t.name === params.name);
      seen.viewCalls.push(params.name);
      if (!called || !visibility(called).includes("app")) {
        seen.refusedCalls.push(params.name);
        return { content: [{ type: "text", text: `${params.name} is not for views` }], isError: true };
      }
      return client.request({ method: "tools/call", params }, { signal: extra?.mcpReq?.signal });
    };
  }
  await initialized;
  return view;
}

/** One call of the model's, timed in the page: what a chat waits for (no view rendered for it). */
async function timed(name, args) {
  const started = performance.now();
  const result = await client.callTool({ name, arguments: args });
  return { ms: performance.now() - started, ok: Boolean(result.structuredContent?.ok) };
}

/** `count` calls at once (a model's parallel tool calls): how many were answered ok. */
async function burst(name, argsList) {
  const results = await Promise.all(argsList.map((args) => client.callTool({ name, arguments: args })));
  const failed = results.filter((r) => !r.structuredContent?.ok).map((r) => r.structuredContent?.error ?? r.content);
  if (failed.length) console.warn("BURST", JSON.stringify(failed));
  return results.length - failed.length;
}

window.appsHost = {
  connect,
  call,
  timed,
  burst,
  seen,
  views: () => views.length,
  /** The view's own tools (app-provided tools, the draft extension). */
  listViewTools: (index) => views[index].bridge.listTools({}),
  callViewTool: (index, name, args) => views[index].bridge.callTool({ name, arguments: args }),
  setContext: (index, context) => views[index].bridge.sendHostContextChange(context),
  teardown: async (index) => {
    const started = performance.now();
    await views[index].bridge.teardownResource({});
    return performance.now() - started;
  },
  appCapabilities: (index) => views[index].bridge.getAppCapabilities(),
  frameCount: (index) => views[index].iframe.contentWindow?.length ?? -1,
};
document.title = "apps host ready";
