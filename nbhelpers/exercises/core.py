"""How every checker works: run the learner's answer on seeded cases, compare it with an
independent torch reference, and when a case fails, say which mistake the answer looks like.

A checker never raises because an answer is wrong: it returns a failed CheckResult, so that
Run All goes on. It raises a TypeError only when it is itself misused (given something that
is not a function, or a function where a class is expected).
"""

from __future__ import annotations

import base64
import contextlib
import copy
import functools
import inspect
import linecache
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from ..support.checks import max_error
from ..support.language import listing, tr
from .likely_causes import likely_cause, likely_cause_of_error

PASSED, FAILED, NOT_ATTEMPTED = "passed", "failed", "not attempted"
NEG_INF = float("-inf")

# What every checker module imports (`from .core import *`): the toolkit, in one place.
__all__ = [
    "Report",
    "FAILED",
    "NEG_INF",
    "NOT_ATTEMPTED",
    "PASSED",
    "attempt",
    "bias_of",
    "build",
    "calling_none_of",
    "Case",
    "check_class",
    "check_function",
    "CheckResult",
    "design_failed",
    "designed_weights",
    "refusing_names",
    "describe",
    "first_line",
    "largest_tensor_made",
    "torch_calls",
    "leaves_state_alone",
    "linear_weights",
    "randn",
    "randomise_constants",
    "Rejected",
    "run_cases",
    "seeded",
    "shapes",
]


@dataclass
class Case:
    """One call of the answer: `name` says what the case exposes, `inputs` describes the
    arguments (shapes), `run(answer)` calls it, `expected` is the reference's result.

    For a class, the reference must use the answer's own weights: then `derived` is True and
    `run(answer)` returns (got, expected, mistakes) computed from the module it built.
    """

    name: str
    inputs: str
    run: Callable
    expected: object = None
    atol: float = 1e-5
    # What a learner might have written by mistake on the same inputs, each with the hint
    # that names that mistake: (hint, wrong result, or a function that computes it); None
    # where the variant cannot run.
    mistakes: list[tuple[str, object]] = field(default_factory=list)
    derived: bool = False
    # For an answer that returns a tuple: what each value is, in the learner's words ("the
    # loss", "the weights after the step"), so a report names what is wrong.
    parts: tuple[str, ...] = ()
    # The likely cause when the answer raises on this case (a text a bare error from inside
    # torch would not say), shown as its hint.
    if_raised: str | None = None


class Rejected(Exception):
    """Raised by a case's run() when the answer is wrong in a way no value shows (it built
    the full matrix it was asked to avoid, say): `problem` and `hint` go into the report."""

    def __init__(self, problem: str, hint: str):
        super().__init__(problem)
        self.problem, self.hint = problem, hint


class Report:
    """What a checker or a capstone says: a status and the lines of its report, shown as
    text in a notebook; `bool(report)` is True only when it passed."""

    status: str
    lines: list[str]

    def __bool__(self) -> bool:
        return self.status == PASSED

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython shows the report, not a dataclass
        printer.text(repr(self))


@dataclass(repr=False)
class CheckResult(Report):
    """What a checker found. `bool(result)` is True only when every case passed."""

    exercise: str
    status: str
    lines: list[str]
    cases: int = 0
    # (expected, got) of a failed case whose answer is a matrix: drawn beside the report
    picture: tuple | None = None

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """The report as text the learner reads, and for a wrong matrix, expected, yours and
        their difference drawn under it. A front end shows only a bundle's richest type
        (JupyterLab, Notebook 7, VS Code and Colab all prefer HTML to a PNG), so the HTML
        carries both; text/plain is the same report, for nbval and terminals."""
        report = repr(self)
        status = self.status.replace(" ", "-")
        page = f'<pre class="nbh-check nbh-check-{status}">{escape(report)}</pre>'
        if self.picture is not None:
            from ..figures.canvas import figure_to_png
            from ..figures.check_difference import check_difference_figure

            title = self.lines[0].lstrip("✗ ")
            figure = check_difference_figure(*self.picture, title=title)
            png = base64.b64encode(figure_to_png(figure)).decode("ascii")
            page += (
                f'<img class="nbh-check-picture" alt="{escape(title)}" '
                f'src="data:image/png;base64,{png}">'
            )
        return {"text/plain": report, "text/html": page}


