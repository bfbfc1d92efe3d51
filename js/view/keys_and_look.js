// @ts-check
/**
 * The view among the notebook's own ways: its keys and its look.
 *
 * Keys. A notebook's command-mode shortcuts are Lumino key bindings on the document: a key pressed on a
 * focused slider, checkbox, select or button of an output bubbles up to them (`b` inserts a cell, the
 * arrows move between cells). Lumino's documented way for an element to keep its keys is the
 * `data-lm-suppress-shortcuts` attribute, and it takes effect on the focused element itself (Lumino
 * walks up from the key's target and matches a binding's selector before it reaches an ancestor), so
 * each control of the view gets it when it takes focus. Escape is the one key that leaves: it gives
 * focus back to the cell, as it does from a cell's editor.
 *
 * Look. A sandboxed frame's `prefers-color-scheme` is the browser's, not the notebook's: the view reads
 * the notebook's theme (JupyterLab and Notebook 7: `<body data-jp-theme-light>`; VS Code: its body
 * classes) and the reader's `prefers-reduced-motion`, and the page is told both (../protocol.js
 * `withLook`).
 */

/** Lumino's attribute: key bindings never fire for a keydown whose target has it. */
export const SUPPRESS_SHORTCUTS_ATTR = "data-lm-suppress-shortcuts";

/**
 * Keep the keys pressed in `root` there; Escape gives focus back to the cell around it.
 * @param {HTMLElement} root
 * @param {AbortSignal} signal
 */
export function keepKeys(root, signal) {
  root.addEventListener(
    "focusin",
    (event) => {
      const target = event.target;
      if (target instanceof Element && !target.hasAttribute(SUPPRESS_SHORTCUTS_ATTR)) {
        target.setAttribute(SUPPRESS_SHORTCUTS_ATTR, "true");
      }
    },
    { signal },
  );
  root.addEventListener(
    "keydown",
    (event) => {
      if (event.key !== "Escape" || event.defaultPrevented) return;
      const cell = cellAround(root);
      if (!cell) return;
      event.preventDefault();
      cell.focus();
    },
    { signal },
  );
}

/**
 * The element that holds the cell's focus in command mode: the cell (JupyterLab 4 gives it a
 * tabindex), else the notebook, else nothing (outside a notebook).
 * @param {HTMLElement} root
 * @returns {HTMLElement | null}
 */
export function cellAround(root) {
  const cell = /** @type {HTMLElement | null} */ (root.closest(".jp-Cell"));
  if (cell && cell.tabIndex >= -1 && cell.hasAttribute("tabindex")) return cell;
  return /** @type {HTMLElement | null} */ (root.closest(".jp-Notebook, [tabindex]"));
}

/**
 * How the notebook page looks: its theme ("" when it does not say) and whether the reader asked for
 * reduced motion.
 * @param {Document} doc
 * @returns {import("../protocol.js").Look}
 */
export function notebookLook(doc) {
  const body = doc.body;
  /** @type {"light" | "dark" | ""} */
  let theme = "";
  const light = body?.dataset.jpThemeLight;
  if (light === "true") theme = "light";
  else if (light === "false") theme = "dark";
  else if (body?.classList.contains("vscode-dark") || body?.classList.contains("vscode-high-contrast")) theme = "dark";
  else if (body?.classList.contains("vscode-light")) theme = "light";
  const reducedMotion = Boolean(doc.defaultView?.matchMedia?.("(prefers-reduced-motion: reduce)").matches);
  return { theme, reducedMotion };
}

/**
 * Call `onChange` when the notebook's look changes (a theme switched, reduced motion asked for).
 * @param {Document} doc
 * @param {AbortSignal} signal
 * @param {() => void} onChange
 */
export function watchLook(doc, signal, onChange) {
  let last = JSON.stringify(notebookLook(doc));
  const check = () => {
    const now = JSON.stringify(notebookLook(doc));
    if (now === last) return;
    last = now;
    onChange();
  };
  if (doc.body && typeof MutationObserver !== "undefined") {
    const observer = new MutationObserver(check);
    observer.observe(doc.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "class"] });
    signal.addEventListener("abort", () => observer.disconnect());
  }
  doc.defaultView?.matchMedia?.("(prefers-reduced-motion: reduce)").addEventListener("change", check, { signal });
}
