"""Numerical checks of a from-scratch result against an independent PyTorch reference."""

from __future__ import annotations

import torch

from .language import tr

FLOAT32_TOLERANCE = 1e-6
# The figure of a check line, in every language: the error, then at once the bracket that
# holds the tolerance, "1.5e-08 (tolerance 1e-06, ...)" or "1.5e-08（許容誤差 1e-06、…）".
# Its last digits depend on the CPU's vector kernels and thread count, so tests/nbval.cfg
# replaces a figure in that place before comparing stored outputs (the check itself asserts
# the tolerance). The place, not a word, marks it: no language has to show an English marker,
# and a translation keeps the figure before its bracket (tests/test_language.py).
ERROR_FIGURE = "{error:.1e}"
ERROR_FIGURE_PATTERN = r"(nan|inf|\d\.\de[-+]\d+)(?= ?[(（])"


def check_close(
    what: str,
    ours: torch.Tensor,
    reference: torch.Tensor,
    atol: float = FLOAT32_TOLERANCE,
) -> None:
    """Print what was compared and the largest absolute error; raise if it exceeds `atol`.

    `what` is the notebook's description of the comparison, in the notebook's own words
    ("softmax(S), ours vs F.softmax"); the rest of the line is nbhelpers' and follows the
    course's language. NaN anywhere fails the check: a NaN must never pass as "close".
    """
    ours, reference = torch.as_tensor(ours), torch.as_tensor(reference)
    if ours.shape != reference.shape:
        raise ValueError(
            tr("{what}: shapes differ, ours {ours} vs reference {reference}",
               what=what, ours=tuple(ours.shape), reference=tuple(reference.shape))
        )  # fmt: skip
    error = max_error(reference, ours, nan_matches=False)
    ok = error <= atol  # False for NaN
    print(
        tr("{status} {what}: max error {error:.1e} (tolerance {atol:.0e}, shape {shape})",
           status=status(ok), what=what, error=error, atol=atol,
           shape=tuple(ours.shape))
    )  # fmt: skip
    if not ok:
        raise AssertionError(
            tr("{what}: max error {error:.3e} exceeds the tolerance {atol:.0e}",
               what=what, error=error, atol=atol)
        )  # fmt: skip


def status(ok: bool) -> str:
    """The word that opens a check line: OK or FAIL, in the course's language."""
    return tr("OK ") if ok else tr("FAIL")


def max_error(expected: torch.Tensor, got: torch.Tensor, *, nan_matches: bool = True) -> float:
    """The largest |expected - got| (the comparer of check_close and the exercise checkers).
    Equal infinities, a masked score's -inf on both sides, are no error (inf - inf would be
    NaN). NaN against NaN is no error either where `nan_matches` (a checker compares an
    answer with a reference that is NaN there too); otherwise any NaN makes the error NaN,
    which no tolerance passes."""
    expected, got = expected.detach().double().cpu(), got.detach().double().cpu()
    both_nan = expected.isnan() & got.isnan()
    same = (expected == got) | (both_nan if nan_matches else torch.zeros_like(both_nan))
    gap = (expected - got).abs().masked_fill(same, 0.0)
    if not nan_matches and (expected.isnan() | got.isnan()).any():
        return float("nan")
    return float(gap.max()) if gap.numel() else 0.0
