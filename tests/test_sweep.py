"""sb.sweep: every point of a grid measured on headless pages, one row per point, in grid order.

The tests marked ``browser`` run real pages in headless Chromium (they skip without it, and fail
under SPLITBRAIN_REQUIRE_BROWSER=1); the argument checks need no browser: they fail before one starts.
"""

from __future__ import annotations

import importlib
import itertools
import math
import subprocess
import sys
from pathlib import Path

import pytest

import splitbrain_widget as sb
from splitbrain_widget.features import _sweep_pages as sweep_pages
from splitbrain_widget.hosts._headless_engine import HeadlessError

from .browser_env import require_browser, run_async
from .fake_view import wait_for

FIXTURES = Path(__file__).parent / "fixtures" / "targets"
DEMO = FIXTURES / "demo.json"
browser = pytest.mark.browser
sweep_module = importlib.import_module("splitbrain_widget.sweep")  # sb.sweep is the function


def textbook_range(speed: float, angle_deg: float, g: float = 9.81) -> float:
    return speed**2 * math.sin(math.radians(2 * angle_deg)) / g


# -- the table ------------------------------------------------------------------------------------


@browser
def test_a_sweep_of_100_points_returns_100_rows_in_grid_order(engine: None) -> None:
    grid = {"angle": range(10, 60), "drag": [0, 0.02]}
    df = sb.sweep("projectile", grid, progress=False)
    assert len(df) == 100
    observables = ["range", "max_height", "flight_time", "impact_speed", "landed", "t", "x", "y"]
    assert list(df.columns) == ["angle", "drag", *observables, "ok", "error"]
    assert list(zip(df["angle"], df["drag"], strict=True)) == list(itertools.product(range(10, 60), [0, 0.02]))
    assert df["ok"].all() and df["error"].isna().all()


@browser
def test_projectile_range_is_the_textbook_one_where_drag_is_zero(engine: None) -> None:
    df = sb.sweep("projectile", {"angle": range(10, 81, 5), "drag": [0, 0.02], "speed": [15, 25]}, progress=False)
    assert df["ok"].all()
    still = df[df["drag"] == 0]
    assert len(still) == 30
    for row in still.itertuples():
        assert row.range == pytest.approx(textbook_range(row.speed, row.angle), rel=1e-3), row
    dragged = df[df["drag"] > 0]
    assert (dragged["range"].to_numpy() < still["range"].to_numpy()).all(), "drag shortens every flight"


@browser
def test_each_row_holds_what_the_page_measured_for_its_own_point(engine: None) -> None:
    """Points out of order, many pages each answering several at once: no row gets another's result."""
    angles = [70, 20, 45, 10, 80, 30, 55, 15, 65, 40, 25, 75, 35, 60, 50] * 4
    speeds = [10 + i for i in range(len(angles))]
    df = sb.sweep("projectile", {"angle": angles, "speed": speeds}, pages=3, measure="range", progress=False)
    assert list(df["angle"]) == [a for a in angles for _ in speeds]
    assert list(df["speed"]) == speeds * len(angles)
    expected = [textbook_range(s, a) for a, s in itertools.product(angles, speeds)]
    assert df["range"].tolist() == pytest.approx(expected, rel=1e-3)


@browser
def test_a_point_the_manifest_refuses_is_a_failed_row_and_the_others_are_intact(engine: None) -> None:
    df = sb.sweep("projectile", {"angle": [30, 95, 60], "speed": [20]}, progress=False)
    assert df["ok"].tolist() == [True, False, True]
    refused = df.iloc[1]
    assert refused["error"] == "invalid_value" and refused["angle"] == 95
    assert math.isnan(refused["range"]) and math.isnan(refused["flight_time"])
    assert df.iloc[0]["range"] == pytest.approx(textbook_range(20, 30), rel=1e-3)
    assert df.iloc[2]["range"] == pytest.approx(textbook_range(20, 60), rel=1e-3)
    assert df.iloc[[0, 2]]["error"].isna().all()


@browser
def test_measure_keeps_only_the_named_observables(engine: None) -> None:
    df = sb.sweep("projectile", {"angle": [30, 45]}, measure=["flight_time", "range"], progress=False)
    assert list(df.columns) == ["angle", "flight_time", "range", "ok", "error"]


