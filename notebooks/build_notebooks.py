"""Write the example notebooks from this file, then run them to store their outputs.

The notebooks are generated so that they can be reviewed as Python source and regenerated after a
change to the package or to a built-in target::

    .venv/bin/python notebooks/build_notebooks.py                 # every notebook
    .venv/bin/python notebooks/build_notebooks.py quickstart      # only some
    .venv/bin/python notebooks/build_notebooks.py --no-execute    # cells only, no outputs
    .venv/bin/python notebooks/build_notebooks.py --rerun         # the committed cells, run again

Each notebook is built with nbformat and executed with nbclient in this folder, the way nbval runs
it: no frontend (so no notebook view of any widget), ``SPLITBRAIN_HEADLESS=1`` (so every widget runs
its calls on a seeded page in headless Chromium, on a virtual clock: the outputs are what the
pages measured), no API key (the generator removes the provider keys and ``SPLITBRAIN_MODEL`` from
the kernel's environment) and no network. The stored outputs are the ones ``make notebooks``
(nbval, with ``sanitize.cfg`` and ``conftest.py``) compares against. Cell ids are stable, and the
widget state and execution timings nbclient records are stripped and widget model ids made stable,
so a regeneration only changes what really changed (and the clock times in robustness.ipynb's
audit log).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import textwrap
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
KERNEL_NAME = "python3"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
HEADLESS = "SPLITBRAIN_HEADLESS"  # the notebooks' calls run on headless pages (see conftest.py)
# Environment variables that would change what the notebooks print (see real_models.ipynb).
ENVIRONMENT_DEPENDENT = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "SPLITBRAIN_MODEL",
    "SPLITBRAIN_TARGETS",
)

Cell = tuple[str, str]  # ("md" | "code", source)


def md(text: str) -> Cell:
    return ("md", textwrap.dedent(text).strip())


def code(text: str) -> Cell:
    return ("code", textwrap.dedent(text).strip())


# == quickstart ========================================================================================

QUICKSTART: list[Cell] = [
    md(
        """
        # splitbrain-widget quickstart

        A *target* is a live simulation page that runs in your browser, inside this notebook. You steer
        it from Python, and in plain language through an agent.

        Run the cells from top to bottom. Nothing here needs an API key or a network.
        """
    ),
    code(
        """
        import splitbrain_widget as sb

        sb.list_targets()
        """
    ),
    md(
        """
        ## Show a target

        `TargetWidget` puts a target in a sandboxed iframe below the cell. The line under it shows the
        target's title and whether it is ready.
        """
    ),
    code(
        """
        sim = sb.TargetWidget("bouncer", height=320)
        sim
        """
    ),
    md(
        """
        ## Steer it from Python

        Each call checks the value against the target's manifest (type, unit, range), updates the
        kernel's copy, sends it to the page and returns a `ToolResult`. Try other values: the ball
        changes at once. `ok` says the page applied the change. Where no view is open the change is
        *kept, not applied* (`ok` False, `kept` True) and the page gets it once the widget is
        displayed, unless `SPLITBRAIN_HEADLESS=1` is set: then a page in headless Chromium answers
        until a view appears. That is how this notebook's stored outputs were made.
        """
    ),
    code(
        """
        result = sim.set_parameter("speed", 12)
        print(result.ok, result.kept, result.changed)
        """
    ),
    code(
        """
        result = sim.set_parameters({"color": "red", "size": 24})
        print(result.ok, sorted(result.changed))
        """
    ),
    md(
        """
        A name can be the short leaf name (`speed`) or the dotted path (`settings.speed`). A value the
        manifest does not allow is refused with a reason, and nothing changes:
        """
    ),
    code(
        """
        print(sim.set_parameter("speed", 500))
        print(sim.set_parameter("sped", 3))
        """
    ),
    md(
        """
        ## Read it back

        `sim.values` is the kernel's copy of every parameter; `get_parameters()` adds each one's type,
        unit and range.
        """
    ),
    code(
        """
        sim.values
        """
    ),
    code(
        """
        sim.get_parameters().parameters["settings.speed"]
        """
    ),
    md(
        """
        `fetch_state()` asks the live page what it observes (for the bouncer: where the ball is and how
        often it hit a wall). On a headless page time stands still between calls, so there the ball
        is still where it started.
        """
    ),
    code(
        """
        state = sim.fetch_state()
        if state.ok:
            print({name: state.state[name] for name in ("x", "y", "bounces")})
        else:
            print(state)
        """
    ),
    md(
        """
        ## Reset

        `reset()` puts every parameter back to the manifest's default.
        """
    ),
    code(
        """
        sim.reset()
        sim.values
        """
    ),
    md(
        """
        ## Ask in plain language

        An `Agent` turns a request into the same tool calls. With no model named it uses the *offline
        planner*: a small deterministic stand-in for a language model that understands simple requests,
        needs no key and never touches the network. `real_models.ipynb` shows how to plug in a real one.

        `await agent.aask(...)` works wherever a notebook runs, Colab's older kernels included;
        `agent.ask(...)`, its blocking twin, needs ipykernel 7 (on older kernels it says so and names
        this form).
        """
    ),
    code(
        """
        agent = sb.Agent(sim)
        result = await agent.aask("set the speed to 12 and make it red")
        print(result.text)
        """
    ),
    md("The answer lists the tool calls it made, each with its result:"),
    code(
        """
        for call in result.tool_calls:
            print(call.name, call.arguments, "ok" if call.ok else call.result["error"])
        print((await agent.aask("what is the speed?")).text)
        """
    ),
    md(
        """
        ## The chat panel

        With `chat=True` the widget gets a chat panel beside the target: type a request, watch each tool
        call appear as a chip you can open, stop a run, and move the parameter inspector's controls. The
        panel is answered by the same agent (the offline planner unless `SPLITBRAIN_MODEL` names a model).
        """
    ),
    code(
        """
        sb.TargetWidget("bouncer", chat=True)
        """
    ),
    md(
        """
        ## What was done, as code

        Every change (from Python, the agent, the chat panel or the inspector's controls) is in the
        audit log; `sim.audit.to_code()` turns it into the fewest calls that reproduce the values, each
        headed by the request that caused it. The chat panel's **Copy as code** button puts the same
        code on the clipboard, and `sim.to_cell()` puts it into a new cell below this one.
        """
    ),
    code(
        """
        print(sim.audit.to_code())
        """
    ),
    md(
        """
        ## Next

        - `teaching_projectile.ipynb`: steer a projectile to land at 50 m, with the physics explained.
        - `your_own_target.ipynb`: write a target of your own in a few lines of HTML.
        - `sweeps.ipynb`: measure a target over a grid of values on headless pages, plot it, and run
          the same sweep on a Dask cluster.
        - `real_models.ipynb`: OpenAI, Anthropic, Google, Ollama and local servers.
        - `robustness.ipynb`: retries, the loop guard, approval, the audit log and cancelling.
        - `mcp.ipynb`: the widgets as an MCP server, for Claude Code, Cursor, VS Code and other agents.
        """
    ),
]


# == teaching_projectile ===============================================================================

TEACHING_PROJECTILE: list[Cell] = [
    md(
        """
        # Make the projectile land at 50 m

        A lesson in steering a simulation toward a goal: we work out what to change from the physics,
        change it, and check the result against what the simulation *observes*. First without air, where
        a formula gives the answer; then with air drag, where we have to measure and correct.
        """
    ),
    code(
        """
        import math

        import splitbrain_widget as sb

        sim = sb.TargetWidget("projectile", height=380)
        sim
        """
    ),
    md(
        """
        ## The physics without air

        A ball launched at speed $v$ and angle $\\theta$ above the horizontal moves with constant
        horizontal speed while gravity $g$ slows its climb:

        $$x(t) = v\\cos\\theta\\,t, \\qquad y(t) = v\\sin\\theta\\,t - \\tfrac{1}{2} g t^2 .$$

        It is back on the ground ($y = 0$) after $t = 2v\\sin\\theta / g$, so it lands at

        $$R = \\frac{v^2 \\sin 2\\theta}{g}.$$

        **Why 45° goes furthest:** $\\sin 2\\theta$ is at most 1, at $2\\theta = 90°$. Angles the same
        distance either side of 45° (30° and 60°) land at the same spot: the low one is fast but short,
        the high one long but slow.
        """
    ),
    code(
        """
        def textbook_range(speed, angle, gravity=9.81):
            \"\"\"R = v² sin(2θ) / g: no air, launched from the ground.\"\"\"
            return speed**2 * math.sin(math.radians(2 * angle)) / gravity


        for angle in (15, 30, 45, 60, 75):
            print(f"{angle:2d}°  {textbook_range(20, angle):5.2f} m")
        """
    ),
    md(
        """
        ## Aim for 50 m

        Turn the formula around: at 45° the speed that lands at $R$ is $v = \\sqrt{R g / \\sin 2\\theta}$.
        Set it, then ask the page for its observables. The page integrates the whole flight at launch, so
        its `range` is there as soon as the change is.
        """
    ),
    code(
        """
        GOAL = 50.0  # m
        g = sim.values["environment.gravity"]
        speed = round(math.sqrt(GOAL * g / math.sin(math.radians(2 * 45))), 3)
        sim.set_parameters({"angle": 45, "speed": speed})
        print(f"speed {speed} m/s at 45°: the formula predicts {textbook_range(speed, 45, g):.2f} m")

        state = sim.fetch_state()
        assert state.ok, state  # no page to ask: display the widget, or set SPLITBRAIN_HEADLESS=1
        print(f"the page measured {state.state['range']:.2f} m")
        """
    ),
    md(
        """
        ## What drag changes

        Air pushes against the motion, harder the faster the ball goes: with quadratic drag the
        acceleration is $\\vec a = -g\\,\\hat y - k\\,|\\vec v|\\,\\vec v$. The ball lands short, comes
        down steeper than it went up, and the best angle drops below 45° (a flatter launch spends less
        time in the air losing speed). There is no formula for $R$ any more: the page integrates the
        motion step by step (RK4), and we read what it measures.

        ## Steer by reading the observable

        Turn drag on and correct the speed until the ball lands at 50 m. `measure()` changes the page
        and reads the `range` it reports in its reply.

        The first correction assumes the range still grows like $v^2$ and scales the speed by
        $\\sqrt{50 / R}$. After that, each step draws a straight line through the last two tries and
        aims where it crosses 50 m (the *secant method*).
        """
    ),
    code(
        """
        def measure(**values):
            \"\"\"Set values on the page and return the range it measured.\"\"\"
            reply = sim.set_parameters(values)
            assert reply.ok, reply  # no page to ask: display the widget, or set SPLITBRAIN_HEADLESS=1
            return reply.state["range"]


        print("reading the range from the page, with k = 0.02 1/m")
        sim.set_parameter("drag", 0.02)
        tries = []  # (speed, range)
        for step in range(1, 11):
            reached = measure(speed=speed)
            print(f"try {step}: {speed:6.3f} m/s -> {reached:6.2f} m")
            if abs(reached - GOAL) < 0.01:
                break
            tries.append((speed, reached))
            if len(tries) == 1:
                speed = speed * math.sqrt(GOAL / reached)
            else:
                (v1, r1), (v2, r2) = tries[-2:]
                speed = v2 + (GOAL - r2) * (v2 - v1) / (r2 - r1)
            speed = round(speed, 3)
        """
    ),
    md(
        """
        With drag, is 45° still best at this speed? Measure a few angles:
        """
    ),
    code(
        """
        for angle in (30, 35, 40, 45, 50):
            print(f"{angle}°  {measure(angle=angle):6.2f} m")
        print(f"back to 45°: {measure(angle=45):.2f} m")
        """
    ),
    md(
        """
        ## The same goal in one call: `seek`

        `sim.seek("range", 50, vary="speed")` does what the loop above does, with a well-kept root
        finder instead of our secant steps: scipy's `brentq` first brackets the answer between two
        speeds whose ranges fall on either side of 50 m (here the ends of the manifest's 0-100 m/s),
        then narrows the bracket, each try measured on the page. It stops once a try lands within
        `tol` of the goal (by default 1%, 0.5 m; here 0.01 m, as the loop above), and `evaluations`
        lists every try.

        Both methods read the same page. The secant loop is shorter to write and converges fast from
        a good first guess, but nothing keeps it inside the allowed speeds, and two tries with the
        same range would divide by zero. `brentq` never leaves its bracket, so it always ends: with
        an answer, or with a clear "out of reach".
        """
    ),
    code(
        """
        result = sim.seek("range", GOAL, vary="speed", tol=0.01)
        print(result.message)
        for n, step in enumerate(result.evaluations, 1):
            print(f"try {n}: {step['value']:6.3f} m/s -> {step['observable']:6.2f} m")
        """
    ),
    md(
        """
        A goal the page cannot reach is refused with the reason, and the angle goes back where it
        was. As far as possible is a goal too: with drag the best angle is below 45°.
        """
    ),
    code(
        """
        far = sim.seek("range", 500, vary="angle")
        print(far.error.code, "-", far.error.message)
        print("angle is still", sim.values["launch.angle"], "°")

        best = sim.seek("range", "max", vary="angle")
        print(best.message)
        _ = sim.set_parameter("angle", 45)  # back to 45° for what follows
        """
    ),
    md(
        """
        ## Every angle at once

        `sb.sweep` measures a whole grid of values on headless pages of the same target (in Chromium,
        beside this one) and returns a pandas table, one row per point. Starting from this widget's
        values (the speed we found), it tries every angle from 10° to 80° without drag and with
        $k = 0.02$ 1/m:
        """
    ),
    code(
        """
        import matplotlib.pyplot as plt

        table = sb.sweep(sim, {"drag": [0, 0.02], "angle": range(10, 81)}, measure="range", progress=False)
        best = table.loc[table.groupby("drag")["range"].idxmax(), ["drag", "angle", "range"]]
        print(best.to_string(index=False))

        fig, ax = plt.subplots(figsize=(7, 3.5))
        for (drag, rows), (_, top) in zip(table.groupby("drag"), best.iterrows()):
            label = f"k = {drag:g} 1/m: best {top['angle']:g}°, {top['range']:.1f} m"
            (line,) = ax.plot(rows["angle"], rows["range"] / top["range"], label=label)
            ax.axvline(top["angle"], color=line.get_color(), linestyle=":")
        ax.set(xlabel="launch angle (°)", ylabel="range / longest range", title=f"launched at {speed} m/s")
        ax.legend(loc="lower center")
        plt.show()
        """
    ),
    md(
        """
        Each curve is drawn as a fraction of its own longest range, so that their shapes compare. Without
        drag the curve is symmetric about 45°, as $\\sin 2\\theta$ says. With drag it leans to the left:
        its top, the best angle, is below 45°, and high launches lose the most.

        ## Ask the agent

        The offline planner answers "what is ..." by reading the page's observables. It maps simple
        requests onto single changes and does not search for a goal like "land at 50 m": that is what
        the loop above does (or a real language model, see `real_models.ipynb`).
        """
    ),
    code(
        """
        agent = sb.Agent(sim)
        print(agent.ask("what is the range?").text)
        """
    ),
    md(
        """
        ## Try it

        1. On the Moon ($g$ = 1.62 m/s²), what speed lands at 50 m at 45°? Set `gravity` and check.
        2. Launch from a 20 m tower (`height`). Is 45° still the best angle without drag? Why not?
        3. Find the drag at which the best angle is 40°.
        """
    ),
]


# == sweeps ============================================================================================

SWEEPS: list[Cell] = [
    md(
        """
        # Sweeps: a target over a grid of values

        `sb.sweep(target, grid)` tries every combination of the values in `grid` on headless pages of the
        target (Chromium, beside the notebook; no view needed) and returns a pandas table: one row per
        point, a column per parameter and per observable, and `ok` / `error` for points that failed. The
        pages do the measuring: nothing here is computed in Python.

        Here is the target we sweep. A sweep given a widget starts every point from the widget's values
        (change some below and sweep again); its pages are its own, so the widget does not move.
        """
    ),
    code(
        """
        import math

        import matplotlib.pyplot as plt

        import splitbrain_widget as sb

        sim = sb.TargetWidget("projectile", height=300)
        sim
        """
    ),
    code(
        """
        grid = {"speed": [10, 20, 30], "angle": range(5, 90, 5)}
        table = sb.sweep(sim, grid, measure=["range", "flight_time"], progress=False)
        print(len(table), "points,", int(table["ok"].sum()), "measured")
        table.head()
        """
    ),
    md(
        """
        Without drag the range is the textbook $R = v^2 \\sin 2\\theta / g$: the page agrees to the
        millimetre, and every speed goes furthest at 45°.
        """
    ),
    code(
        """
        textbook = table["speed"] ** 2 * (2 * table["angle"]).map(lambda a: math.sin(math.radians(a))) / 9.81
        print(f"largest difference from the formula: {(table['range'] - textbook).abs().max():.4f} m")
        print(table.loc[table.groupby("speed")["range"].idxmax(), ["speed", "angle", "range"]].to_string(index=False))

        fig, ax = plt.subplots(figsize=(7, 3.5))
        for speed, rows in table.groupby("speed"):
            ax.plot(rows["angle"], rows["range"], marker=".", label=f"{speed} m/s")
        ax.set(xlabel="launch angle (°)", ylabel="range (m)", title="projectile, no drag")
        ax.legend()
        plt.show()
        """
    ),
    md(
        """
        ## Letting time run: `advance`

        Some observables need time: a pendulum's period is measured from its swings. With
        `advance=seconds` each point starts from the target's reset, gets its values, and runs that many
        simulated seconds on the page's virtual clock (faster than real time) before it is read.

        For small swings the period is $T_0 = 2\\pi\\sqrt{L/g}$, whatever the amplitude. Real pendulums
        swing slower the wider they swing; the exact period of a swing from $\\theta_0$ is
        $T = T_0 / \\operatorname{AGM}(1, \\cos\\tfrac{\\theta_0}{2})$, with Gauss's arithmetic-geometric mean.
        """
    ),
    code(
        """
        def exact_period(amplitude, small_angle):
            \"\"\"T0 / AGM(1, cos(θ0 / 2)): the period of a simple pendulum released from rest at ``amplitude``°.\"\"\"
            a, b = 1.0, math.cos(math.radians(amplitude) / 2)
            while a - b > 1e-15:
                a, b = (a + b) / 2, math.sqrt(a * b)
            return small_angle / a


        swings = sb.sweep("pendulum", {"amplitude": range(10, 171, 20)}, measure="period", advance=10, progress=False)
        small_angle = 2 * math.pi * math.sqrt(1.0 / 9.81)  # L = 1 m, g = 9.81 m/s²
        swings["exact"] = swings["amplitude"].map(lambda a: exact_period(a, small_angle))
        swings["ratio"] = swings["period"] / small_angle
        print(f"small-angle formula: T0 = {small_angle:.4f} s")
        print(swings[["amplitude", "period", "exact", "ratio"]].round(4).to_string(index=False))

        fig, ax = plt.subplots(figsize=(7, 3.5))
        curve = range(0, 176)
        ax.plot(curve, [exact_period(a, small_angle) for a in curve], color="lightgray", label="exact period")
        ax.plot(swings["amplitude"], swings["period"], "o", label="measured by the page")
        ax.axhline(small_angle, color="gray", linestyle=":", label="small-angle formula")
        ax.set(xlabel="amplitude (°)", ylabel="period (s)", title="pendulum, L = 1 m")
        ax.legend()
        plt.show()
        """
    ),
    md(
        """
        The page's periods, measured from its own swings, are the exact ones to four decimals. The
        small-angle formula is off by 0.2 % at 10°; at 90° the swing takes 18 % longer, and close to the
        top (170°) more than twice as long.

        ## On a Dask cluster

        `client=` runs the same sweep on the workers of a `dask.distributed` cluster, each with its own
        browser, and gives the same table. Here a `LocalCluster` of two worker processes stands in for a
        real one (`pip install 'splitbrain-widget[dask]'`):
        """
    ),
    code(
        """
        import logging

        from dask.distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=logging.ERROR) as cluster:
            with Client(cluster) as client:
                on_cluster = sb.sweep(sim, grid, measure=["range", "flight_time"], client=client, progress=False)
        print("the same table as on this machine:", on_cluster.equals(table))
        """
    ),
    md(
        """
        ## A minute of what the page measures, as data

        `record(seconds, every=0.1)` returns the page's observables over time as a pandas table, one
        row per tenth of a second; on a headless page the clock runs forward, so a minute takes no
        minute. Without damping a pendulum's energy stays put (to the integrator's accuracy); with
        damping it decays exponentially.
        """
    ),
    code(
        """
        with sb.HeadlessTarget("pendulum") as page:
            steady = page.record(60, observables=["energy"])
            page.set_parameter("damping", 0.1)
            damped = page.record(60, observables=["energy"])
        print(len(steady), "rows;", steady.columns.tolist(), steady.attrs["units"])
        energy = steady.iloc[:, 0]
        print(f"without damping the energy stays between {energy.min()} and {energy.max()} J/kg (as the page rounds it)")
        print(f"with damping it falls from {damped.iloc[0, 0]} to {damped.iloc[-1, 0]} J/kg")

        fig, ax = plt.subplots(figsize=(7, 3))
        ax.plot(steady.index, steady.iloc[:, 0], label="no damping")
        ax.plot(damped.index, damped.iloc[:, 0], label="damping 0.1 1/s")
        ax.set(xlabel=steady.index.name, ylabel=steady.columns[0], title="pendulum energy over a minute")
        ax.legend()
        plt.show()
        """
    ),
]


# == your_own_target ===================================================================================

SPINNER_PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Spinner</title>
</head>
<body>
<div id="stage">
  <canvas id="wheel" role="img" aria-label="A wheel with spokes"></canvas>
  <aside id="panel" class="sb-panel" aria-label="Measured quantities"></aside>
</div>
<script>
// window.SplitBrain, or a note in the page when the target API is missing
const api = Kit.targetApi("spinner");
const P = Kit.params({  // the page's copy of the manifest's parameters: what arrives is checked
  "motion.rpm": { type: "number", value: 30, min: 0, max: 120, unit: "rpm" },
  "look.spokes": { type: "integer", value: 5, min: 2, max: 12 },
  "look.color": { type: "string", value: "teal", enum: ["teal", "tomato", "gold", "slateblue"] },
});
let params = { ...P.defaults };
let angle = 0;  // degrees
let turns = 0;  // full turns since the last reset

function snapshot() {  // every parameter by its path, and the observables
  return { ...params, angle: Kit.round(angle, 1), turns: Math.floor(turns) };
}
const panel = Kit.panel(document.getElementById("panel"), "Spinner", [
  { key: "motion.rpm", label: "speed", unit: "rpm" },
  { key: "turns", label: "turns" },
]);
// at most 10 reports a second, only when the state changed; also keeps document.body.dataset.state
const report = Kit.reporter(api, snapshot, (state) => panel.update(state));
const surf = Kit.surface(document.getElementById("wheel"));  // sized by devicePixelRatio

function draw() {
  const { ctx, w, h } = surf;
  ctx.fillStyle = Kit.colors.bg;  // the kit's palette, light or dark with the notebook
  ctx.fillRect(0, 0, w, h);
  const r = Math.min(w, h) * 0.38;
  ctx.save();
  ctx.translate(w / 2, h / 2);
  ctx.rotate((angle * Math.PI) / 180);
  ctx.strokeStyle = params["look.color"];
  ctx.lineWidth = 6;
  ctx.lineCap = "round";
  ctx.beginPath();
  ctx.arc(0, 0, r, 0, 2 * Math.PI);
  ctx.stroke();
  for (let i = 0; i < params["look.spokes"]; i += 1) {
    const a = (2 * Math.PI * i) / params["look.spokes"];
    ctx.beginPath();
    ctx.moveTo(0, 0);
    ctx.lineTo(r * Math.cos(a), r * Math.sin(a));
    ctx.stroke();
  }
  ctx.restore();
}

// The loop (paused while hidden), the SplitBrain handlers, the first report and ready():
Kit.run(api, P, {
  report,
  draw,
  frame(seconds) {  // real seconds since the last frame
    const degrees = params["motion.rpm"] * 6 * seconds;  // rpm × 360° / 60 s
    angle = (angle + degrees) % 360;
    turns += degrees / 360;
  },
  apply(changes) {  // only what changed, by dotted path, checked by the kernel and by P
    params = { ...params, ...changes };
  },
  reset(values) {  // the manifest's defaults
    params = values;
    angle = 0;
    turns = 0;
  },
});
</script>
</body>
</html>
"""