def describe(value) -> str:
    """A short, stable description of a tensor or other value: shape and dtype, no numbers."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        return f"{tuple(value.shape)} {dtype}"
    if isinstance(value, tuple):
        return "(" + ", ".join(describe(v) for v in value) + ")"
    return type(value).__name__


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def difference(expected, got, atol: float, parts: Sequence[str] = ()) -> str | None:
    """None when got matches expected within atol (tensors, or tuples of them); otherwise
    a one-line description of how they differ. `parts` names a tuple's values."""
    if isinstance(expected, tuple) and any(isinstance(v, (torch.Tensor, tuple)) for v in expected):
        if not isinstance(got, tuple) or len(got) != len(expected):
            return tr(
                "expected a tuple of {n} values, got {got}", n=len(expected), got=describe(got)
            )
        for index, (e, g) in enumerate(zip(expected, got, strict=True)):
            found = difference(e, g, atol)
            if found:
                if index < len(parts):
                    return tr("{part}: {problem}", part=parts[index], problem=found)
                return tr("value {index} of the tuple: {problem}", index=index, problem=found)
        return None
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return tr(
                "expected a tensor {expected}, got {got}",
                expected=describe(expected),
                got=describe(got),
            )
        if got.shape != expected.shape:
            return tr(
                "expected shape {expected}, got {got}",
                expected=tuple(expected.shape),
                got=tuple(got.shape),
            )
        if got.dtype != expected.dtype:
            return tr(
                "expected dtype {expected}, got {got}", expected=expected.dtype, got=got.dtype
            )
        if got.device != expected.device:
            return tr(
                "expected a tensor on {expected}, got one on {got}",
                expected=expected.device,
                got=got.device,
            )
        nan = got.isnan() & ~expected.isnan()
        if nan.any():
            return tr(
                "got NaN in {nan} of {total} entries where none is expected",
                nan=int(nan.sum()),
                total=got.numel(),
            )
        error = max_error(expected, got)
        if not error <= atol:
            if not expected.dtype.is_floating_point:  # ids, counts, truth values: name one
                value = bool if expected.dtype == torch.bool else int
                if expected.dim() == 0:
                    return tr("expected {expected}, got {got}", expected=value(expected),
                              got=value(got))  # fmt: skip
                first = tuple(int(i) for i in (expected != got).nonzero()[0])
                index = first[0] if len(first) == 1 else first
                return tr(
                    "{wrong} of {total} entries differ, the first at index {index}: expected "
                    "{expected}, got {got}",
                    wrong=int((expected != got).sum()), total=got.numel(), index=index,
                    expected=value(expected[first]), got=value(got[first]),
                )  # fmt: skip
            if atol == 0:  # an exact result: say how many entries are wrong
                wrong = int((expected != got).sum())
                return tr(
                    "{wrong} of {total} entries differ: max error {error:.1e} (exact comparison)",
                    wrong=wrong,
                    total=got.numel(),
                    error=error,
                )
            return tr(
                "expected vs got: max error {error:.1e} (tolerance {atol:.0e})",
                error=error,
                atol=atol,
            )
        return None
    if got != expected:
        return tr("expected {expected}, got {got}", expected=repr(expected), got=repr(got))
    return None


def made(wrong):
    """A mistake's result, computed only when a case has failed (a mistake may be given as a
    function of no arguments, so that a passing answer never pays for it)."""
    try:
        return wrong() if callable(wrong) else wrong
    except Exception:  # a mistaken variant that cannot run on these inputs
        return None


def matches(wrong, got, atol: float) -> bool:
    if wrong is None:
        return False
    try:
        return difference(wrong, got, atol) is None
    except Exception:  # a mistake that cannot even be compared is not this one
        return False


