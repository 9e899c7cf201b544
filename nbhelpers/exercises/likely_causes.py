"""What a wrong result usually means, guessed from the result alone when none of a case's
named mistakes matches it: a sign, a transpose, a factor, a lost axis, a list for a tensor.
Tables of (test, hint): the first test that holds gives the hint; a test returns the
values its hint names, or None."""

from __future__ import annotations

import re

import torch

from ..support.language import N_, tr


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal up to 1e-4 of b's largest finite entry, with their infinities where b has its."""
    if a.shape != b.shape or not torch.equal(a.isinf(), b.isinf()):
        return False
    finite = b.isfinite()
    if not finite.any() or not torch.equal(a[~finite], b[~finite]):
        return False
    scale = max(float(b[finite].abs().max()), 1e-30)
    return float((a[finite] - b[finite]).abs().max()) <= 1e-4 * scale


def _finite(e: torch.Tensor, g: torch.Tensor):
    """The entries both hold as finite numbers, flattened, in float64."""
    keep = torch.isfinite(e) & torch.isfinite(g)
    return e[keep].double(), g[keep].double()


def _sign(e, g):
    return {} if _close(g, -e) and float(e.abs().max()) > 0 else None


def _transposed(e, g):
    square = e.dim() >= 2 and e.shape[-1] == e.shape[-2]
    return {} if square and _close(g, e.mT) else None


def _scaled(e, g):
    e, g = _finite(e, g)
    if e.numel() < 2 or float((e * e).sum()) == 0:
        return None
    c = float((e * g).sum() / (e * e).sum())
    if abs(c - 1) < 1e-3 or abs(c) < 1e-6 or not _close(g, c * e):
        return None
    return {"c": f"{c:.4g}"}


def _offset_per_row(e, g):
    if e.dim() < 1 or e.shape[-1] < 2:
        return None
    d = g.double() - e.double()
    if not torch.isfinite(d).all():
        return None
    spread = (d - d[..., :1]).abs().max()
    return {} if float(spread) <= 1e-4 * max(float(e.abs().max()), 1.0) else None


def _mask_rows(e, g):
    """A mask (0 where a query may look, -inf where not): the first row that differs."""
    if not all(bool(((t == 0) | (t == float("-inf"))).all()) for t in (e, g)):
        return None
    flat_e, flat_g = e.reshape(-1, e.shape[-1]), g.reshape(-1, g.shape[-1])
    for row, (er, gr) in enumerate(zip(flat_e, flat_g, strict=True)):
        if not torch.equal(er, gr):
            return {
                "row": row % e.shape[-2] if e.dim() >= 2 else row,
                "expected": _keys(er == 0),
                "got": _keys(gr == 0),
            }
    return None


def _keys(visible: torch.Tensor) -> str:
    keys = [int(k) for k in visible.nonzero().flatten()]
    if not keys:
        return tr("no key")
    if keys == list(range(keys[0], keys[-1] + 1)):
        return f"{keys[0]}..{keys[-1]}" if len(keys) > 1 else str(keys[0])
    return ", ".join(map(str, keys))


def _infinite(e, g):
    n = int((torch.isinf(g) & torch.isfinite(e)).sum())
    return {"n": n} if n else None


def _finite_where_infinite(e, g):
    n = int((torch.isinf(e) & torch.isfinite(g)).sum())
    return {"n": n} if n else None


def _rows_not_normalised(e, g):
    if e.dim() < 1 or not bool((e >= 0).all()) or e.shape[-1] < 2:
        return None
    if not _close(e.sum(-1), torch.ones_like(e.sum(-1))):
        return None
    return None if _close(g.sum(-1), torch.ones_like(g.sum(-1))) else {}


def _float32_rounding(e, g):
    if e.dtype != torch.float64:
        return None
    error = float((e - g).abs().nan_to_num().max())
    return {} if error <= 1e-6 * max(float(e.abs().max()), 1.0) else None


