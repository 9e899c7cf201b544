"""Checkers for notebook 06's BPE exercises: one merge step, and encoding with a list of
merges. The reference is nbhelpers.corpus.bpe, itself checked merge for merge against Hugging
Face `tokenizers` (tests/test_bpe.py and notebook 06)."""

from __future__ import annotations

from collections import Counter

from ..corpus import JapaneseGrammar
from ..corpus.bpe import learn_bpe, merge, pair_counts
from ..support.language import N_, tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)


def _corpus(texts: dict[str, int]) -> dict[tuple, int]:
    return {tuple(text): times for text, times in texts.items()}


def _reference_step(corpus: dict[tuple, int]):
    counts = pair_counts(corpus)
    best = max(counts, key=counts.get)
    return best, _merged(corpus, best)


def _merged(corpus, pair, how=merge) -> dict:
    merged = Counter()
    for symbols, times in corpus.items():  # two texts may become one: their counts add up
        merged[how(symbols, pair)] += times
    return dict(merged)


def _overwritten(corpus, pair) -> dict:
    """A dict comprehension over the merged texts: where two become the same, the last wins."""
    return {merge(symbols, pair): times for symbols, times in corpus.items()}


def _right_to_left(symbols, pair) -> tuple:
    """The merge made from the right end: in a run of three a's, a + aa instead of aa + a."""
    out, i = [], len(symbols) - 1
    while i >= 0:
        if i > 0 and (symbols[i - 1], symbols[i]) == tuple(pair):
            out.append(symbols[i - 1] + symbols[i])
            i -= 2
        else:
            out.append(symbols[i])
            i -= 1
    return tuple(out[::-1])


def _unweighted_step(corpus):
    return _reference_step(dict.fromkeys(corpus, 1))[0]


def _first_only(symbols, pair):
    for i in range(len(symbols) - 1):
        if (symbols[i], symbols[i + 1]) == pair:
            return (*symbols[:i], symbols[i] + symbols[i + 1], *symbols[i + 2 :])
    return tuple(symbols)


def _counted_as_text(corpus) -> Counter:
    """Pair counts made with str.count on each text's symbols joined by spaces: a learner's
    shortcut that misses overlapping pairs (ああああ holds three ああ, str.count finds two)."""
    counts = Counter()
    for symbols, times in corpus.items():
        text = " ".join(symbols)
        for a, b in set(zip(symbols, symbols[1:], strict=False)):
            counts[(a, b)] += times * text.count(f"{a} {b}")
    return counts


def _replaced_as_text(symbols, pair) -> tuple:
    """A merge made with str.replace on the symbols joined by spaces: it also merges where
    the text of two symbols happens to meet ("a bc" holds "a b")."""
    a, b = pair
    return tuple(" ".join(symbols).replace(f"{a} {b}", a + b).split(" "))


def _run_step(answer, corpus):
    got = answer({symbols: times for symbols, times in corpus.items()})
    if not isinstance(got, tuple) or len(got) != 2:
        return got
    pair, merged = got
    pair = tuple(pair) if isinstance(pair, (list, tuple)) else pair
    merged = {tuple(k): v for k, v in merged.items()} if isinstance(merged, dict) else merged
    return pair, merged


def _top(counts: Counter, pick=max):
    return pick(counts, key=counts.get)


def _short_counts(corpus) -> Counter:
    """Pair counts over range(len(symbols) - 2): each text's last pair missed."""
    short = Counter()
    for symbols, times in corpus.items():
        for pair in zip(symbols[:-1], symbols[1:-1], strict=False):
            short[pair] += times
    return short


def _step(corpus, pair, how=merge):
    return pair, _merged(corpus, pair, how)