PLAIN_PAGE = """<!doctype html><html><body><script>
  const values = {};
  SplitBrain.onApply((v) => { Object.assign(values, v); return { ...values, doubled: 2 * values["settings.speed"] }; });
  SplitBrain.ready();
</script></body></html>"""
PLAIN_MANIFEST = '{"id": "plain", "type": "apply", "data": {"settings": {"speed": {"type": "number", "value": 1}}}}'


@browser
def test_without_declared_observables_every_reported_key_but_the_parameters_is_kept(
    engine: None, tmp_path: Path
) -> None:
    (tmp_path / "plain.html").write_text(PLAIN_PAGE)
    (tmp_path / "plain.json").write_text(PLAIN_MANIFEST)
    df = sb.sweep(tmp_path / "plain.html", {"speed": [1.5, 4]}, progress=False)
    assert list(df.columns) == ["speed", "doubled", "ok", "error"]
    assert df["doubled"].tolist() == [3, 8]


@browser
def test_a_target_whose_pages_never_start_fails_the_sweep_saying_so(
    engine: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mute.html").write_text("<!doctype html><html><body><script>/* never ready */</script></body></html>")
    (tmp_path / "mute.json").write_text(PLAIN_MANIFEST.replace('"plain"', '"mute"'))
    monkeypatch.setattr(sweep_pages, "START_TIMEOUT_S", 1.0)
    with pytest.raises(HeadlessError, match=r"no sweep page of .*mute\.html started") as caught:
        sb.sweep(tmp_path / "mute.html", {"speed": [1, 2, 3]}, pages=2, progress=False)
    assert caught.value.code == "not_ready"


@browser
def test_a_lost_page_gives_its_points_to_the_pages_that_still_answer(engine: None) -> None:
    """A page that crashed (or was stopped for flooding) fails every point at once: it must not take
    the sweep's remaining points with it while a healthy page is there."""
    plan = sweep_pages.Plan("projectile", measure=("range",), advance=None, pages=2, open_page=sb.HeadlessTarget)
    alive, lost = sb.HeadlessTarget("projectile"), sb.HeadlessTarget("projectile")
    try:
        assert alive.fetch_state().ok and lost.fetch_state().ok
        lost.expect_view(0)  # no page is on its way any more: calls on it answer at once
        lost._headless.page.close()  # the page is gone, as after a crash
        wait_for(lambda: lost.views == 0, "the lost page's view to detach")
        points = [{"angle": angle} for angle in range(10, 80)]
        outcomes = run_async(sweep_pages.measure_points([lost, alive], points, plan))
        assert [o.ok for o in outcomes] == [True] * len(points), [o.error for o in outcomes if not o.ok][:3]
        expected = [textbook_range(20, angle) for angle in range(10, 80)]  # the projectile's default speed
        assert [o.observed["range"] for o in outcomes] == pytest.approx(expected, rel=1e-3)
    finally:
        alive.close()
        lost.close()


@browser
def test_advance_runs_every_point_from_the_reset_for_that_many_simulated_seconds(engine: None) -> None:
    """The same point twice on one page: the second starts from the reset too, not where the first ended."""
    df = sb.sweep("pendulum", {"amplitude": [20, 20, 40]}, advance=3, pages=1, progress=False)
    assert df["ok"].all()
    assert df["t"].tolist() == pytest.approx([3, 3, 3], abs=0.01)  # 1 ms physics steps
    assert df.iloc[0]["angle"] == df.iloc[1]["angle"] and df.iloc[0]["energy"] == df.iloc[1]["energy"]
    assert df.iloc[2]["energy"] > df.iloc[0]["energy"], "the larger amplitude has more energy"


@browser
def test_after_advance_the_projectile_has_landed_where_its_range_says(engine: None) -> None:
    df = sb.sweep("projectile", {"angle": [30, 60], "speed": [20]}, advance=10, progress=False)
    assert df["landed"].tolist() == [True, True]
    assert df["x"].tolist() == pytest.approx(df["range"].tolist(), abs=1e-3)


@browser
def test_a_widget_is_swept_from_its_current_values_and_keeps_them(engine: None) -> None:
    with sb.HeadlessTarget("projectile") as sim:
        assert sim.set_parameters({"speed": 30, "angle": 10}).ok
        df = sb.sweep(sim, {"angle": [30, 45]}, progress=False)
        assert df["range"].tolist() == pytest.approx([textbook_range(30, 30), textbook_range(30, 45)], rel=1e-3)
        assert sim.values["launch.speed"] == 30 and sim.values["launch.angle"] == 10


@browser
def test_the_progress_bar_counts_every_point_and_progress_false_shows_none(
    engine: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sweep_module, "PROGRESS_DELAY_S", 0.0)  # "long" is one second: here, at once
    sb.sweep("projectile", {"angle": range(10, 30)}, progress=False)
    assert "sweep projectile" not in capsys.readouterr().err
    sb.sweep("projectile", {"angle": range(10, 30)})
    err = capsys.readouterr().err
    assert "sweep projectile" in err and "20/20" in err


@browser
def test_a_local_sweep_never_imports_dask() -> None:
    require_browser()
    code = (
        "import sys, splitbrain_widget as sb\n"
        "df = sb.sweep('projectile', {'angle': [30, 45]}, progress=False)\n"
        "assert df['ok'].all(), df\n"
        "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


# -- arguments (no browser: they fail before one starts) -------------------------------------------


def test_import_stays_light_and_sb_sweep_is_the_function() -> None:
    code = (
        "import sys, splitbrain_widget as sb, splitbrain_widget.sweep\n"
        "print(callable(sb.sweep), sorted(m for m in ('pandas', 'tqdm', 'dask', 'distributed') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "True []"
    assert "sweep" in sb.__all__


def test_an_unknown_grid_name_is_refused_with_the_closest_real_one() -> None:
    with pytest.raises(sb.ParameterError, match=r"grid.*unknown parameter 'angel'") as caught:
        sb.sweep("projectile", {"angel": [10, 20]})
    assert caught.value.code == "unknown_param" and "launch.angle" in caught.value.hint


def test_a_read_only_parameter_cannot_be_swept() -> None:
    with pytest.raises(sb.ParameterError, match="read-only") as caught:
        sb.sweep(DEMO, {"serial": ["A-2", "A-3"]})
    assert caught.value.code == "readonly"


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({}, r"grid=\.\.\.\) is empty"),
        ({"angle": []}, r"grid\['angle'\] has no values"),
        ({"angle": [10], "launch.angle": [20]}, "'angle' and 'launch.angle' name the same parameter"),
    ],
)
def test_an_empty_or_doubled_grid_is_refused(grid: dict[str, list[int]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sb.sweep("projectile", grid)


def test_a_grid_that_is_no_mapping_is_refused() -> None:
    with pytest.raises(TypeError, match="grid"):
        sb.sweep("projectile", [("angle", [10])])  # type: ignore[arg-type]


@pytest.mark.parametrize("pages", [0, -1, 1.5, True, "2", 1000])
def test_bad_pages_are_refused_naming_the_argument(pages: object) -> None:
    with pytest.raises(ValueError, match=r"pages=\.\.\..*from 1 to 32, got"):
        sb.sweep("projectile", {"angle": [10]}, pages=pages)  # type: ignore[arg-type]


@pytest.mark.parametrize("advance", [-1, math.nan, math.inf, "3", True])
def test_bad_advance_is_refused_naming_the_argument(advance: object) -> None:
    with pytest.raises(ValueError, match=r"advance=\.\.\..*>= 0"):
        sb.sweep("projectile", {"angle": [10]}, advance=advance)  # type: ignore[arg-type]


def test_an_unknown_observable_is_refused_with_the_closest_real_one() -> None:
    with pytest.raises(ValueError, match=r"measure=.*declares no 'rnage'.*did you mean range"):
        sb.sweep("projectile", {"angle": [10]}, measure="rnage")
    with pytest.raises(ValueError, match=r"measure=\.\.\.\): expected at least one name"):
        sb.sweep("projectile", {"angle": [10]}, measure=[])


def test_a_target_that_is_none_of_the_kinds_is_refused() -> None:
    with pytest.raises(TypeError, match="target"):
        sb.sweep(42, {"angle": [10]})  # type: ignore[arg-type]
    with pytest.raises(sb.TargetError, match="no target 'projectil'"):
        sb.sweep("projectil", {"angle": [10]})
