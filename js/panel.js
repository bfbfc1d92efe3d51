// @ts-check
/**
 * The chat panel and the parameter inspector, shown beside (or under) the target when the
 * widget's `chat_enabled` trait is true. Messages (docs/protocol.md section 1): it reads
 * "chat_event", "approval_request" and "approval_closed", checked by ./protocol.js, and sends
 * "chat", "cancel", "skip_wait", "approval" and "set", built by ./protocol.js.
 */
import {
  approvalMessage,
  cancelMessage,
  chatMessage,
  isApprovalClosed,
  isApprovalRequest,
  isChatEventMessage,
  setMessage,
  skipWaitMessage,
} from "./protocol.js";

/** @typedef {import("./protocol.js").ChatEvent} ChatEvent */
/** @typedef {import("./protocol.js").ApprovalRequest} ApprovalRequest */

/** @typedef {import("./relay.js").Model} Model */

/**
 * @typedef {object} Parameter  a manifest parameter as the `manifest` trait carries it
 * @property {"number" | "integer" | "boolean" | "string" | "array"} type
 * @property {string} [unit]
 * @property {string} [label]
 * @property {string} [description]
 * @property {number} [min]
 * @property {number} [max]
 * @property {number} [step]
 * @property {unknown[]} [enum]
 * @property {boolean} [readonly]
 * @property {number} [length]
 */

/** Milliseconds between slider updates sent to the kernel while dragging. */
export const SLIDER_INTERVAL_MS = 80;

/**
 * The status a finished tool call shows: ok, error, or cancelled.
 * @param {{ok?: boolean, result?: any}} finished
 * @returns {"ok" | "error" | "cancelled"}
 */
export function chipStatus(finished) {
  if (finished.ok) return "ok";
  const code = finished.result?.error?.code;
  return code === "cancelled" ? "cancelled" : "error";
}

/**
 * Choose the slider step for a number parameter.
 * @param {Parameter} p
 * @returns {number | "any"}
 */
export function stepFor(p) {
  if (p.type === "integer") return p.step ?? 1;
  if (p.step) return p.step;
  if (p.min !== undefined && p.max !== undefined) return (p.max - p.min) / 200;
  return "any";
}

/**
 * @param {string} tag
 * @param {Record<string, string>} [attrs]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElement}
 */
function h(tag, attrs = {}, children = []) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") el.textContent = v;
    else el.setAttribute(k, v);
  }
  el.append(...children);
  return el;
}