SPINNER_CELL = (
    f'PAGE = r"""{SPINNER_PAGE}"""\n'
    "\n"
    '(folder / "spinner.html").write_text(PAGE)\n'
    "print(sorted(p.name for p in folder.iterdir()))"
)

YOUR_OWN_TARGET: list[Cell] = [
    md(
        """
        # Your own target

        A target is two files: an HTML page that draws something and a JSON manifest that declares its
        parameters. Put them in a folder and `splitbrain_widget` finds them, no package code needed.

        This notebook writes a small one, a spinning wheel, into `my_targets/` beside the notebook,
        and deletes that folder in its last cell (skip that cell to keep your target).
        """
    ),
    code(
        """
        import json
        import shutil
        from pathlib import Path

        import splitbrain_widget as sb

        folder = Path("my_targets")  # relative to this notebook's folder
        folder.mkdir(exist_ok=True)
        """
    ),
    md(
        """
        ## The manifest

        Parameters live in groups under `data` and are addressed by dotted path (`motion.rpm`) or leaf
        name (`rpm`). Each has a type, a default `value`, and a unit and range where they apply; the
        kernel checks every value against them before the page sees it. `observables` name what the page
        reports back. Descriptions matter: they are what a language model reads.
        """
    ),
    code(
        """
        manifest = {
            "id": "spinner",
            "type": "apply",
            "kit": True,  # the registry inlines the target kit, window.Kit, in the page
            "title": "Spinning wheel",
            "description": "A wheel with spokes turning at a steady rate. Changes apply at once.",
            "data": {
                "motion": {
                    "rpm": {"type": "number", "unit": "rpm", "value": 30, "min": 0, "max": 120,
                            "description": "Revolutions per minute; 0 stops the wheel."},
                },
                "look": {
                    "spokes": {"type": "integer", "value": 5, "min": 2, "max": 12,
                               "description": "How many spokes the wheel has."},
                    "color": {"type": "string", "value": "teal", "enum": ["teal", "tomato", "gold", "slateblue"],
                              "description": "Colour of the wheel."},
                },
            },
            "observables": {
                "angle": {"unit": "deg", "description": "Current angle of the wheel."},
                "turns": {"description": "Full turns since the page loaded or was reset."},
            },
        }
        (folder / "spinner.json").write_text(json.dumps(manifest, indent=2))
        print(sb.Manifest.from_file(folder / "spinner.json").names())
        """
    ),
    md(
        """
        ## The page

        One self-contained HTML file: inline script and style, no network (the iframe's security
        policy blocks it). The registry injects `SplitBrain` before the page's own script: the page
        answers changes (`onApply`), resets (`onReset`) and questions about its state (`onState`),
        reports what it observes (`state`) and says when it listens (`ready`).

        With `"kit": true` in the manifest the registry also injects the target kit the built-in
        simulations use, `window.Kit`: their look (light and dark), a canvas sized for the screen,
        checked parameters, the animation loop and the throttled reports. `Kit.run` makes the
        `SplitBrain` calls, so the page below is only its own motion and drawing
        (docs/writing-targets.md, section 7, lists what `Kit` offers).
        """
    ),
    ("code", SPINNER_CELL),
    md("## Find it and show it"),
    code(
        """
        found = sb.list_targets("my_targets")
        print([t.id for t in found if not t.builtin], found.problems)
        """
    ),
    code(
        """
        wheel = sb.TargetWidget("spinner", targets_dir="my_targets", height=300)
        wheel
        """
    ),
    md(
        """
        ## Drive it

        Your target gets the same tools as the built-in ones, checked against your manifest:
        """
    ),
    code(
        """
        result = wheel.set_parameters({"rpm": 90, "spokes": 3, "color": "tomato"})
        print(result.ok, result.changed)
        print(wheel.set_parameter("spokes", 1))
        """
    ),
    code(
        """
        agent = sb.Agent(wheel)
        print(agent.ask("set the rpm to 45 and make it gold").text)
        print(wheel.values)
        """
    ),
    md(
        """
        ## When a manifest is wrong

        A broken target never breaks the listing: `list_targets()` reports every problem with its file
        and field, and loading the target raises with the same words. Here, a default above its own
        maximum and a misspelt type:
        """
    ),
    code(
        """
        broken = Path("broken_targets")
        broken.mkdir(exist_ok=True)
        (broken / "rocket.html").write_text("<!doctype html><p>rocket</p>")
        (broken / "rocket.json").write_text(json.dumps({
            "id": "rocket",
            "type": "apply",
            "data": {"engine": {
                "thrust": {"type": "number", "unit": "kN", "value": 500, "min": 0, "max": 100},
                "fuel": {"type": "decimal", "unit": "kg", "value": 10},
            }},
        }))

        for problem in sb.list_targets("broken_targets").problems:
            print(problem)
        """
    ),
    code(
        """
        try:
            sb.TargetWidget("rocket", targets_dir="broken_targets")
        except sb.TargetError as exc:
            print(exc.message)
        """
    ),
    md(
        """
        ## Clean up

        This deletes the two folders the notebook wrote. To keep your target, skip this cell, or move
        `my_targets/` somewhere permanent and list it in the `SPLITBRAIN_TARGETS` environment variable.
        """
    ),
    code(
        """
        shutil.rmtree(folder)
        shutil.rmtree(broken)
        """
    ),
]


