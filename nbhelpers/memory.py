"""How much memory one attention call holds, for sizes too big to run (notebook 10).

The figures are estimates from tensor sizes (what each implementation must hold at once),
which notebook 10 compares with measured peaks at sizes the machine can run.
"""

from __future__ import annotations

import torch

from .support.language import tr
from .support.validation import check_positive_int

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
LENGTHS = [2**k for k in range(7, 18)]  # 128 .. 131072


def attention_memory(
    n: int, *, heads: int = 1, d_k: int = 64, batch: int = 1, dtype: torch.dtype = torch.float32
) -> dict[str, int]:
    """Bytes one self-attention call over n tokens holds at its peak, per implementation.

    * from scratch: the scores, their exponentials and the weights, three (n, n) matrices
      per head, plus the output (n, d_k);
    * math kernel: about two (n, n) matrices per head, plus the output;
    * flash: the output and one float32 number per row (its log-sum-exp), no (n, n) matrix.

    Notebook 10.
    """
    for name, value in (("n", n), ("heads", heads), ("d_k", d_k), ("batch", batch)):
        check_positive_int(name, value)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(
            tr("dtype must be a floating-point torch.dtype, got {dtype!r}", dtype=dtype)
        )
    size = torch.finfo(dtype).bits // 8
    matrix = batch * heads * n * n * size
    output = batch * heads * n * d_k * size
    return {
        "(a) from scratch": 3 * matrix + output,
        "(c) sdpa[math]": 2 * matrix + output,
        "(b)/(c) flash": output + batch * heads * n * 4,
    }


def implementation_label(name: str) -> str:
    """One of attention_memory's keys as a figure shows it, in the current language (the keys
    themselves stay English: code looks the sizes up by them)."""
    # "(c) sdpa[math]" and "(b)/(c) flash" name kernels: the same in every language
    labels = {
        "(a) from scratch": tr("(a) from scratch"),
        "(b) nbhelpers fast path": tr("(b) nbhelpers fast path"),
    }
    return labels.get(name, name)