export const PANEL_STYLE = `
.sb-layout { display: flex; flex-wrap: wrap; gap: 0; }
.sb-layout > .sb-target { flex: 2 1 420px; min-width: 0; }
.sb-panel { flex: 1 1 300px; min-width: 260px; display: flex; flex-direction: column; max-height: var(--sb-panel-height, 520px);
  border-left: 1px solid var(--jp-border-color2, #ddd); background: var(--jp-layout-color1, #fff); font-size: var(--jp-ui-font-size1, 13px); }
.sb-panel-head { display: flex; align-items: center; gap: .5em; padding: 6px 8px; border-bottom: 1px solid var(--jp-border-color2, #ddd); }
.sb-panel-head .sb-model { color: var(--jp-ui-font-color2, #666); font-size: .9em; margin-left: auto; }
.sb-log { flex: 1 1 auto; overflow-y: auto; padding: 6px 8px; display: flex; flex-direction: column; gap: 6px; min-height: 120px; }
.sb-msg { padding: 5px 8px; border-radius: 6px; line-height: 1.35; white-space: pre-wrap; overflow-wrap: anywhere; }
.sb-msg.sb-user { align-self: flex-end; background: var(--jp-brand-color1, #1976d2); color: #fff; max-width: 85%; }
.sb-msg.sb-assistant { background: var(--jp-layout-color2, #f2f2f2); }
.sb-msg.sb-error { background: var(--jp-error-color3, #fbe0e0); color: var(--jp-error-color0, #900); }
.sb-chip { display: inline-block; border-radius: 10px; padding: 1px 8px; font-size: .9em; border: 1px solid var(--jp-border-color1, #bbb); }
.sb-chip summary { cursor: pointer; list-style: none; }
.sb-chip summary::-webkit-details-marker { display: none; }
.sb-chip[data-status="pending"] { border-color: var(--jp-warn-color1, #c80); }
.sb-chip[data-status="ok"] { border-color: var(--jp-success-color1, #2e9d4d); }
.sb-chip[data-status="error"] { border-color: var(--jp-error-color1, #d33); }
.sb-chip[data-status="cancelled"] { border-style: dashed; opacity: .8; }
.sb-chip pre { margin: 4px 0; font-size: .85em; max-height: 160px; overflow: auto; white-space: pre-wrap; }
.sb-banner { margin: 4px 8px; padding: 6px 8px; border-radius: 6px; background: var(--jp-warn-color3, #fff3cd); color: var(--jp-ui-font-color0, #111); display: flex; gap: .5em; align-items: center; flex-wrap: wrap; }
.sb-input { display: flex; gap: 4px; padding: 6px 8px; border-top: 1px solid var(--jp-border-color2, #ddd); }
.sb-input textarea { flex: 1; resize: none; font: inherit; color: inherit; background: var(--jp-input-background, transparent);
  border: 1px solid var(--jp-border-color1, #bbb); border-radius: 4px; padding: 4px; }
.sb-panel button { font: inherit; color: var(--jp-ui-font-color1, #222); background: var(--jp-layout-color2, #eee);
  border: 1px solid var(--jp-border-color1, #bbb); border-radius: 4px; padding: 2px 10px; cursor: pointer; }
.sb-panel button:disabled { opacity: .5; cursor: default; }
.sb-panel button:focus-visible, .sb-panel textarea:focus-visible, .sb-panel input:focus-visible, .sb-panel select:focus-visible {
  outline: 2px solid var(--jp-brand-color1, #1976d2); outline-offset: 1px; }
.sb-inspector { border-top: 1px solid var(--jp-border-color2, #ddd); padding: 4px 8px 8px; max-height: 45%; overflow-y: auto; }
.sb-inspector summary { cursor: pointer; padding: 2px 0; font-weight: 600; }
.sb-row { display: grid; grid-template-columns: minmax(80px, 34%) 1fr; gap: 4px 8px; align-items: center; margin: 3px 0; }
.sb-row label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.sb-row .sb-control { display: flex; gap: 4px; align-items: center; min-width: 0; }
.sb-row input[type=range] { flex: 1; min-width: 60px; }
.sb-row input[type=number] { width: 6em; }
.sb-row input, .sb-row select { font: inherit; color: inherit; background: var(--jp-input-background, transparent); }
.sb-unit { color: var(--jp-ui-font-color2, #666); font-size: .9em; }
`;

/**
 * Mount the panel into `host`; returns a cleanup function.
 * @param {HTMLElement} host
 * @param {Model} model
 * @param {AbortSignal} signal
 * @returns {() => void}
 */
