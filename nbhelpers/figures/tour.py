"""Notebook 00's first look at where the course is going: the stored model's four heads on
犬 が 河岸 を 歩く, and its next-word probabilities beside the grammar's exact ones."""

from __future__ import annotations

import torch
from matplotlib.figure import Figure

from ..corpus import JapaneseGrammar
from ..corpus.grammar import ADVERBS
from ..experiments.course_model import load_course_model
from ..multihead import head_removed
from ..support.language import tr
from ..support.tables import table
from .heatmap import attention_heatmaps

SENTENCE = "犬 が 河岸 を 歩く"
# The verb after を depends on the subject and on the place: change one, then the other.
PREFIXES = ("犬 が 河岸 を", "犬 が 川 を", "鳥 が 河岸 を")
# After each beginning, a verb that needs both its subject and its place.
TELLING = tuple(zip(PREFIXES, ("歩く", "泳ぐ", "飛ぶ"), strict=True))


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
    """Print the model's next-word probabilities after three prefixes beside the grammar's;
    return the figure of its heads, each titled with its two largest weights from を."""
    tokens, model, labels, heads, model_p, true_p = stored_model(device)
    wo = labels.index("を")
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
    titles = []  # each head's two largest weights from を, measured
    for k, row in enumerate(heads[:, wo]):
        (a, b), (i, j) = row.topk(2)
        titles.append(
            tr(
                "head {k}: {first} {a:.2f}, {second} {b:.2f}",
                k=k,
                first=labels[i],
                a=float(a),
                second=labels[j],
                b=float(b),
            )  # fmt: skip
        )
    return attention_heatmaps(
        heads.cpu(),
        labels,
        masked=future,
        highlight_row=wo,
        titles=titles,
        title=tr("A trained block's four heads on {sentence}", sentence=SENTENCE),
    )


def next_word(model, tokens, prefix: str) -> torch.Tensor:
    """The model's P(next word | prefix), on the CPU."""
    ids = tokens.encode(prefix).to(model.W_e.weight.device)
    with torch.no_grad():
        return torch.softmax(model(ids[None])[0, -1], dim=-1).cpu()


def course_model_ablation(device=None) -> None:
    """P(verb | beginning) after three beginnings: the grammar's, the stored model's, and the
    model's with each head's output zeroed in turn: which heads the verb needs."""
    tokens, model, _, _, model_p, true_p = stored_model(device)
    attn = model.blocks[0].attn

    def row(name, distributions):
        return [name, *(f"{float(distributions[p][tokens.ids[v]]):.3f}" for p, v in TELLING)]

    rows = [row(tr("grammar"), true_p), row(tr("all heads"), model_p)]
    for k in range(attn.n_heads):
        with head_removed(attn, k):
            without = {p: next_word(model, tokens, p) for p, _ in TELLING}
        rows.append(row(tr("without head {k}", k=k), without))
    print(table(rows, ["", *(f"P({v} | {p})" for p, v in TELLING)]))