def _permuted(e, g):
    """The right numbers along the last axis, in other places."""
    if e.dim() < 1 or e.shape[-1] < 2 or not bool(torch.isfinite(e).all()):
        return None
    return {} if _close(g.sort(-1).values, e.sort(-1).values) else None


def _nan(e, g):
    return {} if bool((g.isnan() & ~e.isnan()).any()) else None


def _nearly(e, g):
    error = float((e.double() - g.double()).abs().max())
    return {} if error <= 1e-4 * max(float(e.abs().max()), 1.0) else None


# Two float tensors of one shape that differ: tried in order, the errors of rounding size
# before the relations only a real difference shows.
VALUES = [
    (
        _nan,
        N_(
            "NaN comes from inf - inf or 0 x inf: an exp that overflowed (subtract each row's "
            "maximum first), or a row with every entry masked"
        ),
    ),
    (_mask_rows, N_("query {row} should see keys {expected}; yours sees {got}")),
    (_sign, N_("the result has the opposite sign: a minus sign is missing, or one too many")),
    (_transposed, N_("the result is transposed: rows and columns are swapped")),
    (
        _infinite,
        N_(
            "{n} entries are infinite where the expected value is finite: an exp that "
            "overflowed, a log of 0, or a mask on the wrong entries"
        ),
    ),
    (
        _finite_where_infinite,
        N_("{n} entries should be -inf and are finite: use float('-inf'), not a large number"),
    ),
    (
        _float32_rounding,
        N_(
            "the error is float32's rounding on a float64 case: a step computes in float32 "
            "(a tensor made without dtype=, or .float())"
        ),
    ),
    (
        _nearly,
        N_(
            "close, but not exact: a small constant (an epsilon in a log or a division, a "
            "clamp) shifts the result"
        ),
    ),
    (
        _permuted,
        N_(
            "the right numbers in the wrong places: each row holds the expected values, in "
            "another order (a sorted order left in place, or an index that was not undone?)"
        ),
    ),
    (_scaled, N_("the result is {c} times the expected one: a scale factor is wrong or missing")),
    (
        _offset_per_row,
        N_(
            "each row is off by one constant: a term added or subtracted once per row (a "
            "maximum, a log of a sum) is wrong or missing"
        ),
    ),
    (
        _rows_not_normalised,
        N_("the rows should sum to 1 and yours do not: normalise over the last axis, dim=-1"),
    ),
]


def _one_number(e, g):
    return {"shape": tuple(e.shape)} if g.dim() == 0 < e.dim() else None


def _transposed_shape(e, g):
    swapped = e.dim() >= 2 and e.shape[-1] != e.shape[-2]
    return {} if swapped and tuple(g.shape) == (*e.shape[:-2], e.shape[-1], e.shape[-2]) else None


def _axis_missing(e, g):
    for axis in range(e.dim()):
        if g.dim() == e.dim() - 1 and tuple(g.shape) == e.shape[:axis] + e.shape[axis + 1 :]:
            return {"axis": axis, "size": e.shape[axis]}
    return None


def _extra_axis(e, g):
    for axis in range(g.dim()):
        if e.dim() == g.dim() - 1 and g.shape[:axis] + g.shape[axis + 1 :] == e.shape:
            return {"axis": axis, "size": g.shape[axis]}
    return None


def _one_axis_wrong(e, g):
    if g.dim() != e.dim():
        return None
    wrong = [a for a in range(e.dim()) if g.shape[a] != e.shape[a]]
    if len(wrong) == 1:
        return {"axis": wrong[0], "got": g.shape[wrong[0]], "expected": e.shape[wrong[0]]}
    return None


def _off_by_one(e, g):
    found = _one_axis_wrong(e, g)
    return found if found and abs(found["got"] - found["expected"]) == 1 else None


