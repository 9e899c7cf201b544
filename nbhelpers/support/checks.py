"""Numerical checks of a from-scratch result against an independent PyTorch reference."""

from __future__ import annotations

import torch

from .language import tr

FLOAT32_TOLERANCE = 1e-6
# The figure of a check line, in every language. Its last digits depend on the CPU's vector
# kernels and thread count, so tests/nbval.cfg replaces what follows this marker before
# comparing stored outputs (the check itself asserts the tolerance); a translation keeps the
# marker as it is (tests/test_language.py).
ERROR_FIGURE = "|error| = {error:.1e}"


def check_close(
    what: str, ours: torch.Tensor, reference: torch.Tensor, atol: float = FLOAT32_TOLERANCE
) -> None:
    """Print what was compared and the largest absolute error; raise if it exceeds `atol`.

    NaN anywhere fails the check: a NaN must never pass as "close".
    """
    ours, reference = torch.as_tensor(ours), torch.as_tensor(reference)
    if ours.shape != reference.shape:
        raise ValueError(
            f"{what}: shapes differ, ours {tuple(ours.shape)} vs reference {tuple(reference.shape)}"
        )
    difference = (ours.detach().double().cpu() - reference.detach().double().cpu()).abs()
    error = float(difference.max()) if difference.numel() else 0.0
    if difference.isnan().any():
        error = float("nan")
    ok = error <= atol  # False for NaN
    line = tr(
        "{what}: max |error| = {error:.1e} (tolerance {atol:.0e}, shape {shape})",
        what=what, error=error, atol=atol, shape=tuple(ours.shape),
    )  # fmt: skip
    print(f"{'OK ' if ok else 'FAIL'} {line}")
    if not ok:
        raise AssertionError(f"{what}: max |error| {error:.3e} exceeds {atol:.0e}")