# == real_models =======================================================================================

REAL_MODELS: list[Cell] = [
    md(
        """
        # Real models

        The offline planner understands simple requests. A language model understands the rest: it reads
        the target's manifest and calls the same tools. This notebook shows how to pick one.

        Run as it is, with no API key in the environment, it uses the offline planner and says so: no
        network, no cost.
        """
    ),
    code(
        """
        import os

        import splitbrain_widget as sb

        sim = sb.TargetWidget("bouncer")
        sim
        """
    ),
    md(
        """
        ## Naming a model

        | model | needs |
        |---|---|
        | `"openai:<name>"`, e.g. `"openai:gpt-4.1-mini"` | `OPENAI_API_KEY` |
        | `"anthropic:<name>"`, e.g. `"anthropic:claude-haiku-4-5"` | `ANTHROPIC_API_KEY` |
        | `"google:<name>"`, e.g. `"google:gemini-2.5-flash"` | `GOOGLE_API_KEY` |
        | `"ollama:<name>"`, e.g. `"ollama:qwen2.5"` | Ollama running on this machine |
        | `"local"` | any local OpenAI-compatible server (Ollama, llama.cpp, LM Studio) |
        | `"<name>"` with `base_url=...` | any OpenAI-compatible server (vLLM, a proxy, a gateway) |
        | `"offline"` | nothing: the built-in planner |

        `sb.Agent(sim)` without a model uses `SPLITBRAIN_MODEL` if it is set, else the offline planner:
        a key in the environment alone never switches to a paid model. This notebook picks one on purpose
        (and in the open): `SPLITBRAIN_MODEL` first, then the first provider whose key is set.
        """
    ),
    code(
        """
        # NBVAL_IGNORE_OUTPUT (what this prints depends on your environment)
        DEFAULT_MODELS = {
            "OPENAI_API_KEY": "openai:gpt-4.1-mini",
            "ANTHROPIC_API_KEY": "anthropic:claude-haiku-4-5",
            "GOOGLE_API_KEY": "google:gemini-2.5-flash",
        }
        keys = [name for name in DEFAULT_MODELS if os.environ.get(name)]
        if os.environ.get("SPLITBRAIN_MODEL"):
            MODEL, why = os.environ["SPLITBRAIN_MODEL"], "SPLITBRAIN_MODEL is set"
        elif keys:
            MODEL, why = DEFAULT_MODELS[keys[0]], f"{keys[0]} is set"
        else:
            MODEL, why = "offline", "no API key and no SPLITBRAIN_MODEL in the environment"
        print(f"using {MODEL!r}: {why}")
        if MODEL == "offline":
            print("so this notebook runs on the offline planner: deterministic, no network, no cost")
        """
    ),
    code(
        """
        # NBVAL_IGNORE_OUTPUT (a real model answers in its own words)
        agent = sb.Agent(sim, MODEL)
        result = agent.ask("set the speed to 12 and make it red")
        print(f"[{agent.model}] {result.text}")
        print(f"{result.usage.requests} model requests, {result.usage.tool_calls} tool calls")
        """
    ),
    md(
        """
        Creating an agent does not contact the provider; the first `ask` does. So you can see how each
        name resolves without a key (a placeholder stands in for it here; nothing is sent):
        """
    ),
    code(
        """
        for spec in ["openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5", "google:gemini-2.5-flash", "ollama:qwen2.5"]:
            print(f"{spec:28} -> {sb.Agent(sim, spec, api_key='placeholder').model}")

        vllm = sb.Agent(sim, "Qwen/Qwen2.5-7B-Instruct", base_url="http://127.0.0.1:8000/v1")
        print(f"{'base_url=... (any server)':28} -> {vllm.model}")
        """
    ),
    md(
        """
        `ollama:` and `base_url=` both speak the OpenAI-compatible API, hence `openai:` in their names.

        ## A fallback chain

        `fallback=[...]` names models to try, in order, when one fails for good (a bad key, an exhausted
        quota, a server down after its retries). Once the run has moved on, it stays on the fallback:

        ```python
        agent = sb.Agent(sim, "openai:gpt-4.1-mini", fallback=["anthropic:claude-haiku-4-5", "offline"])
        ```

        To watch it happen offline, here is a stand-in primary model that answers every request with
        HTTP 401 (a revoked key), falling back to the offline planner:
        """
    ),
    code(
        """
        from pydantic_ai import ModelHTTPError
        from pydantic_ai.models.function import FunctionModel


        def revoked_key(messages, info):
            raise ModelHTTPError(401, "pretend-gpt", body={"error": {"message": "invalid api key"}})


        agent = sb.Agent(sim, FunctionModel(revoked_key, model_name="pretend-gpt"), fallback=["offline"])
        for event in agent.events("set the size to 30"):
            if event.kind == "fallback":
                print(event)
            elif event.kind == "done":
                print(event.result.text)
        print("now answering:", agent.model)
        """
    ),
    md(
        """
        ## A model on your own machine

        [Ollama](https://ollama.com) runs open models locally: `ollama serve`, then `ollama pull qwen2.5`,
        then `sb.Agent(sim, "ollama:qwen2.5")`. With `model="local"` the agent finds the server itself:
        it asks `127.0.0.1` on the ports of Ollama (11434), llama.cpp (8080) and LM Studio (1234) for their
        models and uses the first. With nothing listening it says what it tried and what to do:
        """
    ),
    code(
        """
        try:
            local = sb.Agent(sim, "local")
            print("found a local server:", local.model)
        except ValueError as exc:  # ModelSetupError
            print(f"{type(exc).__name__}: {exc}")
        """
    ),
    md(
        """
        ## In the chat panel

        `sim.chat(agent)` shows the chat panel beside the target above, answered by that agent;
        `sb.TargetWidget("bouncer", chat=True)` uses `SPLITBRAIN_MODEL` (or the offline planner).
        Keys never reach the transcript, the events or the audit log.
        """
    ),
    code(
        """
        sim.chat(sb.Agent(sim, MODEL))
        print("chat panel shown:", sim.chat_enabled)
        """
    ),
]


