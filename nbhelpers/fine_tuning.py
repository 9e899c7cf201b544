"""Fine-tuning GPT-1 on a labelled task: GPT-1's §3.2 and §3.3, notebook 11.

Input transformations (§3.3, Figure 1 of the paper): every task becomes token sequences that
the pre-trained model reads left to right, from a start token to an extract token:

    classification:   <SOS> text <EXTRACT>
    entailment:       <SOS> premise <DELIM> hypothesis <EXTRACT>
    similarity:       <SOS> a <DELIM> b <EXTRACT>  and  <SOS> b <DELIM> a <EXTRACT>
                      (both orders: the pair has none; their h_L^m are added before W_y)
    multiple choice:  <SOS> context <DELIM> answer_k <EXTRACT>, one sequence per answer k

The pre-trained model already starts every sentence with <SOS>, so the course lets <SOS> serve
as the start token; <DELIM> and <EXTRACT> are new rows of W_e (`GPT1.add_tokens`). GPT-1 makes
its start token new as well: <START>, a third new row (the paper's recipe in
experiments/fine_tuning.py swaps it in).

The objectives, for a labelled set C of (x¹ .. xᵐ, y):

    P(y | x¹..xᵐ) = softmax(h_L^m W_y)           h_L^m: the last block's state at <EXTRACT>
    L2(C) = Σ_(x,y) log P(y | x¹..xᵐ)
    L1(C) = Σ_i log P(u_i | u_(i-k) .. u_(i-1))  the language-model objective on C's own tokens
    L3(C) = L2(C) + λ·L1(C)                       λ = 0.5 in GPT-1

L1, L2 and L3 are log-likelihoods: training maximises them, so the loss to minimise is their
negative, each term averaged: `fine_tuning_loss` is -L2 / B - λ·L1 / N over a batch of B
examples with N predicted tokens. (GPT-1's code averages L1 over each sequence's tokens and
then over the sequences; the two agree when the sequences have the same length.)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .corpus.tokenizer import PAD, SOS
from .gpt1 import GPT1, check_gpt1
from .support.language import tr
from .support.validation import check_positive_int, check_probability, is_int, is_number

DELIM, EXTRACT, START = "<DELIM>", "<EXTRACT>", "<START>"
TASK_TOKENS = (DELIM, EXTRACT)  # the rows fine-tuning adds to W_e, in this order
_RESERVED = {PAD, SOS, DELIM, EXTRACT, START}


def _text(name: str, tokens) -> list:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence) or not len(tokens):
        raise TypeError(
            tr(
                "{name} must be a non-empty list of tokens, got {tokens!r}",
                name=name,
                tokens=tokens,
            )
        )
    reserved = [t for t in tokens if t in _RESERVED]
    if reserved:
        raise ValueError(
            tr(
                "{name} must not hold the task tokens {task_tokens}: {reserved}",
                name=name,
                task_tokens=sorted(_RESERVED),
                reserved=reserved,
            )
        )
    return list(tokens)


def classification_input(text: Sequence[str]) -> list[str]:
    """<SOS> text <EXTRACT>."""
    return [SOS, *_text("text", text), EXTRACT]


def entailment_input(premise: Sequence[str], hypothesis: Sequence[str]) -> list[str]:
    """<SOS> premise <DELIM> hypothesis <EXTRACT>."""
    return [SOS, *_text("premise", premise), DELIM, *_text("hypothesis", hypothesis), EXTRACT]


def similarity_inputs(a: Sequence[str], b: Sequence[str]) -> list[list[str]]:
    """Both orders, [<SOS> a <DELIM> b <EXTRACT>, <SOS> b <DELIM> a <EXTRACT>]."""
    a, b = _text("a", a), _text("b", b)
    return [[SOS, *a, DELIM, *b, EXTRACT], [SOS, *b, DELIM, *a, EXTRACT]]


def multiple_choice_inputs(context: Sequence[str], answers: Sequence[Sequence[str]]) -> list:
    """One sequence per answer: [<SOS> context <DELIM> answer_k <EXTRACT> for each k]."""
    context = _text("context", context)
    if isinstance(answers, str) or not isinstance(answers, Sequence) or len(answers) < 2:
        raise TypeError(
            tr(
                "answers must be a list of 2 or more answers, got {answers!r}",
                answers=answers,
            )
        )
    return [
        [SOS, *context, DELIM, *_text(f"answers[{k}]", answer), EXTRACT]
        for k, answer in enumerate(answers)
    ]


def extract_states(h: torch.Tensor, ids: torch.Tensor, extract_id: int) -> torch.Tensor:
    """h_L^m: each sequence's hidden state at its <EXTRACT> token, (..., n, d) -> (..., d).

    Sequences of different lengths are padded on the right, so <EXTRACT> sits at a different
    position in each; causal attention keeps the padding after it from reaching it."""
    at = ids == extract_id  # (..., n): True at exactly one position per sequence
    counts = at.sum(-1)
    if bool((counts != 1).any()):
        raise ValueError(
            tr(
                "ids must hold exactly one <EXTRACT> (id {extract_id}) per sequence, "
                "got counts {counts}",
                extract_id=extract_id,
                counts=sorted(set(counts.flatten().tolist())),
            )
        )
    return (h * at.unsqueeze(-1)).sum(-2)  # picks one row per sequence, exactly


KINDS = ("classification", "similarity", "multiple choice")  # how a classifier reads h_L^m


class GPT1Classifier(nn.Module):
    """A pre-trained GPT1 with a linear head W_y on its state at <EXTRACT>:
    P(y | x¹..xᵐ) = softmax(h_L^m W_y).

    forward(ids) returns the class logits and the language-model logits of the same pass,
    which L3's auxiliary term L1 needs. `kind` says how the sequences of one example combine:

    * "classification" (and entailment): ids (B, n), one sequence per example;
    * "similarity": ids (B, 2, n), the pair in both orders, whose h_L^m are added;
    * "multiple choice": ids (B, k, n), one sequence per answer; W_y gives each answer one
      score (n_classes = 1) and the softmax runs over the k answers.

    Notebook 11.
    """

    def __init__(
        self, gpt: GPT1, n_classes: int, extract_id: int, *, seed: int = 0,
        kind: str = "classification", dropout: float = 0.0,
    ):  # fmt: skip
        super().__init__()
        check_gpt1(gpt)
        check_positive_int("n_classes", n_classes)
        check_probability("dropout", dropout)
        if kind not in KINDS:
            raise ValueError(
                tr("kind must be one of {kinds}, got {kind!r}", kinds=KINDS, kind=kind)
            )
        if kind == "multiple choice" and n_classes != 1:
            raise ValueError(
                tr(
                    "a multiple-choice head scores each answer with one number: n_classes must "
                    "be 1, got {n_classes}",
                    n_classes=n_classes,
                )
            )
        if not is_int(extract_id) or not 0 <= extract_id < gpt.config.vocab_size:
            raise ValueError(
                tr(
                    "extract_id must be a token id of the model, in [0, {vocab_size}), got "
                    "{extract_id!r}",
                    vocab_size=gpt.config.vocab_size,
                    extract_id=extract_id,
                )
            )
        self.gpt = gpt
        self.kind = kind
        self.extract_id = int(extract_id)
        self.dropout = nn.Dropout(dropout)  # on h_L^m before W_y: 0.1 in GPT-1's recipe
        with torch.random.fork_rng(devices=[]):  # drawn below from `seed`, not the global RNG
            self.W_y = nn.Linear(gpt.config.d_model, n_classes, bias=False)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            weight = torch.empty(self.W_y.weight.shape).normal_(0.0, 0.02, generator=generator)
            self.W_y.weight.copy_(weight.to(gpt.device, gpt.W_e.weight.dtype))
        self.to(gpt.device, gpt.W_e.weight.dtype)

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.gpt.hidden_states(ids)  # (B, n, d), or (B, 2 or k, n, d); ids checked here
        # the token ids first (the model says what is wrong with them), then their layout
        wanted = 2 if self.kind == "classification" else 3
        if ids.dim() != wanted or (self.kind == "similarity" and ids.shape[1] != 2):
            shape = {"classification": "(B, n)", "similarity": "(B, 2, n)"}.get(
                self.kind, "(B, k, n)"
            )
            raise ValueError(
                tr(
                    "ids must be {shape} for a {kind} head, got shape {got}",
                    shape=shape,
                    kind={
                        "classification": tr("classification"),
                        "similarity": tr("similarity"),
                        "multiple choice": tr("multiple choice"),
                    }[self.kind],
                    got=tuple(ids.shape),
                )
            )
        h_m = extract_states(h, ids, self.extract_id)  # (B, d), or (B, 2 or k, d)
        if self.kind == "similarity":
            h_m = h_m.sum(1)  # the two orders' states added
        logits = self.W_y(self.dropout(h_m))  # (B, n_classes), or (B, k, 1) for multiple choice
        if self.kind == "multiple choice":
            logits = logits.squeeze(-1)  # (B, k): one score per answer, softmax over k
        return logits, self.gpt.logits(h)  # and the LM logits, (B, [2 or k,] n, vocab)


def l2(class_logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """L2(C) = Σ log P(y | x¹..xᵐ): the log-probability of each example's label, summed."""
    log_p = class_logits.log_softmax(-1)  # (B, n_classes)
    return log_p.gather(-1, labels.unsqueeze(-1)).sum()


