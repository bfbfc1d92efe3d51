"""The protocol's version says the same everywhere it is written.

``splitbrain_widget/protocol.py`` holds it: ``PROTOCOL_VERSION`` (the major) and ``PROTOCOL_MINOR``. It is written
again in ``js/protocol.js`` (its constants and its heading), in the built bundles that send the handshake, in the
title, *Versions* and *Changes* of ``docs/protocol.md``, in the schema's ``$id`` and title, in the JS tests of the
constants and in the shared examples' handshake. A version named as history ("(1.5)", "protocol 1.6": when
something came) may be older than the current one, never newer. The files are read as text: no browser, no node.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from splitbrain_widget import protocol

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "splitbrain_widget" / "static"
CURRENT = f"{protocol.PROTOCOL_VERSION}.{protocol.PROTOCOL_MINOR}"
MAJOR = str(protocol.PROTOCOL_VERSION)
# The built bundles that send the view's `attached` handshake, with the major version in it.
HANDSHAKE_BUNDLES = ("widget.js", "host_page.js", "sandbox.js")


def read(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def found(pattern: str, text: str) -> list[str]:
    """Every match of ``pattern``, as the groups it matched joined by dots (``"1.7"``, or ``"1"`` for one)."""
    matches = re.finditer(pattern, text, flags=re.MULTILINE)
    return [".".join(group for group in match.groups() if group is not None) for match in matches]


def major_minor(path: str, major: str, minor: str) -> list[str]:
    """The versions a file writes as two numbers apart (``major`` and ``minor`` each match one of them)."""
    text = read(path)
    return [f"{a}.{b}" for a in found(major, text) for b in found(minor, text)]


def newest_change() -> list[str]:
    """The newest version *Changes* has an entry for (entries are ``- **1.7** (date) — ...``)."""
    entries = found(r"^- \*\*(\d+)\.(\d+)\*\* \(", read("docs/protocol.md"))
    newest = max(entries, key=lambda version: tuple(int(part) for part in version.split(".")), default=None)
    return [newest] if newest else []


def schema_field(key: str, pattern: str) -> list[str]:
    return found(pattern, json.loads(read("docs/protocol.schema.json"))[key])


def bundle_majors(name: str) -> list[str]:
    """The major version a built bundle puts in the handshake (a constant, or inlined when minified)."""
    return found(r"\bPROTOCOL_VERSION = (\d+);|\bprotocol:(\d+)\b", (STATIC / name).read_text(encoding="utf-8"))


def example_handshakes() -> list[str]:
    examples = json.loads(read("tests/fixtures/protocol_examples.json"))["view_to_kernel"]["valid"]
    return [
        str(entry["message"]["payload"]["protocol"])
        for entry in examples
        if entry["message"].get("type") == "attached" and not entry.get("other_version")
    ]


# Where the version is written: what each place must say, and how to read what it says.
PLACES: dict[str, tuple[str, Callable[[], list[str]]]] = {
    "js/protocol.js constants": (
        CURRENT,
        lambda: major_minor(
            "js/protocol.js", r"^export const PROTOCOL_VERSION = (\d+);", r"^export const PROTOCOL_MINOR = (\d+);"
        ),
    ),
    "js/protocol.js heading": (CURRENT, lambda: found(r"wire protocol version (\d+)\.(\d+)\.", read("js/protocol.js"))),
    "js/tests/protocol.test.mjs constants": (
        CURRENT,
        lambda: major_minor(
            "js/tests/protocol.test.mjs",
            r"assert\.equal\(PROTOCOL_VERSION, (\d+)\)",
            r"assert\.equal\(protocol\.PROTOCOL_MINOR, (\d+)\)",
        ),
    ),
    "docs/protocol.md title": (
        CURRENT,
        lambda: found(r"\A# splitbrain wire protocol — version (\d+)\.(\d+)\n", read("docs/protocol.md")),
    ),
    "docs/protocol.md Versions": (
        CURRENT,
        lambda: major_minor("docs/protocol.md", r"`PROTOCOL_VERSION = (\d+)`", r"`PROTOCOL_MINOR = (\d+)`"),
    ),
    "docs/protocol.md newest Changes entry": (CURRENT, newest_change),
    "docs/protocol.schema.json $id": (CURRENT, lambda: schema_field("$id", r"protocol:(\d+)\.(\d+)$")),
    "docs/protocol.schema.json title": (CURRENT, lambda: schema_field("title", r"protocol (\d+)\.(\d+):")),
    "tests/fixtures/protocol_examples.json handshakes": (MAJOR, example_handshakes),
    **{f"static/{name}": (MAJOR, lambda name=name: bundle_majors(name)) for name in HANDSHAKE_BUNDLES},
}


@pytest.mark.parametrize("place", PLACES)
def test_the_version_written_there_is_protocol_py_s(place: str) -> None:
    expected, read_place = PLACES[place]
    versions = read_place()
    assert versions, f"{place}: the version is no longer where this test looks for it"
    assert set(versions) == {expected}, f"{place} says {sorted(set(versions))}, protocol.py {expected}"


def test_every_bundle_with_the_handshake_constant_has_this_major() -> None:
    for bundle in sorted(STATIC.glob("*.js")):
        assert set(bundle_majors(bundle.name)) <= {MAJOR}, f"static/{bundle.name} says another major version"


# Prose that names a version as history: "(1.5)" in docs/protocol.md, "protocol 1.6" anywhere.
HISTORY_FILES = ("docs/protocol.md", "docs/writing-targets.md", "README.md", "ARCHITECTURE.md", "CHANGELOG.md")
JS_FOLDERS = ("js/view", "js/host", "js/page")


def history_mentions() -> list[tuple[str, str]]:
    mentions = [("docs/protocol.md", version) for version in found(r"\((\d+)\.(\d+)\)", read("docs/protocol.md"))]
    js_sources = [f"{folder}/{p.name}" for folder in JS_FOLDERS for p in sorted((ROOT / folder).glob("*.js"))]
    for path in [*HISTORY_FILES, "js/protocol.js", *js_sources]:
        mentions += [(path, version) for version in found(r"(?i)\bprotocol (\d+)\.(\d+)\b", read(path))]
    return mentions


def test_no_mention_of_a_version_is_newer_than_the_current_one() -> None:
    mentions = history_mentions()
    assert mentions, "no version mentioned as history: the patterns no longer match"
    current = (protocol.PROTOCOL_VERSION, protocol.PROTOCOL_MINOR)
    newer = [(path, v) for path, v in mentions if tuple(int(part) for part in v.split(".")) > current]
    assert not newer, f"newer than protocol.py's {CURRENT}: {newer}"


def heading_anchors(markdown: str) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", markdown, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def test_links_into_protocol_md_name_its_headings() -> None:
    # A heading carries the version its section last changed in ("Bounds (1.7)" is #bounds-17): a link
    # to it breaks when that version moves on.
    anchors = heading_anchors(read("docs/protocol.md"))
    links = [
        (path, anchor)
        for path in ("README.md", "ARCHITECTURE.md", "CHANGELOG.md", "docs/writing-targets.md")
        for anchor in re.findall(r"protocol\.md#([\w-]+)", read(path))
    ]
    assert links, "no link into docs/protocol.md: the pattern no longer matches"
    assert [(path, anchor) for path, anchor in links if anchor not in anchors] == []
