"""Tokens and ids for the grammar of notebook 08: <PAD>, <SOS>, <EOS>, then the words."""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch

from ..support.language import tr
from ..support.validation import is_int

PAD, SOS, EOS = "<PAD>", "<SOS>", "<EOS>"
SPECIALS = (PAD, SOS, EOS)

# Word classes with their probabilities. An optional slot's "nothing" gets 1 - sum(probs).


class Tokenizer:
    """Tokens <-> ids. Ids 0, 1, 2 are <PAD>, <SOS> (start of sentence), <EOS> (end).

    Text is split on whitespace; a chunk that is not a token is segmented by longest match, so
    "犬が河岸を" and "犬 が 河岸 を" give the same tokens. An unknown piece raises ValueError.

    Notebook 08.
    """

    def __init__(self, words: Sequence[str]):
        words = [str(w) for w in words]
        if len(set(words)) != len(words) or set(words) & set(SPECIALS):
            raise ValueError(
                tr(
                    "words must be distinct and must not contain <PAD>, <SOS>, <EOS>",
                )
            )
        self.tokens: list[str] = [*SPECIALS, *words]
        self.ids: dict[str, int] = {t: i for i, t in enumerate(self.tokens)}
        self.pad_id, self.sos_id, self.eos_id = (self.ids[t] for t in SPECIALS)
        self._longest_first = sorted(self.tokens, key=len, reverse=True)

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"Tokenizer({len(self)} tokens)"

    def tokenize(self, text) -> list[str]:
        """A list of tokens from a string (spaces optional) or a sequence of tokens."""
        if isinstance(text, str):
            pieces = []
            for chunk in text.split():
                pieces.extend(self._segment(chunk))
            return pieces
        if isinstance(text, Sequence) and all(isinstance(t, str) for t in text):
            for t in text:
                if t not in self.ids:
                    raise ValueError(
                        tr(
                            "text: unknown token {t!r}; {known}",
                            t=t,
                            known=self._known(),
                        )
                    )
            return list(text)
        raise TypeError(
            tr(
                "text must be a str or a sequence of str, got {got_type}",
                got_type=type(text).__name__,
            )
        )

    def _segment(self, chunk: str) -> list[str]:
        if chunk in self.ids:
            return [chunk]
        pieces, start = [], 0
        while start < len(chunk):
            match = next((t for t in self._longest_first if chunk.startswith(t, start)), None)
            if match is None:
                rest = re.split(r"\s", chunk[start:])[0]
                raise ValueError(
                    tr(
                        "text: unknown token {rest!r} in {chunk!r}; {known}",
                        rest=rest,
                        chunk=chunk,
                        known=self._known(),
                    )
                )
            pieces.append(match)
            start += len(match)
        return pieces

    def _known(self) -> str:
        return tr("the vocabulary is {tokens}", tokens=" ".join(self.tokens))

    def encode(self, text, *, sos: bool = True, eos: bool = False) -> torch.Tensor:
        """Token ids (int64, 1-D) of `text`, with <SOS> first (unless already there) when `sos`,
        and <EOS> last when `eos`."""
        tokens = self.tokenize(text)
        if sos and (not tokens or tokens[0] != SOS):
            tokens = [SOS, *tokens]
        if eos:
            tokens = [*tokens, EOS]
        return torch.tensor([self.ids[t] for t in tokens], dtype=torch.long)

    def decode(self, ids, *, skip_special: bool = False) -> list[str]:
        """The tokens of a 1-D sequence of ids (a tensor or a list of ints)."""
        values = torch.as_tensor(ids).reshape(-1).tolist() if not isinstance(ids, list) else ids
        for i in values:
            if not is_int(i) or not 0 <= i < len(self):
                raise ValueError(
                    tr(
                        "ids must be ints in [0, {vocab_size}), got {i!r}",
                        vocab_size=len(self),
                        i=i,
                    )
                )
        tokens = [self.tokens[i] for i in values]
        return [t for t in tokens if t not in SPECIALS] if skip_special else tokens

    def until_eos(self, ids) -> list[int]:
        """The ids up to and including the first <EOS> (all of them if there is none): a
        generated sentence without what a batch appends after its end."""
        values = torch.as_tensor(ids).reshape(-1).tolist()
        return values[: values.index(self.eos_id) + 1] if self.eos_id in values else values

    def to_text(self, ids, *, sep: str = "") -> str:
        """Readable text: the words up to the first <EOS>, joined with `sep`."""
        tokens = self.decode(ids)
        if EOS in tokens:
            tokens = tokens[: tokens.index(EOS)]
        return sep.join(t for t in tokens if t not in SPECIALS)

    def pad(self, sequences: Sequence[Sequence[int]], length: int | None = None) -> torch.Tensor:
        """A (B, length) batch of id sequences, padded on the right with <PAD>."""
        longest = max((len(s) for s in sequences), default=0)
        length = longest if length is None else length
        if length < longest:
            raise ValueError(
                tr(
                    "length={length} is shorter than the longest sequence ({longest})",
                    length=length,
                    longest=longest,
                )
            )
        batch = torch.full((len(sequences), length), self.pad_id, dtype=torch.long)
        for row, sequence in enumerate(sequences):
            batch[row, : len(sequence)] = torch.as_tensor(list(sequence), dtype=torch.long)
        return batch