# (what it is, the corpus): symbols may be longer than a character, after earlier merges
MERGE_STEP_CASES = (
    (N_("the running example and two more sentences"),
     _corpus({"犬が河岸を歩く": 3, "猫が歩く": 2, "犬が走る": 1})),
    (N_("a text that occurs many times outweighs many texts"),
     _corpus({"飛ぶ": 5, "犬が歩く": 1, "猫も歩く": 1, "馬は歩く": 1, "子供と歩く": 1})),
    # ああああ holds three ああ pairs, nine in all: ahead of いう's seven only if overlaps count
    (N_("overlapping pairs decide the top: ああああ ×3 and いう ×7"),
     _corpus({"ああああ": 3, "いう": 7, "えお": 1})),
    # (a, b) is the top pair, and "a" followed by "bc" must stay as it is
    (N_("symbols of several characters: a + b, not a + bc"),
     {("a", "b"): 5, ("c", "a", "bc"): 2, ("a", "bc"): 1}),
    (N_("a text's last pair counts too: えう ×3"), _corpus({"あいう": 2, "えう": 3})),
    (N_("an odd run: aaa becomes aa + a, left to right"), _corpus({"aaa": 4, "ab": 3})),
    # after a + b, "a b c" and "ab c" are the same text: 2 + 1 times
    (N_("two texts that become one: their counts add up"),
     {("a", "b", "c"): 2, ("a", "b"): 3, ("ab", "c"): 1}),
)  # fmt: skip

# (the hint that names the mistake, the mistaken step: corpus -> (pair, merged corpus))
MERGE_STEP_MISTAKES = (
    (N_("the last pair of each text was missed: a text of n symbols has n - 1 adjacent pairs"),
     lambda c: _step(c, _top(_short_counts(c)) if _short_counts(c) else _reference_step(c)[0])),
    (N_("each text counted once: a text that occurs k times adds its pairs k times"),
     lambda c: _step(c, _unweighted_step(c))),
    (N_("the pair was chosen but the corpus was not merged: return the merged texts"),
     lambda c: (_reference_step(c)[0], c)),
    (N_("two texts became the same after the merge and one count was lost: add the counts of "
        "texts that merge into the same symbols"),
     lambda c: (_reference_step(c)[0], _overwritten(c, _reference_step(c)[0]))),
    (N_("the run was merged from the right: merge left to right (aaa is aa + a)"),
     lambda c: _step(c, _reference_step(c)[0], _right_to_left)),
    (N_("only the first occurrence in each text was merged: merge every occurrence"),
     lambda c: _step(c, _reference_step(c)[0], _first_only)),
    (N_("the least frequent pair was taken: BPE merges the most frequent"),
     lambda c: _step(c, _top(pair_counts(c), min))),
    (N_("overlapping pairs were missed: ああああ holds three ああ pairs, where str.count finds "
        "two; count every adjacent pair of symbols"),
     lambda c: _step(c, _top(_counted_as_text(c)))),
    (N_("the merge crossed a symbol boundary: merge a pair only where its two symbols stand "
        "whole side by side, not wherever their text meets (str.replace on the joined text)"),
     lambda c: _step(c, _reference_step(c)[0], _replaced_as_text)),
)  # fmt: skip


@leaves_state_alone
def check_merge_step(fn) -> CheckResult:
    """fn(corpus) -> (pair, merged corpus): corpus maps a text's symbols (a tuple) to how many
    times the text occurs; fn counts the adjacent pairs (each text's pairs times its count),
    takes the most frequent pair, and returns it with every text's occurrences of it merged,
    left to right. In these cases no two pairs tie for the top. The reference counts every
    adjacent pair, overlapping ones too, as Hugging Face's trainer does."""
    check_function("fn", fn)
    cases = []
    for name, corpus in MERGE_STEP_CASES:
        joint = " " if any(len(symbol) > 1 for symbols in corpus for symbol in symbols) else ""
        shown = ", ".join(f"{joint.join(symbols)} ×{times}" for symbols, times in corpus.items())
        mistakes = [
            (tr(hint), lambda w=wrong, c=corpus: w(c)) for hint, wrong in MERGE_STEP_MISTAKES
        ]
        cases.append(
            Case(tr(name), shown, lambda f, corpus=corpus: _run_step(f, corpus),
                 _reference_step(corpus), mistakes=mistakes,
                 parts=(tr("the pair"), tr("the merged corpus")))
        )  # fmt: skip
    return run_cases("merge_step", fn, cases, tr("return the top pair and the merged corpus."))