# Two tensors of different shapes.
SHAPES = [
    (
        _one_number,
        N_(
            "one number where {shape} are expected: a sum or mean ran over every axis; give it dim="
        ),
    ),
    (_transposed_shape, N_("the result is transposed: its last two axes are swapped")),
    (
        _axis_missing,
        N_(
            "axis {axis} (of {size}) is missing: a sum, mean or max without keepdim=True, a "
            "squeeze, or an index that dropped it"
        ),
    ),
    (
        _extra_axis,
        N_(
            "an extra axis {axis} (of {size}): keepdim=True, an unsqueeze, or a batch axis "
            "where the case has none"
        ),
    ),
    (
        _off_by_one,
        N_(
            "axis {axis} holds {got} entries, not {expected}: one too many or too few; check "
            "where a range or a slice stops"
        ),
    ),
    (
        _one_axis_wrong,
        N_(
            "axis {axis} holds {got} entries, not {expected}: a sum, a product or a slice over "
            "the wrong axis?"
        ),
    ),
]

# A value that is not a tensor where one is expected, by its type.
TYPES = [
    (type(None), N_("the function returns None: is its return statement missing?")),
    ((list, tuple), N_("return a tensor (torch.tensor or torch.stack), not a Python list")),
    (
        (int, float, bool),
        N_(
            "return a tensor, not a Python number: .item() and float() leave torch, and the "
            "gradient with it"
        ),
    ),
]

# What an error raised inside the answer usually means, by its message.
ERRORS = [
    (
        r"must match the size|size mismatch|shapes cannot be multiplied|cannot be broadcast|"
        r"mat1 and mat2|is invalid for input of size",
        N_(
            "the shapes do not line up on this case's inputs: a reduction that lost its axis "
            "(keepdim=True), a transpose of the wrong axes, or an axis the answer assumes; "
            "print each tensor's .shape"
        ),
    ),
    (
        r"values to unpack",
        N_(
            "the answer unpacks a shape into a fixed number of names: this case's tensors have "
            "a different number of axes (x.shape[-2:] reads the last two whatever comes before)"
        ),
    ),
    (
        r"out of bounds|out of range",
        N_("an index runs past the end of an axis: check where a range or a loop stops"),
    ),
    (
        r"Expected target size",
        N_(
            "F.cross_entropy wants the classes on axis 1: give it (N, C) logits and (N,) "
            "targets, flattening the batch first"
        ),
    ),
    (
        r"does not require grad|does not have a grad_fn",
        N_(
            "the loss has no graph: it was computed under torch.no_grad(), detached, or "
            "rebuilt from a Python number"
        ),
    ),
    (
        r"expected (scalar type|m1 and m2 to have the same dtype)|dtype",
        N_(
            "two tensors of different dtypes meet: make new tensors with the inputs' dtype "
            "(dtype=x.dtype)"
        ),
    ),
    (r"NoneType", N_("a value is None: does a function you call return nothing?")),
]


def likely_cause(expected, got) -> str | None:
    """The hint for a wrong result no named mistake explains, or None (core.guessed_hint
    picks the value of a tuple to explain)."""
    if not isinstance(expected, torch.Tensor):
        return None
    if not isinstance(got, torch.Tensor):
        return next((tr(h) for kinds, h in TYPES if isinstance(got, kinds)), None)
    table = SHAPES if got.shape != expected.shape else VALUES
    if table is VALUES and not (expected.is_floating_point() and got.is_floating_point()):
        return None
    for test, hint in table:
        try:
            found = test(expected.detach(), got.detach())
        except RuntimeError:  # a relation that cannot hold between these tensors
            found = None
        if found is not None:
            return tr(hint, **found)
    return None


def likely_cause_of_error(error: BaseException) -> str | None:
    """The hint for an error the answer raised, from its message, or None."""
    message = str(error)
    return next((tr(h) for pattern, h in ERRORS if re.search(pattern, message)), None)
