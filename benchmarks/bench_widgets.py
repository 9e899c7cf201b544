"""Widget redraw latency, kernel side: from a slider change to new PNG bytes, median.

Every explorer exported by `nbhelpers.widgets` is found at run time (the subclasses of
FigureExplorer in its __all__), built with sample arguments, and one of its numeric sliders
(failing that, another control) is stepped back and forth; each step's time covers the
observer, the computation, the figure update and the PNG encoding, not what the browser
does afterwards.

An explorer is built with `cls.demo()` when it has that classmethod, otherwise from its
signature: parameters with defaults keep them, and required ones are filled from SAMPLES
by name. Targets: <= 50 ms for an 8×8 annotated heatmap (issue 3), <= 100 ms for the
multi-head grid (issue 4).

    python benchmarks/bench_widgets.py
    python benchmarks/bench_widgets.py --repeats 30 --only AttentionExplorer
"""

from __future__ import annotations

import argparse
import functools
import inspect
import statistics
import sys
import time

import ipywidgets as widgets
import results
import torch
from cli import add_json_option

import nbhelpers.widgets as explorers
from nbhelpers.widgets import FigureExplorer

TOKENS = ("犬", "が", "河岸", "を", "歩く")
TARGETS_MS = {"AttentionExplorer": 50.0, "MultiHeadExplorer": 100.0}
NUMERIC_SLIDERS = (
    widgets.IntSlider,
    widgets.FloatSlider,
    widgets.FloatLogSlider,
    widgets.BoundedIntText,
    widgets.BoundedFloatText,
)


@functools.cache
def _grammar():
    from nbhelpers.corpus import JapaneseGrammar

    return JapaneseGrammar()


def _model():
    from nbhelpers import GPT1
    from nbhelpers.experiments.pretraining import corpus_model_config

    torch.manual_seed(0)
    return GPT1(corpus_model_config(_grammar())).eval()


# Sample values for required constructor parameters, by name (built only when asked for).
SAMPLES = {
    "tokens": lambda: list(TOKENS),
    "scores": lambda: torch.randn(5, 5, generator=torch.Generator().manual_seed(0)),
    "x": lambda: torch.randn(5, 8, generator=torch.Generator().manual_seed(0)),
    "X": lambda: torch.randn(5, 8, generator=torch.Generator().manual_seed(0)),
    "grammar": _grammar,
    "tokenizer": lambda: _grammar().tokenizer,
    "vocab": lambda: list(_grammar().tokenizer.tokens),  # matches _model()'s vocab_size
    "sentence": lambda: list(TOKENS),
    "model": _model,
}


def explorer_classes() -> dict[str, type]:
    found = {}
    for name in getattr(explorers, "__all__", dir(explorers)):
        value = getattr(explorers, name, None)
        if (
            inspect.isclass(value)
            and issubclass(value, FigureExplorer)
            and value is not FigureExplorer
        ):
            found[name] = value
    return found


def build(cls: type) -> FigureExplorer:
    if callable(getattr(cls, "demo", None)):
        return cls.demo()
    kwargs = {}
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is not parameter.empty:
            continue
        if name not in SAMPLES:
            raise LookupError(
                f"no sample for the required parameter {name!r}; give {cls.__name__} a "
                f"`demo()` classmethod or add {name!r} to SAMPLES in this script"
            )
        kwargs[name] = SAMPLES[name]()
    return cls(**kwargs)


def controls(explorer: FigureExplorer) -> list[tuple[str, widgets.Widget]]:
    """The explorer's controls: numeric sliders first, then other choices (dropdowns,
    selection sliders, toggles), each under its attribute name or its description."""
    names = {id(value): name for name, value in vars(explorer).items()}
    found = getattr(explorer, "_controls", None)
    if found is None:
        found = [v for v in vars(explorer).values() if isinstance(v, widgets.ValueWidget)]
    usable = [
        c
        for c in found
        if not getattr(c, "disabled", False)
        and (isinstance(c, (*NUMERIC_SLIDERS, widgets.Checkbox, widgets.ToggleButton))
             or (hasattr(c, "options") and len(c.options) > 1))
    ]  # fmt: skip

    def rank(control) -> int:
        if isinstance(control, NUMERIC_SLIDERS):
            return 0
        return 1 if isinstance(control, widgets.SelectionSlider) else 2

    usable.sort(key=rank)  # stable: keeps definition order within a rank
    return [
        (names.get(id(c)) or getattr(c, "description", "") or type(c).__name__, c) for c in usable
    ]