def _snapshot(value):
    """A copy of what an argument holds, to compare after the call: tensors, and lists,
    tuples and dicts of them; None for what is not watched (a model or an optimiser, which a
    training step is meant to change; a generator, whose state is meant to advance)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, dict)) or (isinstance(value, tuple) and value):
        if any(isinstance(v, (nn.Module, torch.optim.Optimizer)) for v in value):
            return None
        try:
            return copy.deepcopy(value)
        except Exception:  # something that does not copy: not watched
            return None
    return None


def _same(before, after) -> bool:
    if isinstance(before, torch.Tensor):
        return (
            isinstance(after, torch.Tensor)
            and before.shape == after.shape
            and torch.equal(before.isnan(), after.detach().isnan())
            and torch.equal(before.nan_to_num(), after.detach().nan_to_num())
        )
    if isinstance(before, dict) and isinstance(after, dict):
        return before.keys() == after.keys() and all(_same(before[k], after[k]) for k in before)
    if isinstance(before, (list, tuple)) and isinstance(after, (list, tuple)):
        return len(before) == len(after) and all(map(_same, before, after))
    try:
        return bool(before == after)
    except Exception:
        return False


def leaving_arguments_alone(answer: Callable) -> Callable:
    """`answer`, checked to leave its arguments as it found them: an answer that scales its
    input in place (Q /= T, scores -= m) may return the right numbers and still corrupt
    what its caller uses next. The report names the argument that changed."""
    try:
        names = list(inspect.signature(answer).parameters)
    except (TypeError, ValueError):
        names = []

    @functools.wraps(answer)
    def watched(*args, **kwargs):
        given = [*zip(names, args, strict=False), *kwargs.items()]
        if len(args) > len(names):
            given += [(f"args[{i}]", a) for i, a in enumerate(args) if i >= len(names)]
        before = [(name, value, _snapshot(value)) for name, value in given]
        result = answer(*args, **kwargs)
        for name, value, saved in before:
            if saved is None:
                continue
            if not _same(saved, value):
                raise Rejected(
                    tr("the answer changed its argument {name} in place", name=name),
                    tr(
                        "{name} belongs to the caller, who still uses it: compute into a new "
                        "tensor (x = x / T, not x /= T or x.div_(T); a slice like W[a:b] is a "
                        "view of W, so writing into it writes into W)",
                        name=name,
                    )
                    if isinstance(value, torch.Tensor)
                    else tr(
                        "{name} belongs to the caller, who still uses it: build a new "
                        "{kind} (new = dict(old), list(old)) instead of changing it",
                        name=name,
                        kind=type(value).__name__,
                    ),  # fmt: skip
                )
        return result

    return watched


def guessed_hint(expected, got, atol: float) -> str | None:
    """What the numbers suggest when no named mistake matches (likely_causes): of a tuple, the
    first tensor that `difference` finds wrong, or the whole tuple returned in reverse."""
    if isinstance(expected, tuple) and isinstance(got, tuple) and len(got) == len(expected):
        if len(got) > 1 and matches(expected, got[::-1], atol):
            return tr("the values are in the wrong order: reverse the tuple you return")
        pairs = zip(expected, got, strict=True)
        tensors = (
            (e, g) for e, g in pairs if isinstance(e, torch.Tensor) and isinstance(g, torch.Tensor)
        )
        wrong = next(((e, g) for e, g in tensors if difference(e, g, atol)), None)
        return likely_cause(*wrong) if wrong else None
    return likely_cause(expected, got)


def run_cases(exercise: str, answer, cases: Sequence[Case], task: str) -> CheckResult:
    """Run `answer` on each case in turn and stop at the first one that fails. `task` is
    what the exercise asks for, said when it is not attempted yet: the task, never the
    answer (no formula or code that solves it). A function answer must also leave its
    arguments as it found them (leaving_arguments_alone)."""
    if not inspect.isclass(answer):
        answer = leaving_arguments_alone(answer)
    for number, case in enumerate(cases, start=1):
        where = tr(
            'case {number} of {total}, "{name}": {inputs}',
            number=number,
            total=len(cases),
            name=case.name,
            inputs=case.inputs,
        )
        try:
            if case.derived:
                got, expected, mistakes = case.run(answer)
            else:
                got, expected, mistakes = case.run(answer), case.expected, case.mistakes
        except NotImplementedError:
            return not_attempted(exercise, task)
        except Rejected as rejection:
            lines = [
                tr("✗ {exercise}: {where}", exercise=exercise, where=where),
                f"  {rejection.problem}",
                "  " + tr("hint: {hint}", hint=rejection.hint),
            ]
            return CheckResult(exercise, FAILED, lines, len(cases))
        except Exception as error:  # the answer's own bug: report it, never raise it
            said = (
                tr("the answer raised {error}", error=first_line(error))
                if raised_by_the_answer(error, answer)
                else tr(
                    "the checker itself failed, not your answer: {error}. Please report it.",
                    error=first_line(error),
                )
            )
            lines = [tr("✗ {exercise}: {where}", exercise=exercise, where=where), "  " + said]
            if raised_by_the_answer(error, answer):
                cause = case.if_raised or likely_cause_of_error(error)
                if cause:
                    lines.append("  " + tr("hint: {hint}", hint=cause))
            return CheckResult(exercise, FAILED, lines, len(cases))
        problem = difference(expected, got, case.atol, case.parts)
        if problem is None:
            continue
        lines = [tr("✗ {exercise}: {where}", exercise=exercise, where=where), f"  {problem}"]
        # every mistake the answer matches: where two give the same numbers, both are named
        hints = list(dict.fromkeys(h for h, w in mistakes if matches(made(w), got, case.atol)))
        if not hints and (cause := guessed_hint(expected, got, case.atol)):
            hints = [cause]  # no named mistake: what the numbers themselves suggest
        if hints:
            lines.append("  " + tr("hint: {hint}", hint=hints[0]))
            lines += ["  " + tr("or: {hint}", hint=hint) for hint in hints[1:]]
        return CheckResult(exercise, FAILED, lines, len(cases), matrices(expected, got))
    names = tr("; ").join(case.name for case in cases)
    return CheckResult(
        exercise,
        PASSED,
        [
            tr(
                "✓ {exercise}: all {n} cases passed ({names})",
                exercise=exercise,
                n=len(cases),
                names=names,
            )
        ],
        len(cases),
    )


def not_attempted(exercise: str, task: str) -> CheckResult:
    """The report on an answer that still raises NotImplementedError: the task, never the
    answer."""
    said = tr(
        "… {exercise}: not attempted. Replace raise NotImplementedError: {task}",
        exercise=exercise,
        task=task,
    )
    return CheckResult(exercise, NOT_ATTEMPTED, [said])


def design_failed(exercise: str, inputs: str) -> str:
    """The first line of a design exercise's failure: its one case is the running example."""
    where = tr(
        'case {number} of {total}, "{name}": {inputs}',
        number=1,
        total=1,
        name=tr("the running example"),
        inputs=inputs,
    )
    return tr("✗ {exercise}: {where}", exercise=exercise, where=where)


