// @ts-check
/**
 * What a screen reader hears from the widget, in one place: two visually hidden live regions in the
 * view, one polite (answers, applied changes, measurements when asked for) and one assertive (errors
 * and refusals). Each announcement is a new paragraph in its region, so the same words said twice
 * are heard twice and nothing already said is inserted again. Polite ones wait for a quiet moment:
 * at most one batch every ANNOUNCE_INTERVAL_MS, and a later announcement with the same key replaces
 * one still waiting (a slider dragged from the kernel is one announcement of where it ended).
 */

/** Polite announcements go out at most this often (milliseconds). */
export const ANNOUNCE_INTERVAL_MS = 1000;
/** Paragraphs kept in a region; older ones are removed (a removal is never announced). */
const KEPT = 4;

export const SR_ONLY_STYLE = `
.sb-sr-only { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
  clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0; }
`;

/**
 * @typedef {object} Announcer
 * @property {(text: string, options?: {urgent?: boolean, key?: string, onSpoken?: () => void}) => void} say
 *   announce `text`: at once and assertively when `urgent`, else politely in the next batch
 * @property {() => void} dispose
 */

/**
 * @param {HTMLElement} parent  where the two regions go
 * @returns {Announcer}
 */
export function createAnnouncer(parent) {
  const doc = parent.ownerDocument;
  const region = (/** @type {string} */ role, /** @type {string} */ live) => {
    const el = doc.createElement("div");
    el.className = "sb-sr-only sb-announcer";
    el.setAttribute("role", role);
    el.setAttribute("aria-live", live);
    el.dataset.live = live;
    parent.append(el);
    return el;
  };
  const polite = region("status", "polite");
  const assertive = region("alert", "assertive");
  /** @type {{text: string, key?: string, onSpoken?: () => void}[]} */
  let waiting = [];
  let lastAt = -Infinity;
  /** @type {ReturnType<typeof setTimeout> | 0} */
  let timer = 0;

  /**
   * @param {HTMLElement} into
   * @param {string} text
   */
  function speak(into, text) {
    const p = doc.createElement("p");
    p.textContent = text;
    into.append(p);
    while (into.childElementCount > KEPT) into.firstElementChild?.remove();
  }

  function flush() {
    timer = 0;
    lastAt = performance.now();
    const batch = waiting;
    waiting = [];
    for (const item of batch) {
      speak(polite, item.text);
      item.onSpoken?.();
    }
  }

  return {
    say(text, options = {}) {
      const words = text.trim();
      if (!words) return;
      if (options.urgent) {
        speak(assertive, words);
        return;
      }
      const same = options.key === undefined ? -1 : waiting.findIndex((item) => item.key === options.key);
      const item = { text: words, key: options.key, onSpoken: options.onSpoken };
      if (same >= 0) waiting[same] = item;
      else waiting.push(item);
      if (timer) return;
      timer = setTimeout(flush, Math.max(0, lastAt + ANNOUNCE_INTERVAL_MS - performance.now()));
    },
    dispose() {
      if (timer) clearTimeout(timer);
      timer = 0;
      waiting = [];
      polite.remove();
      assertive.remove();
    },
  };
}