def toggler(control):
    """A function that moves the control between its current state and a neighbouring one."""
    if hasattr(control, "options"):  # Dropdown, SelectionSlider, ...: step the index
        first = control.index
        second = first + 1 if first + 1 < len(control.options) else first - 1
        states = (first, second)
        return lambda i: setattr(control, "index", states[i % 2])
    if isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        states = (control.value, not control.value)
    elif isinstance(control, widgets.FloatLogSlider):
        low, high = control.base**control.min, control.base**control.max
        up = control.value * control.base**control.step
        states = (control.value, up if up <= high else max(low, control.value / control.base))
    else:
        step = getattr(control, "step", None) or 1
        up = control.value + step
        states = (
            control.value,
            up if up <= control.max else max(control.min, control.value - step),
        )
    return lambda i: setattr(control, "value", states[i % 2])


def measure(explorer, control, repeats: int, warmup: int = 2) -> tuple[float, bool]:
    """(median seconds from a control change to new PNG bytes, whether the PNG changed)."""
    move = toggler(control)
    before = explorer.png()
    changed = False
    runs = []
    for i in range(warmup + repeats):
        start = time.perf_counter()
        move(i + 1)
        png = explorer.png()
        elapsed = time.perf_counter() - start
        changed = changed or png != before
        if i >= warmup:
            runs.append(elapsed)
    return statistics.median(runs), changed


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", nargs="*", default=None, help="explorer class names")
    add_json_option(parser)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    classes = explorer_classes()
    if args.only:
        unknown = set(args.only) - set(classes)
        if unknown:
            print(f"unknown explorers {sorted(unknown)}; found {sorted(classes)}", file=sys.stderr)
            return 2
        classes = {name: classes[name] for name in args.only}
    print(f"{len(classes)} explorers in nbhelpers.widgets; median of {args.repeats} redraws each")
    print(f"  {'explorer':26} {'control':14} {'median':>9}  target")
    errors, medians = [], {}
    for name, cls in classes.items():
        try:
            explorer = build(cls)
            candidates = controls(explorer)
            if not candidates:
                raise LookupError("no slider, dropdown or toggle among its controls")
            # The first numeric slider whose step visibly changes the figure, if any.
            for control_name, control in candidates:  # noqa: B007 (used after the loop)
                median, changed = measure(explorer, control, args.repeats)
                if changed:
                    break
        except Exception as error:
            errors.append(name)
            print(f"  {name:26} ERROR {type(error).__name__}: {error}")
            continue
        target = TARGETS_MS.get(name)
        verdict = ""
        if target is not None:
            verdict = f"<= {target:.0f} ms: {'met' if median * 1e3 <= target else 'MISSED'}"
        medians[name] = (control_name, median)
        note = "" if changed else " (the PNG did not change!)"
        print(f"  {name:26} {control_name:14} {median * 1e3:7.1f} ms  {verdict}{note}")
    if not args.only:
        # Issue 3's yardstick: a slider redrawing an 8×8 heatmap with all 64 values annotated.
        eight = [*TOKENS, "。", "<EOS>", "<PAD>"]
        scores = torch.randn(8, 8, generator=torch.Generator().manual_seed(0))
        explorer = explorers.AttentionMatrixExplorer(eight, scores)
        median, _ = measure(explorer, explorer.temperature, args.repeats)
        verdict = f"<= 50 ms: {'met' if median * 1e3 <= 50 else 'MISSED'}"
        print(
            f"  {'8×8 annotated heatmap':26} {'temperature':14} {median * 1e3:7.1f} ms  {verdict}"
        )
        medians["8×8 annotated heatmap"] = ("temperature", median)
        TARGETS_MS["8×8 annotated heatmap"] = 50.0
    rows = []
    for name, (control_name, median) in medians.items():
        target = TARGETS_MS.get(name)
        rows.append(
            results.row(
                f"kernel-drawn explorer redraw, {name}: {control_name} changed → new PNG bytes",
                f"{median * 1e3:.1f} ms",
                None if target is None else f"<= {target:.0f} ms",
                None if target is None else median * 1e3 <= target,
            )
        )
    if not errors:
        results.write(args.json, __file__, rows)
    if errors:
        print(
            f"{len(errors)} explorer(s) could not be measured: {', '.join(errors)}", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