def designed_weights(exercise: str, fn, inputs: str):
    """The answer of a design exercise (notebooks 01 and 03): fn() returns (W_Q, W_K), each
    (4, d_k), for the running example's four features. Returns (W_Q, W_K) in float64 and
    None, or None and the report that ends the check: not attempted, raised, or shaped
    wrong."""
    check_function("fn", fn)
    failed = design_failed(exercise, inputs)
    try:
        answer = fn()
    except NotImplementedError:
        task = tr("return (W_Q, W_K), each with 4 rows, one per feature of x.")
        return None, not_attempted(exercise, task)
    except Exception as error:  # the answer's own bug: report it, never raise it
        said = tr("the answer raised {error}", error=first_line(error))
        return None, CheckResult(exercise, FAILED, [failed, "  " + said])
    shaped = (
        isinstance(answer, tuple)
        and len(answer) == 2
        and all(isinstance(W, torch.Tensor) and W.is_floating_point() for W in answer)
        and answer[0].dim() == answer[1].dim() == 2
        and answer[0].shape[0] == answer[1].shape[0] == 4
        and answer[0].shape[1] == answer[1].shape[1] >= 1
    )
    if not shaped:
        got = ", ".join(map(describe, answer)) if isinstance(answer, tuple) else describe(answer)
        said = tr(
            "expected a tuple (W_Q, W_K) of two float tensors of shape (4, d_k) with the same "
            "d_k, got {got}",
            got=got,
        )
        return None, CheckResult(exercise, FAILED, [failed, "  " + said])
    return tuple(W.detach().to(torch.float64).cpu() for W in answer), None


PACKAGE = Path(__file__).resolve().parents[1]


def raised_by_the_answer(error: BaseException, answer) -> bool:
    """Whether `error` is the answer's: raised in its code or in what it called, in calling
    it (a signature that does not fit), or on purpose by nbhelpers' own checks of what it
    built (a missing attribute, say). An error raised inside torch or Python with no frame
    of the answer's on the way is the checker's own."""
    frames = list(traceback.walk_tb(error.__traceback__))
    if any(not _library(frame.f_code.co_filename) for frame, _ in frames):
        return True  # the answer's code, or a module of the learner's, is on the way
    names = {getattr(answer, "__qualname__", None), getattr(answer, "__name__", None)} - {None}
    if isinstance(error, TypeError) and any(f"{name}" in str(error) for name in names):
        return True  # called with arguments its signature does not take
    if not frames:
        return False
    frame, line = frames[-1]
    filename = frame.f_code.co_filename
    on_purpose = linecache.getline(filename, line).lstrip().startswith("raise ")
    return on_purpose and Path(filename).resolve().is_relative_to(PACKAGE)


