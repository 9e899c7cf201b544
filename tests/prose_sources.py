"""What the `value` expressions of prose_numbers.toml may use: the course's own objects, built
once. Each is the run or the constant a prose number quotes; the test recomputes the number
from it, so a sentence cannot drift from what the code does."""

from __future__ import annotations

import inspect
import math
from functools import cache
from statistics import mean

import numpy as np
import torch
import torch.nn.functional as F
import try_it_runs
import try_its_09 as nb09

from nbhelpers.corpus.tasks import CHOICES
from nbhelpers.exercises.capstone import train_your_gpt1
from nbhelpers.experiments.course_model import load_course_run
from nbhelpers.experiments.head_specialisation import HeadsTask, SubjectPreviousModel
from nbhelpers.experiments.pretraining import learning_rate
from nbhelpers.figures.deep_stack import ZOOM
from nbhelpers.gpt1 import GPT1, GPT1Config
from nbhelpers.memory import attention_memory

GPT1_VOCAB = 40_478  # rows of W_e in GPT-1's released model/params_shapes.json
MB = 1e6


grammar = nb09.grammar  # one grammar for every expression
example_scores = try_it_runs.walk_scores  # 歩く's row of raw scores q·k (notebook 01)


@cache
def gpt1_parameters(n_layers: int = 12) -> int:
    """GPT-1's parameter count at its published sizes, W_e counted once (it is tied)."""
    config = GPT1Config(vocab_size=GPT1_VOCAB, n_ctx=512, n_layers=n_layers)
    with torch.device("meta"):
        return sum(p.numel() for p in GPT1(config).parameters())


def demo_parameters() -> int:
    """Notebook 07's demo model: GPT1Config.small over the grammar's vocabulary."""
    return GPT1Config.small(grammar().tokenizer.vocab_size).parameter_count()


def course_parameters() -> int:
    """The model notebook 08 trains and the course stores."""
    return sum(p.numel() for p in nb09.model().parameters())


@cache
def course_run():
    return load_course_run()


def after_wo(word: str) -> float:
    """The stored model's probability of `word` after 犬 が 河岸 を (notebook 00 prints it)."""
    return nb09.model_p("犬 が 河岸 を", word)


@cache
def tour_heads() -> torch.Tensor:
    """The stored model's four heads on 犬 が 河岸 を 歩く, (heads, n, n) with <SOS> at 0
    (notebook 00's figure titles print each head's two largest weights from を)."""
    from nbhelpers.figures.tour import stored_model

    return stored_model()[3]


def curve(task: str, lam: float, n: int, *, start: str = "pre-trained") -> float:
    """Notebook 11's stored accuracy, the mean over seeds, for one point of its curves."""
    return mean(try_it_runs.stored_accuracies(task, n, start, lam).values())


def float32_underflow() -> float:
    """The x below which e^x rounds to 0 in float32: half the smallest subnormal, 2^-150."""
    return math.log(2.0**-150)


@cache
def half_precision_errors(dtype: torch.dtype) -> tuple[float, float, float]:
    """(mean |O|, max |O|, largest error of F.sdpa in `dtype` / (eps · max |O|)) for 10's
    random unit-variance inputs (n = 1024, 8 heads, d_k = 64), on the CPU."""
    generator = torch.Generator().manual_seed(0)
    Q, K, V = (torch.randn(1, 8, 1024, 64, generator=generator) for _ in range(3))
    reference = F.scaled_dot_product_attention(Q, K, V)
    half = F.scaled_dot_product_attention(Q.to(dtype), K.to(dtype), V.to(dtype)).float()
    largest = float(reference.abs().max())
    error = float((half - reference).abs().max())
    return float(reference.abs().mean()), largest, error / (torch.finfo(dtype).eps * largest)


def flash_bytes(n: int) -> int:
    return attention_memory(n, heads=12)["(b)/(c) flash"]


def fine_tuning_runs() -> list[dict]:
    """11: the stored fine-tuning runs of every task."""
    from nbhelpers.experiments.fine_tuning import load_curves

    return load_curves()["runs"]


NAMESPACE = {
    "inspect": inspect,
    "math": math,
    "np": np,
    "torch": torch,
    "GPT1_VOCAB": GPT1_VOCAB,
    "MB": MB,
    "example_scores": example_scores,
    "grammar": grammar,
    "gpt1_parameters": gpt1_parameters,
    "float32_underflow": float32_underflow,
    "half_precision_errors": half_precision_errors,
    "flash_bytes": flash_bytes,
    "demo_parameters": demo_parameters,
    "course_parameters": course_parameters,
    "course_run": course_run,
    "after_wo": after_wo,
    "tour_heads": tour_heads,
    "curve": curve,
    "HeadsTask": HeadsTask,
    "SubjectPreviousModel": SubjectPreviousModel,
    "learning_rate": learning_rate,
    "ZOOM": ZOOM,
    "GPT1Config": GPT1Config,
    "train_your_gpt1": train_your_gpt1,
    **{name: getattr(try_it_runs, name) for name in try_it_runs.__all__},
    "nb09": nb09,
    "fine_tuning_runs": fine_tuning_runs,
    "CHOICES": CHOICES,
}
