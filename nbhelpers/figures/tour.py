"""Notebook 00's first look at where the course is going: the stored model's four heads on
犬 が 河岸 を 歩く, and its next-word probabilities beside the grammar's exact ones."""

from __future__ import annotations

import torch
from matplotlib.figure import Figure

from ..corpus import JapaneseGrammar
from ..corpus.grammar import ADVERBS
from ..experiments.course_model import load_course_model
from ..multihead import head_removed
from ..statistics import kl_divergence
from ..support.language import tr
from ..support.tables import table
from .heatmap import attention_heatmaps

SENTENCE = "犬 が 河岸 を 歩く"
# The verb after を depends on the subject and on the place: change one, then the other.
PREFIXES = ("犬 が 河岸 を", "犬 が 川 を", "鳥 が 河岸 を")


def stored_model(device=None):
    """What both tour cells read: the tokenizer, the stored model in float64 (the same digits
    everywhere), the sentence's labels, its four heads' weights (heads, n, n), and after each
    prefix the model's next-word distribution and the grammar's."""
    grammar = JapaneseGrammar()
    tokens = grammar.tokenizer
    model = load_course_model(device, dtype=torch.float64)
    sentence = tokens.encode(SENTENCE).to(model.W_e.weight.device)
    labels = tokens.decode(sentence)
    with torch.no_grad():
        _, heads = model.blocks[0].attn(model.embed(sentence), return_weights=True)
    model_p = {prefix: next_word(model, tokens, prefix) for prefix in PREFIXES}
    true_p = {p: grammar.true_next_token_distribution(tokens.encode(p)) for p in PREFIXES}
    return tokens, model, labels, heads, model_p, true_p


def course_model_tour(device=None) -> Figure:
    """Print where each head of the stored model looks from を, and the model's next-word
    probabilities after three prefixes beside the grammar's; return the heads' figure."""
    tokens, model, labels, heads, model_p, true_p = stored_model(device)
    wo = labels.index("を")
    for k, row in enumerate(heads[:, wo]):
        print(
            tr(
                "head {k}: を looks most at {token} ({weight:.2f})",
                k=k,
                token=labels[int(row.argmax())],
                weight=float(row.max()),
            )
        )
    # the verbs that any of the prefixes allows (the adverbs get 0.1 after each)
    verbs = [
        t
        for t in tokens.tokens
        if t not in ADVERBS and any(true_p[p][tokens.ids[t]] > 0 for p in PREFIXES)
    ]

    def cell(verb, prefix):
        m, t = (float(d[prefix][tokens.ids[verb]]) for d in (model_p, true_p))
        return "–" if max(m, t) < 0.0005 else f"{m:.3f} / {t:.3f}"

    rows = [[verb] + [cell(verb, prefix) for prefix in PREFIXES] for verb in verbs]
    print(tr("P(next word | prefix), model / grammar:"))
    print(table(rows, [tr("next word"), *PREFIXES]))
    future = torch.ones(len(labels), len(labels), dtype=torch.bool).triu(diagonal=1)
    return attention_heatmaps(
        heads.cpu(),
        labels,
        masked=future,
        highlight_row=wo,
        title=tr("A trained block's four heads on {sentence}", sentence=SENTENCE),
    )


def next_word(model, tokens, prefix: str) -> torch.Tensor:
    """The model's P(next word | prefix), on the CPU."""
    ids = tokens.encode(prefix).to(model.W_e.weight.device)
    with torch.no_grad():
        return torch.softmax(model(ids[None])[0, -1], dim=-1).cpu()


def course_model_ablation(device=None) -> None:
    """KL(grammar ‖ model) of the next word after each prefix, with all heads and with each
    head's output zeroed in turn: which heads the verb's choice needs. Then what the bird's
    verb loses without the head that finds the subject."""
    tokens, model, labels, heads, model_p, true_p = stored_model(device)
    subject_head = int(heads[:, labels.index("を"), labels.index("犬")].argmax())  # finds 犬

    def kl(p: torch.Tensor, prefix: str) -> str:
        return f"{float(kl_divergence(true_p[prefix], p)):.3f}"

    attn = model.blocks[0].attn
    rows = [[tr("all heads")] + [kl(model_p[prefix], prefix) for prefix in PREFIXES]]
    for k in range(attn.n_heads):
        with head_removed(attn, k):
            without = [kl(next_word(model, tokens, prefix), prefix) for prefix in PREFIXES]
        rows.append([tr("without head {k}", k=k), *without])
    print(tr("KL(grammar ‖ model) of the next word, nats:"))
    print(table(rows, [tr("heads"), *PREFIXES]))
    bird, flies = PREFIXES[2], tokens.ids["飛ぶ"]
    with head_removed(attn, subject_head):
        without = float(next_word(model, tokens, bird)[flies])
    print(
        tr(
            "P(飛ぶ | {prefix}): {full:.3f} with every head, {without:.3f} without head {k}",
            prefix=bird,
            full=float(model_p[bird][flies]),
            without=without,
            k=subject_head,
        )
    )