# == robustness ========================================================================================

ROBUSTNESS: list[Cell] = [
    md(
        """
        # When things go wrong

        Providers rate-limit, models repeat themselves, people change their minds. This notebook shows
        what the agent does about it. The models here are *scripted* (pydantic-ai's `FunctionModel`):
        stand-ins that fail exactly when told to, so everything runs offline and the same way every time.
        """
    ),
    code(
        """
        import asyncio
        import threading
        import time

        import splitbrain_widget as sb
        from pydantic_ai import ModelHTTPError, ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel

        sim = sb.TargetWidget("bouncer", height=260)
        sim
        """
    ),
    md(
        """
        ## Retries

        A 429 (rate limit) or 5xx answer is retried. The wait is the provider's own hint when it gives
        one (`Retry-After`, `retry-after-ms`, Google's `RetryInfo`), else the next step of `backoff`
        (3, 5, 10, 15, 30 s by default; 0.1 s here). Each wait is an event, and the chat panel shows it
        as a countdown with a *skip* button (`agent.skip_wait()`).

        This model is rate-limited once (asking for 0.5 s), then overloaded once (no hint), then works:
        """
    ),
    code(
        """
        answers = 0


        def flaky(messages, info):
            global answers
            answers += 1
            if answers == 1:
                raise ModelHTTPError(429, "flaky", body={"error": "rate limited"}, retry_after=0.5)
            if answers == 2:
                raise ModelHTTPError(503, "flaky", body={"error": "overloaded"})
            if len(messages) == 1:  # the request alone: call a tool
                return ModelResponse(parts=[ToolCallPart("set_parameters", {"values": {"speed": 15}})])
            return ModelResponse(parts=[TextPart("The ball moves at 15 m/s now.")])


        agent = sb.Agent(sim, FunctionModel(flaky, model_name="flaky"), backoff=(0.1,))
        for event in agent.events("set the speed to 15"):
            if event.kind == "retry_wait":
                print(event)
            elif event.kind == "tool_finished":
                print(f"tool_finished: {event.name} {event.arguments} ok={event.ok}")
            elif event.kind == "text":
                print(f"text: {event.text!r}")
            else:
                print(event.kind)
        """
    ),
    md(
        """
        ## The loop guard

        A model can get stuck calling the same failing tool again and again. The guard lets a failing
        call be repeated twice, then blocks it and tells the model to try something else; after four
        blocked calls it ends the run, and `result.stopped` says why. (The limits are
        `splitbrain_widget.agent.LoopLimits`, passed as `loop_limits=`.)
        """
    ),
    code(
        """
        def stubborn(messages, info):
            return ModelResponse(parts=[ToolCallPart("set_parameters", {"values": {"speed": 999}})])


        result = sb.Agent(sim, FunctionModel(stubborn, model_name="stubborn")).ask("as fast as you can")
        print([call.result["error"]["code"] for call in result.tool_calls])
        print(result.stopped)
        """
    ),
    md(
        """
        ## Approval

        `approval=` sets a policy per parameter (path or leaf name) or tool: `"auto"` runs the change,
        `"ask"` shows *Approve* / *Deny* in the chat panel first, `"deny"` refuses it; `"*"` covers the
        rest. The policy applies to the agent, not to your own Python calls.
        """
    ),
    code(
        """
        guarded = sb.TargetWidget("bouncer", approval={"speed": "deny"}, height=260)
        guarded
        """
    ),
    code(
        """
        agent = sb.Agent(guarded)
        result = agent.ask("set the speed to 30")
        print(result.text)
        print(result.tool_calls[0].result["error"])
        print(agent.ask("make it red").text)
        print(guarded.values)
        """
    ),
    md(
        """
        ## The audit log

        Every call a widget served, whoever made it (your code, an agent, the chat panel's controls), is
        in `sim.audit`: time, operation, outcome, duration and arguments (`sim.audit.to_list()` gives
        dicts, for pandas). Calls the loop guard or the approval policy refused never reached the widget:
        they are in the agent's `result.tool_calls`.
        """
    ),
    code(
        """
        sim.audit
        """
    ),
    md(
        """
        ## Cancelling

        `agent.cancel()` stops a run from any thread; the chat panel's *Stop* button and the notebook's
        interrupt do the same. Browser calls still pending close as `cancelled`, and the conversation's
        history stays valid, so the next `ask` carries on. Here a slow model is cancelled by a timer
        thread once it has started:
        """
    ),
    code(
        """
        model_started = threading.Event()


        async def slow(messages, info):
            model_started.set()
            await asyncio.sleep(30)
            return ModelResponse(parts=[TextPart("too late")])


        agent = sb.Agent(sim, FunctionModel(slow, model_name="slow"))


        def stop_soon():
            model_started.wait(10)
            time.sleep(0.2)
            agent.cancel()


        threading.Thread(target=stop_soon, daemon=True).start()
        result = agent.ask("take your time")
        print(result.stopped == "cancelled", repr(result.text))
        """
    ),
]

