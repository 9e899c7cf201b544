"""A model measured against the truth, on held-out sentences of the grammar.

Because the grammar's next-token distributions are known exactly, two measures need no
estimate of the truth:

* KL(true ‖ model), averaged over every predicted position of held-out sentences: 0 only when
  the model's distribution is the true one at each of those prefixes;
* the held-out loss (mean cross-entropy per predicted token) minus the entropy rate: the
  floor. The loss of a model equals entropy + KL on average, so the gap is the KL again,
  up to the sampling noise of the held-out sentences.

The KL is also kept per grammar rule (the rule that produced each position's next token:
the subject, the verb, ...), which says *which* predictions a model has learned.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..corpus import JapaneseGrammar
from ..corpus.grammar import RULES
from ..gpt1 import GPT1, check_gpt1, evaluating
from ..statistics import kl_divergence
from ..support.language import tr
from ..support.validation import check_positive_int


def check_model_fits_grammar(model: GPT1, grammar: JapaneseGrammar) -> None:
    """A GPT1 and a JapaneseGrammar whose tokenizer has the model's vocabulary size."""
    check_gpt1(model)
    if not isinstance(grammar, JapaneseGrammar):
        raise TypeError(
            tr(
                "grammar must be a JapaneseGrammar, got {grammar_type}",
                grammar_type=type(grammar).__name__,
            )
        )
    if model.config.vocab_size != grammar.tokenizer.vocab_size:
        raise ValueError(
            tr(
                "model.config.vocab_size={vocab_size} does not match the grammar's vocabulary of "
                "{grammar_vocab_size} tokens",
                vocab_size=model.config.vocab_size,
                grammar_vocab_size=grammar.tokenizer.vocab_size,
            )
        )


@dataclass
class HeldOut:
    """Held-out sentences with their exact next-token distributions at every position."""

    ids: torch.Tensor  # (B, n): <SOS> ... <EOS> <PAD> ...
    true_probs: torch.Tensor  # (B, n-1, vocab), float32
    mask: torch.Tensor  # (B, n-1) bool: the predicted positions (target is not <PAD>)
    true_loss: float  # the true model's mean -log P per predicted token on these sentences
    # (B, n-1) int64: the index in RULES of the rule that produced each position's next
    # token, -1 where nothing is predicted; None: no KL per rule
    rules: torch.Tensor | None = None

    @property
    def predicted_tokens(self) -> int:
        return int(self.mask.sum())


def make_heldout(grammar: JapaneseGrammar, n: int = 2000, seed: int = 12345) -> HeldOut:
    """n sampled sentences with the grammar's exact next-token distributions at every
    position, to measure a model against the truth.

    Notebook 08.
    """
    ids = grammar.sample_ids(n, seed)
    probs, mask = grammar.true_distributions(ids)
    target_probs = probs.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    true_loss = float(-torch.log(target_probs[mask]).mean())
    rules = grammar.next_token_rules(ids).masked_fill(~mask, -1)
    return HeldOut(ids, probs.float(), mask, true_loss, rules)


@dataclass(frozen=True)
class Measurement:
    """One evaluation: the mean KL and loss per predicted token, and {rule: mean KL}."""

    kl: float
    loss: float
    kl_by_rule: dict[str, float]


def evaluate(model: GPT1, heldout: HeldOut, chunk: int = 250) -> tuple[float, float]:
    """(mean KL(true ‖ model), mean cross-entropy) per predicted held-out token, in nats.

    The sentences go through the model `chunk` at a time: all 2,000 at once would hold
    every layer's activations for all of them, a few hundred MB that a hub serving a class
    cannot spare.

    Notebook 08.
    """
    check_gpt1(model)
    check_positive_int("chunk", chunk)
    result = measure(model, heldout, chunk)
    return result.kl, result.loss


def evaluate_by_rule(model: GPT1, heldout: HeldOut, chunk: int = 250) -> dict[str, float]:
    """{rule: mean KL(true ‖ model)} over the held-out positions whose next token that rule
    of the grammar produced (`RULES`: the subject, the verb, <EOS> as "end", ...), in nats.

    Notebook 08.
    """
    check_gpt1(model)
    check_positive_int("chunk", chunk)
    if heldout.rules is None:
        raise ValueError(tr("heldout.rules is None: make the held-out set with make_heldout"))
    return measure(model, heldout, chunk).kl_by_rule


def measure(model: GPT1, heldout: HeldOut, chunk: int = 250) -> Measurement:
    """The mean KL, the mean loss and the KL per rule ({} without heldout.rules), in one
    pass over the held-out sentences, `chunk` at a time. Unchecked: the public entries
    check their arguments."""
    device = model.device
    kl_sum = loss_sum = 0.0
    by_rule = torch.zeros(len(RULES), dtype=torch.float64, device=device)
    counts = torch.zeros(len(RULES), dtype=torch.float64, device=device)
    with evaluating(model):
        for start in range(0, len(heldout.ids), chunk):
            ids = heldout.ids[start : start + chunk].to(device)
            p = heldout.true_probs[start : start + chunk].to(device)
            mask = heldout.mask[start : start + chunk].to(device)
            log_q = F.log_softmax(model(ids[:, :-1]).float(), dim=-1)
            # a fine-tuned model's extra tokens (notebook 11) keep their probability: the
            # grammar never uses them, so KL counts it as lost
            log_q = log_q[..., : p.shape[-1]]
            kl = kl_divergence(p, log_q.double().exp())  # float64: no underflow to 0
            loss = -log_q.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
            kl_sum += float(kl[mask].double().sum())
            loss_sum += float(loss[mask].double().sum())
            if heldout.rules is not None:
                rules = heldout.rules[start : start + chunk].to(device)
                kept = mask & (rules >= 0)
                by_rule.index_add_(0, rules[kept], kl[kept].double())
                counts.index_add_(0, rules[kept], torch.ones_like(kl[kept], dtype=torch.float64))
    tokens = heldout.predicted_tokens
    rule_kl = {}
    if heldout.rules is not None:
        means = (by_rule / counts).tolist()  # NaN for a rule that never occurs
        rule_kl = dict(zip(RULES, means, strict=True))
    return Measurement(kl_sum / tokens, loss_sum / tokens, rule_kl)
