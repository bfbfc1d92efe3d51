"""Test targets written into a temporary targets folder (``TargetWidget(id, targets_dir=...)``).

- ``demo``: a copy of tests/fixtures/targets/demo (``body.dataset.values`` = JSON of applied values).
- ``gated``: an honest target that can hold a request open until the test releases it, so a
  request id is pending in the view while the test forges answers to it. It records the pending
  id in ``body.dataset.pendingId`` and its speed in ``body.dataset.speed``; every state it reports
  carries ``honest: true``.
- ``hostile``: floods ``window.parent`` with forged ``ready`` / ``state`` / ``error`` messages
  (wrong nonces, its own nonce, a stolen nonce, guessed and real request ids) every few ms, and
  tries to read its siblings' ``name`` (their nonces). ``window.arm({nonces, ids})`` lets the test
  hand it stolen nonces and real pending ids.
- ``neverready``: registers handlers but never calls ``SplitBrain.ready()``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "targets"

GATED_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>gated</title></head>
<body>
<pre id="out"></pre>
<script>
  const values = { "settings.speed": 8 };
  let applied = 0;
  let gate = false;
  const held = [];
  const snapshot = () => ({ ...values, honest: true, applied });
  function show() {
    document.body.dataset.speed = String(values["settings.speed"]);
    document.body.dataset.applied = String(applied);
    document.getElementById("out").textContent = JSON.stringify(snapshot());
  }
  // Called by the test (Playwright evaluates in this frame): hold the next requests until released.
  window.holdRequests = () => { gate = true; };
  window.releaseAll = () => { gate = false; for (const resolve of held.splice(0)) resolve(); };
  SplitBrain.onApply((v, ctx) => {
    Object.assign(values, v);
    applied += 1;
    show();
    if (ctx.id && gate) {
      document.body.dataset.pendingId = ctx.id;
      return new Promise((resolve) => held.push(() => resolve(snapshot())));
    }
    return snapshot();
  });
  SplitBrain.onState(() => snapshot());
  show();
  SplitBrain.ready();
</script>
</body></html>
"""

GATED_JSON = {
    "id": "gated",
    "type": "apply",
    "title": "Gated honest target",
    "data": {"settings": {"speed": {"type": "number", "unit": "m/s", "value": 8, "min": 0, "max": 50}}},
    "observables": {"honest": {"description": "always true"}, "applied": {"description": "applies seen"}},
}

HOSTILE_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>hostile</title></head>
<body>
<script>
  let stolen = [];
  let ids = [];
  let sent = 0;
  let timer = null;
  const FORGED = { forged: true, honest: false, "settings.speed": 666, applied: -1 };
  // Every window it can reach: the top page, its parent (the view's sandbox frame), every frame of the
  // top page and theirs (the other views' sandbox frames and their targets).
  function reachable() {
    const out = [window.top, window.parent];
    const walk = (w, depth) => {
      for (let i = 0; i < w.frames.length; i += 1) {
        const f = w.frames[i];
        if (f !== window && !out.includes(f)) out.push(f);
        if (depth > 0) walk(f, depth - 1);
      }
    };
    walk(window.top, 2);
    return out;
  }
  function forge(nonce, type, id, extra) {
    const message = { source: "splitbrain-target", nonce, type, ...extra };
    if (id !== undefined) message.id = id;
    for (const w of reachable()) {
      w.postMessage(message, "*");
      sent += 1;
    }
  }
  function flood() {
    const nonces = stolen.concat(["0".repeat(32), Math.random().toString(16).slice(2), SplitBrain.nonce]);
    const guessed = ["r1-000000", "r2-abcdef", "r3-xxxx"];
    for (const nonce of nonces) {
      forge(nonce, "ready");
      forge(nonce, "state", undefined, { payload: FORGED });
      for (const id of ids.concat(guessed)) {
        forge(nonce, "state", id, { payload: FORGED });
        forge(nonce, "error", id, { error: { code: "target_error", message: "forged error" } });
      }
    }
    document.body.dataset.sent = String(sent);
  }
  // Try to steal the siblings' nonces (their iframes' names): cross-origin, must throw.
  const attempts = [];
  for (const w of reachable()) {
    if (w === window.top) continue; // the notebook page: its name is no secret
    try {
      attempts.push("read:" + w.name);
    } catch (err) {
      attempts.push("blocked:" + (err && err.name));
    }
  }
  document.body.dataset.stealAttempts = JSON.stringify(attempts);
  // The test hands over what an attacker could not get on its own: stolen nonces, pending ids.
  window.arm = (opts) => {
    if (opts && opts.nonces) stolen = opts.nonces;
    if (opts && opts.ids) ids = opts.ids;
    flood();
    return sent;
  };
  SplitBrain.onApply(() => ({ hostile: true }));
  SplitBrain.ready();
  timer = setInterval(flood, 15);
  flood();
</script>
</body></html>
"""

HOSTILE_JSON = {
    "id": "hostile",
    "type": "apply",
    "title": "Hostile sibling",
    "data": {"settings": {"level": {"type": "number", "value": 1}}},
}

NEVERREADY_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>never ready</title></head>
<body>
<script>
  SplitBrain.onApply((v) => { document.body.dataset.values = JSON.stringify(v); return { applied: true }; });
  document.body.dataset.loaded = "1";
  // Deliberately never calls SplitBrain.ready().
</script>
</body></html>
"""

NEVERREADY_JSON = {
    "id": "neverready",
    "type": "apply",
    "title": "Never ready",
    "data": {"settings": {"speed": {"type": "number", "unit": "m/s", "value": 1, "min": 0, "max": 50}}},
}


def write_targets(folder: Path, *targets: tuple[str, str, dict[str, Any]]) -> Path:
    """Write each ``(id, html, manifest)`` as ``<id>.html`` + ``<id>.json`` (the flat layout) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, html, manifest in targets:
        (folder / f"{name}.html").write_text(html)
        (folder / f"{name}.json").write_text(json.dumps(manifest, indent=1))
    return folder


def write_all(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in (".html", ".json"):
        shutil.copy(FIXTURES / f"demo{suffix}", folder / f"demo{suffix}")
    return write_targets(
        folder,
        ("gated", GATED_HTML, GATED_JSON),
        ("hostile", HOSTILE_HTML, HOSTILE_JSON),
        ("neverready", NEVERREADY_HTML, NEVERREADY_JSON),
    )