MCP: list[Cell] = [
    md(
        """
        # Any agent steers the simulation (MCP)

        The agents people already use (Claude Code, Codex and others through jupyter-ai, Cursor, VS
        Code, marimo, Claude Desktop) speak the Model Context Protocol. `sb.serve_mcp()` makes the
        widgets of this kernel an MCP server, with the built-in agent's tools: the manifest's exact
        schemas, validation, approval, the audit log and deadlines. See `docs/mcp.md`.
        """
    ),
    code(
        """
        import splitbrain_widget as sb

        sim = sb.TargetWidget("projectile")
        sim
        """
    ),
    md(
        """
        ## Start the server

        One server per kernel, on 127.0.0.1, behind a random token. `config(client)` is the snippet to
        paste into a client (`"claude-code"`, `"cursor"`, `"vscode"`, `"jupyter-ai"`, `"marimo"`,
        `"claude-desktop"`); the token is shown here replaced, as you would before sharing a notebook.
        """
    ),
    code(
        """
        server = sb.serve_mcp(sim)
        print(server.running, [w["id"] for w in server.widgets()])
        print(server.config("claude-code").replace(server.token, "<token>"))
        """
    ),
    md(
        """
        ## Call it as a client would

        Here the client is the MCP SDK's own, in this notebook; an agent outside the kernel does the same
        over HTTP. Each widget's tools are named `<widget>__<tool>`.
        """
    ),
    code(
        """
        import httpx2
        from mcp import ClientSession, Implementation
        from mcp.client.streamable_http import streamable_http_client


        async def call(name, arguments):
            headers = {"Authorization": f"Bearer {server.token}"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                streamable_http_client(server.url, http_client=http) as (read, write),
                ClientSession(read, write, client_info=Implementation(name="notebook-client", version="1")) as session,
            ):
                await session.initialize()
                tools = [tool.name for tool in (await session.list_tools()).tools]
                result = await session.call_tool(name, arguments)
                return tools, result.structured_content


        tools, result = await call("projectile__set_parameters", {"values": {"launch.angle": 30}})
        print(tools[:5])
        print(result["ok"], result["changed"]["launch.angle"])
        """
    ),
    md(
        """
        A value the manifest refuses is a tool error with our code, and nothing reaches the page:
        """
    ),
    code(
        """
        _, refused = await call("projectile__set_parameters", {"values": {"launch.angle": 120}})
        print(refused["ok"], refused["error"]["code"], "|", refused["error"]["message"])
        """
    ),
    md(
        """
        The change is the widget's own: in its values, and in its audit log with who asked.
        """
    ),
    code(
        """
        print(sim.values["launch.angle"])
        print(sim.audit.to_code())
        """
    ),
    code(
        """
        server.stop()
        print(server.running)
        """
    ),
]