def l1(lm_logits: torch.Tensor, ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """L1(C) = Σ_i log P(u_i | u_<i) over the predicted tokens of C (targets that are not
    <PAD>): position t predicts token t + 1."""
    log_p = lm_logits[..., :-1, :].log_softmax(-1)  # (..., n-1, vocab)
    targets = ids[..., 1:]
    picked = log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (..., n-1)
    return picked.masked_fill(targets == pad_id, 0.0).sum()


def l3(l2_value: torch.Tensor, l1_value: torch.Tensor, lam: float = 0.5) -> torch.Tensor:
    """L3(C) = L2(C) + λ·L1(C)."""
    return l2_value + lam * l1_value


def fine_tuning_loss(
    classifier: GPT1Classifier,
    ids: torch.Tensor,
    labels: torch.Tensor,
    *,
    lam: float = 0.5,
    pad_id: int,
    lm_examples: torch.Tensor | None = None,
    parts: bool = False,
):
    """The loss to minimise: -L2 / B - λ·L1 / N for B examples with N predicted tokens (not
    <PAD>), i.e. the classifier's mean cross-entropy plus λ times the language model's.
    `lm_examples` (B,) bool, if given, keeps L1 to the examples marked True (notebook 11 tests
    L1 on the grammatical sentences only); None: all of them. With `parts`, also its two
    terms: (loss, -L2 / B, -L1 / N), the last 0 when λ = 0 (it is not computed)."""
    if not isinstance(classifier, GPT1Classifier):
        raise TypeError(
            tr(
                "classifier must be a GPT1Classifier, got {got_type}",
                got_type=type(classifier).__name__,
            )
        )
    if not is_number(lam) or lam < 0:
        raise ValueError(
            tr(
                "lam (λ) must be a number >= 0, got {lam!r}",
                lam=lam,
            )
        )
    if not isinstance(labels, torch.Tensor) or labels.shape != ids.shape[:1]:
        raise ValueError(
            tr(
                "labels must be a tensor with one label per example, shape {shape}",
                shape=tuple(ids.shape[:1]),
            )
        )
    if lm_examples is not None and (
        not isinstance(lm_examples, torch.Tensor)
        or lm_examples.dtype != torch.bool
        or lm_examples.shape != ids.shape[:1]
    ):
        raise ValueError(
            tr(
                "lm_examples must be None or a bool tensor with one entry per example, "
                "shape {shape}",
                shape=tuple(ids.shape[:1]),
            )
        )
    class_logits, lm_logits = classifier(ids)
    classification = F.cross_entropy(class_logits, labels)  # -L2 / B
    loss, language = classification, classification.new_zeros(())  # -L1 / N
    if lam and (lm_examples is None or bool(lm_examples.any())):
        if lm_examples is not None:  # the other examples' tokens become targets L1 skips
            keep = lm_examples.view(-1, *[1] * (ids.dim() - 1))
            ids = ids.masked_fill(~keep, pad_id)
        targets = ids[..., 1:].flatten()
        lm = lm_logits[..., :-1, :].flatten(0, -2)  # (B·(n-1), vocab)
        language = F.cross_entropy(lm, targets, ignore_index=pad_id)
        loss = classification + lam * language
    return (loss, classification, language) if parts else loss
