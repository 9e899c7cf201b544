"""Argument checks that turn bad input into an error naming the argument and what was expected,
instead of a shape-mismatch trace from deep inside torch or a silent NaN."""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np
import torch

from .language import tr

# Arguments are checked once, at the public entry a learner calls (GPT1.forward, generate,
# MultiHeadAttention.forward); what that entry runs inside `checked()` skips the checks of
# the layers it calls, so a forward pass does not check (and sync to the host) in every layer.
_CHECKED = contextvars.ContextVar("nbhelpers_arguments_checked", default=False)


@contextlib.contextmanager
def checked():
    """Inside: the arguments were checked by the public entry that opened the block."""
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def checking() -> bool:
    """Whether a public entry must check its arguments: False inside `checked()`."""
    return not _CHECKED.get()


def is_int(value) -> bool:
    """An int (NumPy's too) that is not a bool: bool is an int subclass, but True as a count,
    a size or an index is always a mistake."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value) -> bool:
    """An int or a float that is not a bool."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_positive_int(name: str, value) -> None:
    if not is_int(value) or value < 1:
        raise ValueError(
            tr(
                "{name} must be a positive int, got {value!r}",
                name=name,
                value=value,
            )
        )


def check_seed(name: str, value) -> None:
    """A seed for torch's and NumPy's generators: an int in [0, 2**32)."""
    if not is_int(value) or not 0 <= value < 2**32:
        raise ValueError(
            tr(
                "{name} must be an int in [0, 2**32), got {value!r}",
                name=name,
                value=value,
            )
        )


def check_positive_number(name: str, value) -> None:
    """A number > 0 (an int or a float; inf allowed, as for a time limit), such as a learning
    rate."""
    if not is_number(value) or not value > 0:
        raise ValueError(
            tr("{name} must be a positive number, got {value!r}", name=name, value=value)
        )


def check_probability(name: str, value) -> None:
    """A rate in [0, 1), such as a dropout probability."""
    if not is_number(value) or not 0.0 <= value < 1.0:
        raise ValueError(
            tr(
                "{name} must be in [0, 1), got {value!r}",
                name=name,
                value=value,
            )
        )


def check_token_ids(ids, vocab_size: int, n_ctx: int | None = None, name: str = "ids"):
    """Token ids: an integer tensor (..., n) with 0 <= id < vocab_size and n <= n_ctx."""
    if not isinstance(ids, torch.Tensor):
        raise TypeError(
            tr(
                "{name} must be a torch.Tensor of token ids, got {got_type}",
                name=name,
                got_type=type(ids).__name__,
            )
        )
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise ValueError(
            tr(
                "{name} must hold integer token ids, got dtype {dtype}",
                name=name,
                dtype=ids.dtype,
            )
        )
    if ids.dim() < 1 or ids.shape[-1] < 1:
        raise ValueError(
            tr(
                "{name} must have shape (..., n) with n >= 1, got {ids_shape}",
                name=name,
                ids_shape=tuple(ids.shape),
            )
        )
    if n_ctx is not None and ids.shape[-1] > n_ctx:
        raise ValueError(
            tr(
                "{name} has {size} positions but the context holds at most n_ctx={n_ctx}",
                name=name,
                size=ids.shape[-1],
                n_ctx=n_ctx,
            )
        )
    if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(
            tr(
                "{name} must lie in [0, vocab_size={vocab_size}), got values from "
                "{int_ids_min} to {int_ids_max}",
                name=name,
                vocab_size=vocab_size,
                int_ids_min=int(ids.min()),
                int_ids_max=int(ids.max()),
            )
        )
    return ids


def check_float_tensor(name: str, x, *, min_rank: int = 2) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            tr(
                "{name} must be a torch.Tensor, got {got_type}",
                name=name,
                got_type=type(x).__name__,
            )
        )
    if not x.is_floating_point():
        raise ValueError(
            tr(
                "{name} must be a floating-point tensor, got dtype {dtype}; convert it "
                "with {name}.float()",
                name=name,
                dtype=x.dtype,
            )
        )
    if x.dim() < min_rank:
        raise ValueError(
            tr(
                "{name} must have at least {min_rank} dimensions (..., length, "
                "features), got shape {x_shape}",
                name=name,
                min_rank=min_rank,
                x_shape=tuple(x.shape),
            )
        )
    return x


