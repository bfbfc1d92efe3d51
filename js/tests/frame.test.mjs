// js/host/frame.js: a page that leaves its frame is replaced by a fresh frame, and stopped when it
// leaves too often (MAX_LEAVES within LEAVE_WINDOW_MS) or too many times in a row without becoming
// ready (MAX_BRIEF_LEAVES), however slowly it loads. A minimal fake DOM stands in for the document.
import assert from "node:assert/strict";
import { afterEach, beforeEach, mock, test } from "node:test";

import { MAX_BRIEF_LEAVES, mountTargetFrame } from "../host/frame.js";

/**
 * A fake element: attributes, style, load listeners, replaceWith. Inserted without a srcdoc it fires
 * its initial about:blank's load event at once, as browsers do (HTML's "process the iframe attributes").
 */
class FakeFrame {
  constructor(doc) {
    this.ownerDocument = doc;
    this.attributes = {};
    this.style = {};
    this.listeners = [];
    this.contentWindow = { postMessage() {} };
    this.inserted = false;
    this.laidOut = false;
    /** whether the frame was in the document and laid out when its page was given */
    this.pageGivenSized = null;
  }
  set srcdoc(html) {
    this.pageGivenSized = this.inserted && this.laidOut;
    this.html = html;
  }
  getBoundingClientRect() {
    if (this.inserted) this.laidOut = true;
    return { width: 100, height: 100 };
  }
  setAttribute(name, value) {
    this.attributes[name] = value;
  }
  getAttribute(name) {
    return this.attributes[name];
  }
  addEventListener(type, listener) {
    if (type === "load") this.listeners.push(listener);
  }
  replaceWith(other) {
    this.ownerDocument.current = other;
    other.inserted = true;
    if (other.html === undefined) other.fireLoad();
  }
  fireLoad() {
    for (const listener of this.listeners) listener();
  }
}

function mount() {
  const doc = { current: null, createElement: () => new FakeFrame(doc) };
  const placeholder = new FakeFrame(doc);
  doc.current = placeholder;
  const toKernel = [];
  const controller = new AbortController();
  const frame = mountTargetFrame({
    placeholder,
    viewId: "v1",
    html: () => "<p>page</p>",
    frameTitle: () => "target",
    height: () => 100,
    sendToKernel: (m) => toKernel.push(m),
    currentValues: () => ({}),
    signal: controller.signal,
    win: { addEventListener() {} },
  });
  frame.load();
  return { doc, frame, toKernel, stop: () => controller.abort() };
}

/** The page in the current frame loads, then another document takes the frame (a second load). */
function leaveOnce(doc) {
  const page = doc.current;
  page.fireLoad();
  page.fireLoad();
}

test("the page is given to its frame once the frame is in the document and laid out; about:blank's load is not the page's", () => {
  const { doc, frame, toKernel } = mount();
  const first = doc.current;
  assert.equal(first.pageGivenSized, true);
  assert.equal(first.html, "<p>page</p>");
  first.fireLoad(); // the page's own load: its first
  assert.equal(doc.current, first, "the about:blank load during insertion did not count as the page's");
  first.fireLoad(); // another document took the frame
  assert.notEqual(doc.current, first);
  assert.equal(doc.current.pageGivenSized, true);
  assert.deepEqual(toKernel, []);
  frame.dispose();
});

beforeEach(() => mock.timers.enable({ apis: ["setTimeout", "Date"], now: 1_000_000 }));
afterEach(() => mock.timers.reset());

test("a page that leaves on every load, slowly, is stopped after MAX_BRIEF_LEAVES leaves in a row", () => {
  const { doc, frame, stop } = mount();
  for (let i = 0; i < MAX_BRIEF_LEAVES; i += 1) {
    mock.timers.tick(3_000); // one leave every 3 s: never more than MAX_LEAVES within 10 s
    leaveOnce(doc);
    assert.equal(frame.relay.stopped, "", `leave ${i + 1}: a fresh frame, not stopped yet`);
  }
  mock.timers.tick(3_000);
  leaveOnce(doc);
  assert.match(frame.relay.stopped, /left its frame .* 6 times in a row soon after loading, without answering a call/);
  assert.equal(doc.current.getAttribute("sandbox"), "", "the stopped page's frame is an empty one");
  stop();
});

test("a page that is ready, even slowly, but answers nothing before it leaves is stopped too", () => {
  const { doc, frame, stop } = mount();
  for (let i = 0; i <= MAX_BRIEF_LEAVES; i += 1) {
    mock.timers.tick(3_000);
    const relay = frame.relay;
    relay.fromTarget({ source: "splitbrain-target", nonce: relay.nonce, type: "ready", load: `load-${i}` }, true);
    leaveOnce(doc);
  }
  assert.match(frame.relay.stopped, /6 times in a row soon after loading/);
  stop();
});

test("a page that answers a call, or stays a while, before it reloads itself is never stopped for it", () => {
  const { doc, frame, stop } = mount();
  for (let i = 0; i < 3 * MAX_BRIEF_LEAVES; i += 1) {
    const relay = frame.relay;
    relay.fromTarget({ source: "splitbrain-target", nonce: relay.nonce, type: "ready", load: `load-${i}` }, true);
    if (i % 2 === 0) {
      mock.timers.tick(3_000);
      relay.fromKernel({ kind: "request", id: `r${i}`, op: "state", payload: {} });
      relay.fromTarget({ source: "splitbrain-target", nonce: relay.nonce, type: "state", id: `r${i}`, payload: {} }, true);
      assert.equal(relay.answered, true);
    } else {
      mock.timers.tick(11_000); // stayed longer than LEAVE_WINDOW_MS
    }
    leaveOnce(doc);
  }
  assert.equal(frame.relay.stopped, "");
  stop();
});

test("a page that leaves fast is stopped by the rate, ready or not", () => {
  const { doc, frame, stop } = mount();
  for (let i = 0; i < 6; i += 1) {
    mock.timers.tick(100);
    frame.relay.fromTarget({ source: "splitbrain-target", nonce: frame.relay.nonce, type: "ready", load: `load-${i}` }, true);
    leaveOnce(doc);
  }
  assert.match(frame.relay.stopped, /6 times within 10 s/);
  stop();
});