def _reversed(text, merges):
    return list(_apply(text, merges[::-1]))


def _longest_match(text, merges):
    vocab = sorted({*text, *(a + b for a, b in merges)}, key=len, reverse=True)
    tokens, i = [], 0
    while i < len(text):
        token = next(t for t in vocab if text.startswith(t, i))
        tokens.append(token)
        i += len(token)
    return tokens


def _once_each(text, merges):
    symbols = tuple(text)
    for pair in merges:
        symbols = _first_only(symbols, pair)
    return list(symbols)


@leaves_state_alone
def check_bpe_encode(fn) -> CheckResult:
    """fn(text, merges) -> tokens: start from the text's characters and apply each merge of
    `merges` (a list of pairs) in order, to every occurrence, left to right. The reference
    is BPE.encode, checked against Hugging Face `tokenizers`."""
    check_function("fn", fn)
    corpus = ["".join(s) for s in JapaneseGrammar().sample(300, 0)]
    learned = learn_bpe(corpus, 40)
    merges = [m.pair for m in learned.merges]
    cases = []
    for name, text, pairs in (
        ("犬が河岸を歩く", "犬が河岸を歩く", merges),
        (tr("a sentence the corpus never had"), "今日猫が静かな池をゆっくり渡る", merges),
        (tr("merges that build on merges: ab, then abc"), "abcabcab",
         [("a", "b"), ("ab", "c"), ("c", "ab")]),
        (tr("overlapping pairs: aaaaa"), "aaaaa", [("a", "a"), ("aa", "aa")]),
        # learned first, b + c wins over the longer-looking match ab from the left
        (tr("the order of the merges decides: bc before ab"), "abc", [("b", "c"), ("a", "b")]),
        (tr("no merges"), "犬が歩く", []),
        (tr("an odd run: aaa becomes aa + a, left to right"), "aaab", [("a", "a"), ("a", "b")]),
        (tr("a text with spaces: a space is a character like any other"), "犬が 歩く 犬が",
         [("犬", "が"), ("歩", "く")]),
    ):  # fmt: skip
        expected = list(_apply(text, pairs))
        mistakes = [
            (tr("the merges were applied in the wrong order: in the order they were learned"),
             _reversed(text, pairs)),
            (tr("the longest known token was matched from the left: that is not BPE; apply the "
                "merges in order"), _longest_match(text, pairs)),
            (tr("only the first occurrence of each pair was merged: merge every occurrence"),
             _once_each(text, pairs)),
            (tr("no merge was applied: these are the characters"), list(text)),
            (tr("the run was merged from the right: merge left to right (aaa is aa + a)"),
             _encode_from_right(text, pairs)),
            (tr("the spaces were dropped: a space is a character like any other, and stays a "
                "token"), [t for t in expected if t.strip()]),
            (tr("the merge crossed a token boundary: merge a pair only where its two tokens "
                "stand whole side by side, not wherever their text meets (str.replace on the "
                "joined text)"), _replaced_encode(text, pairs)),
        ]  # fmt: skip
        inputs = tr("text {text!r}, {n} merges", text=text, n=len(pairs))
        cases.append(
            Case(
                name,
                inputs,
                lambda f, text=text, pairs=pairs: _as_list(f(text, list(pairs))),
                expected,
                mistakes=mistakes,
            )  # fmt: skip
        )
    return run_cases(
        "bpe_encode",
        fn,
        cases,
        tr("return the tokens after applying the merges."),
    )


def _encode_from_right(text, pairs):
    symbols = tuple(text)
    for pair in pairs:
        symbols = _right_to_left(symbols, pair)
    return list(symbols)


def _replaced_encode(text, pairs):
    symbols = tuple(text)
    for pair in pairs:
        symbols = _replaced_as_text(symbols, pair)
    return list(symbols)


def _apply(text, pairs):
    symbols = tuple(text)
    for pair in pairs:
        symbols = merge(symbols, pair)
    return symbols


def _as_list(tokens):
    return list(tokens) if isinstance(tokens, (list, tuple)) else tokens


__all__ = ["check_bpe_encode", "check_merge_step"]