def _library(filename: str) -> bool:
    """nbhelpers, torch, the standard library: code that is not the learner's."""
    path = Path(filename).resolve()
    return (
        path.is_relative_to(PACKAGE)
        or "site-packages" in path.parts
        or "dist-packages" in path.parts
        or path.is_relative_to(Path(inspect.__file__).resolve().parent)
    )


def matrices(expected, got) -> tuple | None:
    """(expected, got) when both are tensors of one shape holding a matrix (or a batch of
    them) small enough to draw: the first such pair where a tuple's values differ."""
    if isinstance(expected, tuple) and isinstance(got, tuple) and len(expected) == len(got):
        for e, g in zip(expected, got, strict=True):
            if difference(e, g, 0.0) is not None:
                return matrices(e, g)
        return None
    if not (isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor)):
        return None
    if expected.shape != got.shape or expected.dim() < 2 or not expected.dtype.is_floating_point:
        return None
    if expected.shape[-1] > 32 or expected.shape[-2] > 32 or not got.dtype.is_floating_point:
        return None
    return expected.detach().cpu(), got.detach().cpu()


def _names_in(code) -> set[str]:
    """Every global name and keyword a code object (and the code nested in it) uses."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, str):
            names.add(const)
        elif isinstance(const, tuple):  # a call's keyword names
            names.update(c for c in const if isinstance(c, str))
        elif hasattr(const, "co_names"):
            names |= _names_in(const)
    return names


def refusing_names(exercise: str, answer, names: Sequence[str]) -> CheckResult | None:
    """A failed report when the answer (a function, or any method of a class) names one of
    `names` in its code: the thing the exercise asks the learner to write, or a shortcut
    around it, imported into the notebook by name (which calling_none_of, patching a module
    attribute while the answer runs, cannot see)."""
    answer = inspect.unwrap(answer)  # the learner's own function, not a checker's wrapper
    functions = [answer] if not inspect.isclass(answer) else [
        f for f in vars(answer).values() if inspect.isfunction(f)
    ]  # fmt: skip
    used = set().union(*(_names_in(f.__code__) for f in functions if hasattr(f, "__code__")))
    found = [name for name in names if name in used]
    if not found:
        return None
    where = tr("the answer uses {name}, which does what this exercise asks you to build: "
               "write it from torch's basic operations", name=found[0])  # fmt: skip
    return CheckResult(exercise, FAILED, [tr("✗ {exercise}: {where}", exercise=exercise,
                                              where=where)])  # fmt: skip


class WrongKind(TypeError):
    """The answer handed to a checker is the wrong kind of thing (a class where a function is
    asked for, an instance or a function where a class is): reported, not raised."""


def check_function(name: str, answer) -> None:
    """The checker's own misuse: the answer must be a function, not a class or a value."""
    if inspect.isclass(answer) or not callable(answer):
        raise WrongKind(
            tr(
                "{name} must be a function (pass the function itself, not its result), got "
                "{got_type}",
                name=name,
                got_type=type(answer).__name__ if not inspect.isclass(answer) else "a class",
            )
        )


def check_class(name: str, answer) -> None:
    """The checker's own misuse: the answer must be a class (an nn.Module subclass)."""
    if not inspect.isclass(answer):
        raise WrongKind(
            tr(
                "{name} must be a class (an nn.Module subclass, not an instance or a function), "
                "got {got_type}",
                name=name,
                got_type=type(answer).__name__,
            )
        )


def seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(generator: torch.Generator, *shape: int, dtype=torch.float32, scale: float = 1.0):
    return torch.randn(*shape, generator=generator, dtype=dtype) * scale


def shapes(**tensors) -> str:
    return listing(f"{name} {describe(t)}" for name, t in tensors.items())


