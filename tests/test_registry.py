"""Drop-in targets: found on the next call, gone when removed, broken ones reported not fatal."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import splitbrain_widget as sb
from splitbrain_widget.manifest import _page
from splitbrain_widget.registry import DEFAULT_CSP, inject_target_api

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
MANIFEST = {"id": "mine", "title": "Mine", "data": {"s": {"speed": {"type": "number", "value": 1}}}}
PAGE = "<!doctype html><html><head><title>x</title></head><body><script>SplitBrain.ready()</script></body></html>"


def _drop_pair(folder: Path, name: str, manifest: dict[str, object] | str = MANIFEST) -> None:
    (folder / f"{name}.html").write_text(PAGE)
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (folder / f"{name}.json").write_text(text)


def test_builtin_targets_are_listed() -> None:
    targets = sb.list_targets()
    assert "bouncer" in targets.ids()
    assert all(t.builtin for t in targets)
    assert targets.problems == []


def test_a_dropped_pair_appears_and_disappears(tmp_path: Path) -> None:
    assert "mine" not in sb.list_targets(tmp_path).ids()
    _drop_pair(tmp_path, "mine")
    listed = sb.list_targets(tmp_path)
    assert "mine" in listed.ids() and not listed.get("mine").builtin  # type: ignore[union-attr]
    (tmp_path / "mine.html").unlink()
    (tmp_path / "mine.json").unlink()
    assert "mine" not in sb.list_targets(tmp_path).ids()


def test_a_dropped_folder_appears_and_disappears(tmp_path: Path) -> None:
    folder = tmp_path / "folded"
    folder.mkdir()
    (folder / "index.html").write_text(PAGE)
    (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    assert "folded" in sb.list_targets(tmp_path).ids()
    assert sb.load_target("folded", tmp_path).manifest.title == "Mine"
    shutil.rmtree(folder)
    assert "folded" not in sb.list_targets(tmp_path).ids()


def test_the_environment_path_list_is_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _drop_pair(tmp_path, "fromenv")
    monkeypatch.setenv("SPLITBRAIN_TARGETS", str(tmp_path))
    assert "fromenv" in sb.list_targets().ids()


def test_a_malformed_manifest_is_reported_and_the_rest_still_listed(tmp_path: Path) -> None:
    _drop_pair(tmp_path, "good")
    bad = json.loads(json.dumps(MANIFEST))
    bad["data"]["s"]["speed"]["type"] = "num"
    _drop_pair(tmp_path, "foo", bad)
    listed = sb.list_targets(tmp_path)
    assert "good" in listed.ids() and "bouncer" in listed.ids() and "foo" not in listed.ids()
    assert any(
        p.endswith('foo.json: data.s.speed.type: expected one of number, integer, boolean, string, array, got "num"')
        for p in listed.problems
    ), listed.problems


def test_invalid_json_and_missing_halves_are_reported(tmp_path: Path) -> None:
    _drop_pair(tmp_path, "broken", "{not json")
    (tmp_path / "lonely.json").write_text(json.dumps(MANIFEST))
    (tmp_path / "orphan.html").write_text(PAGE)
    problems = "\n".join(sb.list_targets(tmp_path).problems)
    assert "broken.json: line 1" in problems
    assert "lonely.json: no page lonely.html" in problems
    assert "orphan.html: no manifest orphan.json" in problems


def test_an_edited_manifest_is_reread(tmp_path: Path) -> None:
    _drop_pair(tmp_path, "mine")
    assert sb.list_targets(tmp_path).get("mine").title == "Mine"  # type: ignore[union-attr]
    edited = {**MANIFEST, "title": "Renamed"}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(edited))
    import os

    os.utime(path, ns=(1, 10**18))  # a different mtime even on coarse clocks
    assert sb.list_targets(tmp_path).get("mine").title == "Renamed"  # type: ignore[union-attr]


def test_user_folders_take_precedence_over_builtins(tmp_path: Path) -> None:
    _drop_pair(tmp_path, "bouncer", {**MANIFEST, "title": "My bouncer"})
    assert sb.load_target("bouncer", tmp_path).manifest.title == "My bouncer"


def test_unknown_target_suggests_real_ids() -> None:
    with pytest.raises(sb.TargetError) as info:
        sb.load_target("bouncr")
    assert info.value.code == "unknown_target"
    assert "did you mean bouncer?" in str(info.value)


def test_load_by_path(tmp_path: Path) -> None:
    _drop_pair(tmp_path, "mine")
    for path in (tmp_path / "mine.html", tmp_path / "mine.json"):
        assert sb.load_target(path).id == "mine"
    with pytest.raises(sb.TargetError, match="missing"):
        sb.load_target(tmp_path / "absent.html")


def test_a_broken_target_loaded_by_id_says_why(tmp_path: Path) -> None:
    _drop_pair(tmp_path, "foo", {"id": "foo", "data": {"s": {"x": {"type": "num", "value": 1}}}})
    with pytest.raises(sb.TargetError, match=r"failed to load: .*foo.json: data.s.x.type"):
        sb.load_target("foo", tmp_path)


def test_the_bridge_and_csp_are_injected_before_the_pages_scripts() -> None:
    target = sb.load_target("demo", FIXTURES)
    html = target.html
    head = html.index("<head>") + len("<head>")
    assert html[head:].startswith('<meta http-equiv="Content-Security-Policy"')
    assert html.index("SplitBrain") < html.index("SplitBrain.onApply")
    assert "connect-src 'none'" in html
    assert "</script" not in html[head : html.index("</script>", head)]
    # the first <base> wins: the page does not inherit the notebook page's URL as its base
    assert html.index('<base href="about:blank">') < html.index("<script>")


def test_injection_without_a_head() -> None:
    assert inject_target_api("<p>hi</p>").startswith('<html><head><meta http-equiv="Content-Security-Policy"')
    assert inject_target_api("<!DOCTYPE html><p>hi</p>").startswith("<!DOCTYPE html><html><head><meta")
    assert "connect-src https://example.org" in inject_target_api("<p>", csp="connect-src https://example.org")
    assert DEFAULT_CSP in inject_target_api("<p>")


@pytest.mark.parametrize(
    "page",
    [
        "<!doctype html><!-- <head> --><html><head><title>x</title></head><body></body></html>",
        "<!doctype html><script>var s = '<head>';</script><html><head></head></html>",
        "<!doctype html><html><head data-x='<head>'><![CDATA[<head>]]></head></html>",
        "<script>fetch('http://127.0.0.1:9/')</script><!doctype html><html><head></head></html>",
        '<div title="<html><head>">a fragment</div>',
        "",
    ],
    ids=["comment", "script", "cdata-attribute", "script-before-head", "fragment", "empty"],
)
def test_the_policy_opens_the_document_whatever_the_page_holds(page: str) -> None:
    """Nothing of the page comes before our head: the parser meets the policy and the target API first
    (the browser suite loads such pages and counts the requests that reach a server: none)."""
    html = inject_target_api(page)
    prefix = html[: len(html) - len(page)]
    assert html.endswith(page) and (not page or page not in prefix)
    assert re.fullmatch(
        r"(<!DOCTYPE html>)?<html><head><meta http-equiv=\"Content-Security-Policy\" content=\"[^\"]+\">"
        r"<base href=\"about:blank\"><script>.*</script>",
        prefix,
        re.DOTALL,
    )
    assert prefix.startswith("<!DOCTYPE html>") == page.startswith("<!doctype html>")


@pytest.mark.parametrize(
    ("page", "doctype"),
    [
        ("<!DOCTYPE html><p>", "<!DOCTYPE html>"),
        ("\ufeff \n<!-- a --><!--> <!---><!doctype HTML ><p>", "<!DOCTYPE html>"),
        ('<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN"><p>', '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN">'),
        ("<p><!doctype html>", ""),  # a doctype after content does not count: the page renders in quirks mode
        ("<!-- <!doctype html> --><p>", ""),
    ],
)
def test_the_page_keeps_its_rendering_mode(page: str, doctype: str) -> None:
    assert _page._leading_doctype(page) == doctype