export function mountPanel(host, model, signal) {
  const panel = h("section", { class: "sb-panel", "aria-label": "Assistant and parameters" });
  const modelName = h("span", { class: "sb-model", text: "" });
  const head = h("div", { class: "sb-panel-head" }, [h("strong", { text: "Assistant" }), modelName]);
  const log = h("div", { class: "sb-log", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
  const banners = h("div", { class: "sb-banners" });
  const textarea = /** @type {HTMLTextAreaElement} */ (
    h("textarea", { rows: "2", placeholder: "Ask, e.g. “set the speed to 12 and make it red”", "aria-label": "Message" })
  );
  const send = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Send" }));
  const stop = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Stop", "aria-label": "Stop the agent" }));
  const input = h("div", { class: "sb-input" }, [textarea, send, stop]);
  const inspector = h("details", { class: "sb-inspector", open: "" }, [h("summary", { text: "Parameters" })]);
  panel.append(head, log, banners, input, inspector);
  host.append(panel);

  /** @type {HTMLElement | null} live assistant text of the run in progress */
  let live = null;
  /** @type {Map<string, HTMLElement>} chips of the run in progress, by call id */
  const chips = new Map();
  /** @type {Map<string, HTMLElement>} open approval prompts */
  const approvals = new Map();
  /** @type {ReturnType<typeof setInterval> | null} */
  let countdown = null;

  const scroll = () => {
    log.scrollTop = log.scrollHeight;
  };

  /**
   * @param {string} role
   * @param {string} text
   */
  function bubble(role, text) {
    const el = h("div", { class: `sb-msg sb-${role}`, text });
    log.append(el);
    scroll();
    return el;
  }

  /**
   * @param {string} id
   * @param {string} name
   * @param {Record<string, any>} args
   * @param {"pending" | "ok" | "error" | "cancelled"} status
   * @param {any} [result]
   * @param {string} [summary]  the arguments in short, as the kernel's tool definition renders them
   */
  function chip(id, name, args, status, result, summary = "") {
    let el = chips.get(id);
    if (!el) {
      el = h("details", { class: "sb-chip" });
      chips.set(id, el);
      log.append(el);
    }
    el.dataset.status = status;
    const mark = { pending: "…", ok: "✓", error: "✗", cancelled: "⊘" }[status];
    el.replaceChildren(
      h("summary", { text: `${mark} ${name}${summary ? `: ${summary}` : ""}`, "aria-label": `${name} ${status}` }),
      h("pre", { text: `arguments: ${JSON.stringify(args, null, 1)}` }),
      ...(result === undefined ? [] : [h("pre", { text: `result: ${JSON.stringify(result, null, 1)}` })]),
    );
    scroll();
  }

  function renderTranscript() {
    log.replaceChildren();
    chips.clear();
    live = null;
    for (const entry of model.get("transcript") ?? []) {
      if (entry.role === "tool") chip(String(entry.id), entry.name, entry.arguments ?? {}, chipStatus(entry), entry.result, entry.label);
      else bubble(entry.role, entry.stopped ? `${entry.text}` : entry.text);
    }
    chips.clear();
  }

  function clearCountdown() {
    if (countdown) clearInterval(countdown);
    countdown = null;
    banners.querySelector(".sb-retry")?.remove();
  }

  /** @param {ChatEvent} event */
  function onEvent(event) {
    switch (event.kind) {
      case "text":
        if (!live) live = bubble("assistant", "");
        live.textContent += event.text;
        scroll();
        break;
      case "tool_started":
        chip(event.call_id, event.name, event.arguments ?? {}, "pending", undefined, event.label);
        break;
      case "tool_progress": // a running call's news (a seek's try) relabels its chip, while it runs
        if (chips.get(event.call_id)?.dataset.status === "pending") {
          chip(event.call_id, event.name, event.arguments ?? {}, "pending", undefined, event.label);
        }
        break;
      case "tool_finished":
        chip(event.call_id, event.name, event.arguments ?? {}, chipStatus(event), event.result, event.label);
        break;
      case "retry_wait": {
        clearCountdown();
        let left = Math.ceil(event.seconds);
        const label = h("span", { text: "" });
        const update = () => {
          label.textContent = `${event.model} asked us to wait (${event.source}${event.status ? `, HTTP ${event.status}` : ""}): retrying in ${left} s`;
        };
        update();
        const skip = h("button", { type: "button", text: "Skip wait" });
        const abort = h("button", { type: "button", text: "Abort" });
        skip.addEventListener("click", () => model.send(skipWaitMessage()));
        abort.addEventListener("click", () => model.send(cancelMessage()));
        banners.append(h("div", { class: "sb-banner sb-retry", role: "status" }, [label, skip, abort]));
        countdown = setInterval(() => {
          left -= 1;
          if (left <= 0) clearCountdown();
          else update();
        }, 1000);
        break;
      }
      case "fallback":
        bubble("assistant", `(${event.from_model} failed: ${event.reason}; continuing with ${event.to_model})`);
        break;
      case "busy":
      case "control_error":
        bubble("error", event.text);
        break;
    }
  }

  /** @param {ApprovalRequest} msg */
  function approvalPrompt(msg) {
    const what = msg.label || msg.tool;
    const approve = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Approve" }));
    const deny = /** @type {HTMLButtonElement} */ (h("button", { type: "button", text: "Deny" }));
    const box = h("div", { class: "sb-banner sb-approval", role: "alertdialog", "aria-label": "Approve a change" }, [
      h("span", { text: `The agent wants to ${msg.tool.replace("_", " ")}: ${what}` }),
      approve,
      deny,
    ]);
    /** @param {boolean} approved */
    const decide = (approved) => {
      model.send(approvalMessage(msg.id, approved));
      approve.disabled = deny.disabled = true;
    };
    approve.addEventListener("click", () => decide(true));
    deny.addEventListener("click", () => decide(false));
    approvals.set(msg.id, box);
    banners.append(box);
    approve.focus();
  }

  /** @param {unknown} msg  a custom message from the kernel: requests are the relay's, the rest is ours */
  function onCustom(msg) {
    if (isChatEventMessage(msg)) onEvent(msg.event);
    else if (isApprovalRequest(msg)) approvalPrompt(msg);
    else if (isApprovalClosed(msg)) {
      approvals.get(msg.id)?.remove();
      approvals.delete(msg.id);
    }
  }

  function submit() {
    const text = textarea.value.trim();
    if (!text || model.get("chat_busy")) return;
    model.send(chatMessage(text));
    textarea.value = "";
    live = null;
    chips.clear();
    bubble("user", text);
  }

  function onBusy() {
    const busy = Boolean(model.get("chat_busy"));
    stop.disabled = !busy;
    send.disabled = busy;
    panel.dataset.busy = busy ? "true" : "false";
    modelName.textContent = model.get("chat_model") ?? "";
    if (!busy) clearCountdown();
  }

  send.addEventListener("click", submit, { signal });
  stop.addEventListener("click", () => model.send(cancelMessage()), { signal });
  textarea.addEventListener(
    "keydown",
    (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        submit();
      } else if (e.key === "Escape" && model.get("chat_busy")) {
        model.send(cancelMessage());
      }
    },
    { signal },
  );

  const inspectorApi = buildInspector(inspector, model, signal);

  model.on("msg:custom", onCustom);
  model.on("change:transcript", renderTranscript);
  model.on("change:chat_busy", onBusy);
  model.on("change:chat_model", onBusy);
  model.on("change:values", inspectorApi.sync);
  model.on("change:manifest", inspectorApi.rebuild);
  renderTranscript();
  onBusy();

  return () => {
    clearCountdown();
    model.off("msg:custom", onCustom);
    model.off("change:transcript", renderTranscript);
    model.off("change:chat_busy", onBusy);
    model.off("change:chat_model", onBusy);
    model.off("change:values", inspectorApi.sync);
    model.off("change:manifest", inspectorApi.rebuild);
    panel.remove();
  };
}

/**
 * The parameter inspector: one control per manifest parameter, in sync both ways.
 * @param {HTMLElement} container
 * @param {Model} model
 * @param {AbortSignal} signal
 */
function buildInspector(container, model, signal) {
  /** @type {Map<string, (value: any) => void>} setters that show a value from the kernel */
  let setters = new Map();
  /** @type {HTMLElement | null} */
  let body = null;
  /** @type {Map<string, ReturnType<typeof setTimeout>>} */
  const timers = new Map();

  /** @type {Map<string, string>} the last value sent per path, so Enter then blur sends once */
  const lastSent = new Map();

  /**
   * @param {string} path
   * @param {any} value
   * @param {boolean} [throttled]
   */
  function push(path, value, throttled = false) {
    const send = () => {
      const key = JSON.stringify(value);
      if (lastSent.get(path) === key) return;
      lastSent.set(path, key);
      model.send(setMessage({ [path]: value }));
    };
    if (!throttled) return send();
    if (timers.has(path)) clearTimeout(/** @type {any} */ (timers.get(path)));
    timers.set(
      path,
      setTimeout(() => {
        timers.delete(path);
        send();
      }, SLIDER_INTERVAL_MS),
    );
  }

  function rebuild() {
    body?.remove();
    setters = new Map();
    body = h("div", { class: "sb-rows" });
    const params = /** @type {Record<string, Parameter>} */ (model.get("manifest")?.parameters ?? {});
    for (const [path, p] of Object.entries(params)) {
      const id = `sb-${Math.random().toString(36).slice(2)}`;
      const name = p.label ?? path.split(".").pop() ?? path;
      const label = h("label", { for: id, text: name, title: `${path}${p.description ? ` — ${p.description}` : ""}` });
      const control = h("div", { class: "sb-control" });
      const unit = p.unit ? h("span", { class: "sb-unit", text: p.unit }) : null;
      if ((p.type === "number" || p.type === "integer") && p.enum === undefined) {
        const number = /** @type {HTMLInputElement} */ (h("input", { type: "number", id, step: String(stepFor(p)), "aria-label": `${name}${p.unit ? ` in ${p.unit}` : ""}` }));
        if (p.min !== undefined) number.min = String(p.min);
        if (p.max !== undefined) number.max = String(p.max);
        /** @type {HTMLInputElement | null} */
        let slider = null;
        if (p.min !== undefined && p.max !== undefined) {
          slider = /** @type {HTMLInputElement} */ (
            h("input", { type: "range", min: String(p.min), max: String(p.max), step: String(stepFor(p)), "aria-label": `${name} slider` })
          );
          const s = slider;
          s.addEventListener("input", () => {
            number.value = s.value;
            push(path, Number(s.value), true);
          }, { signal });
          control.append(s);
        }
        const commit = () => {
          if (number.value === "") return;
          if (slider) slider.value = number.value;
          push(path, Number(number.value));
        };
        number.addEventListener("change", commit, { signal });
        number.addEventListener("keydown", (e) => e.key === "Enter" && commit(), { signal });
        control.append(number);
        setters.set(path, (v) => {
          if (document.activeElement !== number) number.value = String(v);
          if (slider && document.activeElement !== slider) slider.value = String(v);
        });
      } else if (p.type === "boolean") {
        const box = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id, role: "switch" }));
        box.addEventListener("change", () => push(path, box.checked), { signal });
        control.append(box);
        setters.set(path, (v) => {
          box.checked = Boolean(v);
        });
      } else if (p.enum !== undefined) {
        const select = /** @type {HTMLSelectElement} */ (h("select", { id }));
        for (const option of p.enum) select.append(h("option", { value: JSON.stringify(option), text: String(option) }));
        select.addEventListener("change", () => push(path, JSON.parse(select.value)), { signal });
        control.append(select);
        setters.set(path, (v) => {
          select.value = JSON.stringify(v);
        });
      } else if (p.type === "array") {
        const inputs = Array.from({ length: p.length ?? 3 }, (_, i) =>
          /** @type {HTMLInputElement} */ (h("input", { type: "number", step: "any", "aria-label": `${name} ${i + 1}`, ...(i === 0 ? { id } : {}) })),
        );
        for (const input of inputs) {
          input.style.width = "4.5em";
          input.addEventListener("change", () => push(path, inputs.map((x) => Number(x.value))), { signal });
        }
        control.append(...inputs);
        setters.set(path, (v) => {
          if (Array.isArray(v)) v.forEach((x, i) => inputs[i] && document.activeElement !== inputs[i] && (inputs[i].value = String(x)));
        });
      } else {
        const text = /** @type {HTMLInputElement} */ (h("input", { type: "text", id }));
        text.addEventListener("change", () => push(path, text.value), { signal });
        text.addEventListener("keydown", (e) => e.key === "Enter" && push(path, text.value), { signal });
        control.append(text);
        setters.set(path, (v) => {
          if (document.activeElement !== text) text.value = String(v ?? "");
        });
      }
      if (unit) control.append(unit);
      if (p.readonly) control.querySelectorAll("input, select").forEach((el) => el.setAttribute("disabled", ""));
      body.append(h("div", { class: "sb-row", "data-path": path }, [label, control]));
    }
    container.append(body);
    sync();
  }

  function sync() {
    const values = model.get("values") ?? {};
    for (const [path, set] of setters) {
      if (!(path in values)) continue;
      lastSent.set(path, JSON.stringify(values[path])); // what the kernel holds is what we last agreed on
      set(values[path]);
    }
  }

  rebuild();
  return { rebuild, sync };
}