def leaves_state_alone(checker: Callable) -> Callable:
    """A checker runs in a known state, whatever the learner did before (gradients on,
    float32 by default, its own seeds), and leaves the learner's random state, grad mode,
    default dtype and thread count as they were when it returns."""

    @functools.wraps(checker)
    def wrapped(*args, **kwargs):
        dtype, threads, grad = (
            torch.get_default_dtype(),
            torch.get_num_threads(),
            torch.is_grad_enabled(),
        )
        with torch.random.fork_rng(devices=[]):
            try:
                torch.set_default_dtype(torch.float32)
                torch.set_grad_enabled(True)
                return checker(*args, **kwargs)
            except WrongKind as wrong:  # the learner passed the wrong thing: say so
                exercise = checker.__name__.removeprefix("check_")
                line = tr("✗ {exercise}: {where}", exercise=exercise, where=str(wrong))
                return CheckResult(exercise, FAILED, [line])
            finally:
                torch.set_default_dtype(dtype)
                torch.set_grad_enabled(grad)
                if torch.get_num_threads() != threads:
                    torch.set_num_threads(threads)

    return wrapped


def randomise_constants(module: nn.Module, generator: torch.Generator) -> nn.Module:
    """Every parameter that a fresh module sets to one constant (LayerNorm's γ = 1 and
    β = 0, zero biases) gets random values around it, so that an answer that ignores it,
    or uses one in another's place, cannot pass by luck."""
    with torch.no_grad():
        for parameter in module.parameters():
            flat = parameter.detach().flatten()
            if flat.numel() > 1 and bool((flat == flat[0]).all()):
                noise = torch.randn(parameter.shape, generator=generator, dtype=parameter.dtype)
                parameter.copy_(flat[0] + 0.5 * noise)
    return module


def calling_none_of(
    builtins: Sequence[tuple[object, str, str]], hint: Callable[[str], str], answer, *args
):
    """answer(*args), with each built-in (owner, attribute, the name a learner writes) made to
    raise Rejected while it runs, its hint hint(name): an exercise that asks the learner to
    write what a built-in does refuses an answer that calls it."""
    saved = [(owner, attribute, getattr(owner, attribute)) for owner, attribute, _ in builtins]

    def refusing(name):
        def refused(*ignored, **ignored_too):
            raise Rejected(
                tr("the answer calls a built-in that this exercise asks you to write"),
                hint(name),
            )

        return refused

    with contextlib.ExitStack() as restore:
        for owner, attribute, original in saved:
            restore.callback(setattr, owner, attribute, original)
        for owner, attribute, name in builtins:
            setattr(owner, attribute, refusing(name))
        return answer(*args)


class _OpWatch(TorchFunctionMode):
    """Notes, while it is active, how many torch functions and tensor methods run and the most
    elements any of them returns. A function mode, not a dispatch mode: the first dispatch
    mode imports sympy (1 s)."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.largest = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel())
        return out


def torch_calls(fn, *args):
    """(fn(*args), how many torch operations it made): a count that grows with the number of
    tokens tells a Python loop over the positions from a broadcast."""
    with _OpWatch() as watch:
        result = fn(*args)
    return result, watch.calls


def largest_tensor_made(fn, *args):
    """(fn(*args), the most elements of any tensor an op made on the way): an exercise that
    asks for an O(m) computation can tell an answer that built an (m, m) matrix."""
    with _OpWatch() as watch:
        result = fn(*args)
    return result, watch.largest


def attempt(fn, *args):
    """fn(*args), or None when a mistaken variant cannot run on these inputs."""
    try:
        return fn(*args)
    except Exception:
        return None


def build(cls, *args, **kwargs):
    """cls(*args, **kwargs) with torch's default initialisation seeded, so reports are stable,
    and every parameter it sets to a constant made random (randomise_constants)."""
    torch.manual_seed(0)
    return randomise_constants(cls(*args, **kwargs), seeded(1))


def linear_weights(module: nn.Module, *names: str) -> dict[str, nn.Linear]:
    """The module's nn.Linear attributes, or a clear error naming the missing one."""
    found = {}
    for name in names:
        layer = getattr(module, name, None)
        if not isinstance(layer, nn.Linear):
            raise AttributeError(
                tr(
                    "{module_type} needs an attribute {name} that is an nn.Linear, got "
                    "{layer_type}",
                    module_type=type(module).__name__,
                    name=name,
                    layer_type=type(layer).__name__,
                )
            )
        found[name] = layer
    return found


def bias_of(layer: nn.Linear) -> torch.Tensor:
    return layer.bias if layer.bias is not None else torch.zeros(layer.out_features)