def check_same_device(**tensors: torch.Tensor | None) -> None:
    present = {name: t for name, t in tensors.items() if t is not None}
    devices = {t.device for t in present.values()}
    if len(devices) > 1:
        found = ", ".join(f"{name} on {t.device}" for name, t in present.items())
        raise ValueError(
            tr(
                "all tensors must be on one device, got {found}",
                found=found,
            )
        )


def check_qkv(Q, K, V=None) -> None:
    """Q (..., n, d_k), K (..., m, d_k), V (..., m, d_v), with broadcastable batch dims."""
    check_float_tensor("Q", Q)
    check_float_tensor("K", K)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(
            tr(
                "Q and K must have the same feature size d_k (last dim), got Q "
                "{Q_shape} and K {K_shape}",
                Q_shape=tuple(Q.shape),
                K_shape=tuple(K.shape),
            )
        )
    if V is not None:
        check_float_tensor("V", V)
        if K.shape[-2] != V.shape[-2]:
            raise ValueError(
                tr(
                    "K and V must have the same length m (one value per key, dim -2), got "
                    "K {K_shape} and V {V_shape}",
                    K_shape=tuple(K.shape),
                    V_shape=tuple(V.shape),
                )
            )
    dtypes = {t.dtype for t in (Q, K, V) if t is not None}
    if len(dtypes) > 1:
        found = ", ".join(
            f"{n} {t.dtype}" for n, t in (("Q", Q), ("K", K), ("V", V)) if t is not None
        )
        raise ValueError(
            tr(
                "Q, K and V must have one dtype, got {found}; convert them with .to(Q.dtype)",
                found=found,
            )
        )
    check_same_device(Q=Q, K=K, V=V)
    batch = [tuple(t.shape[:-2]) for t in (Q, K, V) if t is not None]
    try:
        torch.broadcast_shapes(*batch)
    except RuntimeError:
        raise ValueError(
            tr(
                "the batch dimensions of Q, K and V must broadcast, got {shapes}",
                shapes=", ".join(map(str, batch)),
            )
        ) from None


def broadcasts_to(tensor: torch.Tensor, shape: tuple[int, ...]) -> bool:
    """Whether `tensor` broadcasts to exactly `shape` (as a mask must, to the scores)."""
    try:
        return torch.broadcast_shapes(tuple(tensor.shape), tuple(shape)) == tuple(shape)
    except RuntimeError:
        return False


def check_additive_mask(
    mask, scores_shape: tuple[int, ...], device: torch.device, *, shape_error: str | None = None
) -> torch.Tensor:
    """An additive mask: 0 where a key may be attended, -inf where not; broadcasts to scores
    (`shape_error`: the caller's own message for a mask that does not, in its terms).

    Returns the mask's maximum over each row of keys (..., n, 1): -inf marks a query that may
    see no key at all. One reduction serves both that and the NaN/+inf check, which keeps the
    fast path's overhead small.
    """
    if not isinstance(mask, torch.Tensor):
        raise TypeError(
            tr(
                "mask must be a torch.Tensor or None, got {got_type}",
                got_type=type(mask).__name__,
            )
        )
    if mask.dtype == torch.bool:
        raise TypeError(
            tr(
                "mask must be additive (0.0 where a key may be attended, -inf where "
                "not), got a boolean tensor: boolean masks flip meaning between APIs. "
                "Convert with torch.zeros(shape).masked_fill(blocked, float('-inf'))",
            )
        )
    if not mask.is_floating_point():
        raise ValueError(
            tr(
                "mask must be a floating-point tensor, got dtype {dtype}",
                dtype=mask.dtype,
            )
        )
    if mask.device != device:
        raise ValueError(
            tr(
                "mask must be on {device} like the inputs, got {mask_device}",
                device=device,
                mask_device=mask.device,
            )
        )
    if not broadcasts_to(mask, scores_shape):
        raise ValueError(
            shape_error
            or tr(
                "mask of shape {mask_shape} does not broadcast to the scores' shape "
                "{scores_shape} (..., n queries, m keys)",
                mask_shape=tuple(mask.shape),
                scores_shape=tuple(scores_shape),
            )
        )
    row_max = mask.amax(dim=-1, keepdim=True) if mask.numel() else mask
    if row_max.numel() and not bool(row_max.max() < float("inf")):  # NaN compares False too
        raise ValueError(
            tr(
                "mask may hold only finite values and -inf, but it holds NaN or +inf",
            )
        )
    return row_max
