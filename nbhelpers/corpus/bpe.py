"""Byte-pair encoding (BPE): where GPT-1's token ids come from (notebook 06).

Learning (Sennrich et al. 2016; GPT-1 learned 40,000 merges this way):

    start from the characters of every text
    repeat n_merges times:
        count every adjacent pair of symbols in the corpus      (pair_counts)
        merge the most frequent pair into one new symbol        (merge)

Among pairs with the same count, the one whose symbols came first in the vocabulary wins (the
alphabet in code-point order, then the merges in the order they were made): the rule
Hugging Face `tokenizers` applies, so the two agree merge for merge.

Encoding applies the merges to a new text in the order they were learned; decoding joins the
tokens. With `unit="byte"` the symbols start as the UTF-8 bytes of the text (GPT-2's
byte-level BPE): a kanji is 3 bytes, so merges must first rebuild it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..support.language import tr
from ..support.validation import is_int

UNITS = ("char", "byte")


def symbols_of(text: str, unit: str = "char") -> tuple:
    """The text's symbols before any merge: characters, or bytes (each a 1-byte `bytes`)."""
    if not isinstance(text, str):
        raise TypeError(
            tr(
                "text must be a str, got {got_type}",
                got_type=type(text).__name__,
            )
        )
    if unit == "char":
        return tuple(text)
    if unit == "byte":
        return tuple(bytes([b]) for b in text.encode("utf-8"))
    raise ValueError(
        tr(
            "unit must be one of {UNITS}, got {unit!r}",
            UNITS=UNITS,
            unit=unit,
        )
    )


def pair_counts(corpus: dict[tuple, int]) -> Counter:
    """How often each adjacent pair of symbols occurs: corpus maps a text's symbols to how
    many times the text occurs."""
    counts = Counter()
    for symbols, times in corpus.items():
        for pair in zip(symbols, symbols[1:], strict=False):
            counts[pair] += times
    return counts


def merge(symbols: Sequence, pair: tuple) -> tuple:
    """The symbols with every occurrence of `pair`, read left to right, made one symbol."""
    merged, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == tuple(pair):
            merged.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            merged.append(symbols[i])
            i += 1
    return tuple(merged)


@dataclass(frozen=True)
class Merge:
    """One learned merge: the pair, how often it occurred when chosen, and how many pairs had
    that same top count (1: no tie)."""

    pair: tuple
    count: int
    tied: int = 1

    @property
    def token(self):
        return self.pair[0] + self.pair[1]


@dataclass
class BPE:
    """A learned BPE: the alphabet (its symbols in vocabulary order) and the merges in the
    order they were made. `vocab()` is alphabet + merged tokens: GPT-1's 40,478 entries were
    its alphabet and 40,000 merges."""

    unit: str
    alphabet: list
    merges: list[Merge] = field(default_factory=list)

    def vocab(self, n_merges: int | None = None) -> list:
        return [*self.alphabet, *(m.token for m in self.merges[: self._count(n_merges)])]

    def _count(self, n_merges: int | None) -> int:
        if n_merges is None:
            return len(self.merges)
        if not is_int(n_merges) or not 0 <= n_merges <= len(self.merges):
            raise ValueError(
                tr(
                    "n_merges must be an int from 0 to {merges}, got {n_merges!r}",
                    merges=len(self.merges),
                    n_merges=n_merges,
                )
            )
        return int(n_merges)

    def encode(self, text: str, n_merges: int | None = None) -> list:
        """The tokens of `text`: its symbols, then the first n_merges merges (all when None)
        applied in the order they were learned."""
        symbols = symbols_of(text, self.unit)
        unknown = sorted({s for s in symbols if s not in self._known})
        if unknown:
            raise ValueError(
                tr(
                    "text holds symbols the corpus never had: {unknown}",
                    unknown=unknown,
                )
            )
        for m in self.merges[: self._count(n_merges)]:
            symbols = merge(symbols, m.pair)
        return list(symbols)

    def ids(self, text: str, n_merges: int | None = None) -> list[int]:
        """The token ids of `text`: each token's row in vocab(n_merges)."""
        index = {token: i for i, token in enumerate(self.vocab(n_merges))}
        return [index[t] for t in self.encode(text, n_merges)]

    def decode(self, tokens: Iterable) -> str:
        tokens = list(tokens)
        if self.unit == "byte":
            return b"".join(tokens).decode("utf-8")
        return "".join(tokens)

    @property
    def _known(self) -> set:
        return set(self.alphabet)


def learn_bpe(texts: Iterable[str], n_merges: int, unit: str = "char") -> BPE:
    """Learn n_merges merges from `texts` (fewer if every text becomes one symbol first)."""
    if not is_int(n_merges) or n_merges < 0:
        raise ValueError(
            tr(
                "n_merges must be an int >= 0, got {n_merges!r}",
                n_merges=n_merges,
            )
        )
    corpus = Counter(symbols_of(text, unit) for text in texts)
    if not corpus:
        raise ValueError(
            tr(
                "texts must hold at least one text",
            )
        )
    alphabet = sorted({s for symbols in corpus for s in symbols})
    rank = {symbol: i for i, symbol in enumerate(alphabet)}
    bpe = BPE(unit, alphabet)
    for _ in range(n_merges):
        counts = pair_counts(corpus)
        if not counts:
            break
        top = max(counts.values())
        tied = [pair for pair, count in counts.items() if count == top]
        best = min(tied, key=lambda pair: (rank[pair[0]], rank[pair[1]]))
        bpe.merges.append(Merge(best, top, len(tied)))
        rank[best[0] + best[1]] = len(rank)
        corpus = Counter({merge(symbols, best): times for symbols, times in corpus.items()})
    return bpe


def merges_until_single(bpe: BPE, word: str) -> int | None:
    """The fewest merges after which `word` is encoded as one token (None if never)."""
    for k in range(len(bpe.merges) + 1):
        if len(bpe.encode(word, k)) == 1:
            return k
    return None