NOTEBOOKS: dict[str, list[Cell]] = {
    "quickstart": QUICKSTART,
    "teaching_projectile": TEACHING_PROJECTILE,
    "sweeps": SWEEPS,
    "your_own_target": YOUR_OWN_TARGET,
    "real_models": REAL_MODELS,
    "robustness": ROBUSTNESS,
    "mcp": MCP,
}


# == building ==========================================================================================


def build(name: str, cells: list[Cell]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": KERNEL_NAME},
        "language_info": {"name": "python"},
    }
    for i, (kind, source) in enumerate(cells):
        make = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
        cell = make(source)
        cell.id = f"{name.replace('_', '-')}-{i:02d}"
        nb.cells.append(cell)
    return nb


def execute(nb: nbformat.NotebookNode) -> None:
    """Run every cell as nbval does: in this folder, with no frontend, key or model in the environment,
    and every widget's calls on a headless page (``SPLITBRAIN_HEADLESS=1``, as in ``conftest.py``)."""
    sys.path.insert(0, str(HERE.parent))
    from tests.browser_env import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        raise SystemExit(f"cannot store the notebooks' outputs: they are measured on headless pages. {reason}")
    saved = {k: os.environ.pop(k) for k in ENVIRONMENT_DEPENDENT if k in os.environ}
    headless = os.environ.get(HEADLESS)
    os.environ[HEADLESS] = "1"
    try:
        client = NotebookClient(
            nb,
            timeout=300,
            kernel_name=KERNEL_NAME,
            resources={"metadata": {"path": str(HERE)}},
            record_timing=False,
            allow_errors=False,
            coalesce_streams=True,
        )
        client.execute()
    finally:
        os.environ.update(saved)
        if headless is None:
            os.environ.pop(HEADLESS)
        else:
            os.environ[HEADLESS] = headless
    nb.metadata.pop("widgets", None)
    nb.metadata.get("language_info", {}).pop("version", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for n, output in enumerate(cell.get("outputs", [])):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is not None:  # a random id per run: make it stable (nbval sanitizes it anyway)
                view["model_id"] = hashlib.md5(f"{cell.id}/{n}".encode()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"notebooks to build (default: all): {', '.join(NOTEBOOKS)}")
    parser.add_argument("--no-execute", action="store_true", help="write the cells without running them")
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="run the notebooks' committed cells again (after a change to the package: their outputs change, "
        "their cells stay as they are, also where they were edited after this file wrote them)",
    )
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in NOTEBOOKS]
    if unknown:
        parser.error(f"no notebook {', '.join(unknown)}; choose from {', '.join(NOTEBOOKS)}")
    for name in args.names or NOTEBOOKS:
        if args.rerun:
            nb = nbformat.read(HERE / f"{name}.ipynb", as_version=4)
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs, cell.execution_count = [], None
        else:
            nb = build(name, NOTEBOOKS[name])
        if not args.no_execute:
            execute(nb)
        nbformat.validate(nb)
        path = HERE / f"{name}.ipynb"
        nbformat.write(nb, path)
        print(f"wrote {path.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
