"""A small probabilistic grammar of Japanese sentences (notebook 08).

The small GPT of notebook 08 trains on sentences such as

    犬 が 河岸 を 歩く
    毎朝 小さな 子供 が 静かな 川 を ゆっくり 泳ぐ ので 鳥 が 空 を 飛ぶ

generated here, so nothing is downloaded. Every sentence is one clause, or two joined by a
conjunction (とき / ので / から):

    [time]  [adjective] SUBJECT が [adjective] PLACE を [adverb] VERB  [conjunction clause]

The を after the place marks a path of motion, as in 川を渡る, 道を歩く, 空を飛ぶ: the place
moved along or through, not an object acted upon. Four dependencies make the language worth
a transformer:

* the verb depends on the subject *and* on the kind of place (land, water, sky): 鳥 が 空 を
  is followed by 飛ぶ, 魚 が 川 を by 泳ぐ or 進む. The verb comes 4 to 6 tokens after the
  subject, across が, the place and を, so the position that predicts it (the token just
  before the verb) must look 3 to 5 tokens back: predicting the verb needs attention;
* the place depends on the subject (a child walks in the park and swims in or crosses the
  river, never the sea; a fish stays in the water);
* a colour adjective (白い, 黒い) describes an animal's fur or feathers, so after one the
  subject is an animal, never 子供 (the other subjects' probabilities renormalised);
* the second clause's subject differs from the first one's (up to 9 tokens back), and a
  second clause never takes another conjunction, so after its verb the sentence ends.

The grammar is unambiguous: each token says which rule produced it (`RULES`), so a prefix
determines the generator's state. Hence the true next-token distribution of any prefix is
known exactly (the state's transition probabilities), and so is the entropy of the
language, by dynamic programming over the finitely many states; nothing is estimated by
sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np
import torch

from ..support.language import tr
from ..support.validation import check_positive_int, check_token_ids, is_int
from .tokenizer import EOS, Tokenizer

TIMES = {"今日": 0.1, "毎朝": 0.1, "夕方": 0.1}
SUBJECT_ADJECTIVES = {"小さな": 0.15, "大きな": 0.15, "白い": 0.1, "黒い": 0.1}
SUBJECTS = {"犬": 0.25, "猫": 0.15, "鳥": 0.2, "魚": 0.15, "馬": 0.1, "子供": 0.15}
COLOURS = ("白い", "黒い")  # subject adjectives that describe fur or feathers
ANIMALS = ("犬", "猫", "鳥", "魚", "馬")  # the subjects a colour adjective can describe
PLACE_ADJECTIVES = {"広い": 0.15, "静かな": 0.15}
ADVERBS = {"ゆっくり": 0.1, "速く": 0.1, "静かに": 0.1}
CONJUNCTIONS = {"とき": 0.12, "ので": 0.12, "から": 0.11}

PLACE_KIND = {
    "河岸": "land",
    "公園": "land",
    "道": "land",
    "野原": "land",
    "森": "land",
    "川": "water",
    "池": "water",
    "海": "water",
    "空": "sky",
}
PLACES = {  # where each subject goes
    "犬": {"河岸": 0.25, "公園": 0.25, "道": 0.15, "野原": 0.15, "森": 0.1, "川": 0.1},
    "猫": {"河岸": 0.3, "公園": 0.3, "道": 0.2, "森": 0.2},
    "鳥": {"空": 0.5, "森": 0.2, "河岸": 0.1, "川": 0.1, "海": 0.1},
    "魚": {"川": 0.4, "池": 0.3, "海": 0.3},
    "馬": {"河岸": 0.3, "道": 0.3, "野原": 0.3, "川": 0.1},
    # A child swims in or crosses a river; crossing the sea (or a pond) is not what children do.
    "子供": {"公園": 0.3, "道": 0.25, "河岸": 0.25, "川": 0.2},
}
VERBS = {  # (subject, kind of place) -> verb probabilities
    ("犬", "land"): {"歩く": 0.5, "走る": 0.5},
    ("犬", "water"): {"泳ぐ": 0.6, "渡る": 0.4},
    ("猫", "land"): {"歩く": 0.7, "走る": 0.3},
    ("鳥", "sky"): {"飛ぶ": 1.0},
    ("鳥", "land"): {"飛ぶ": 0.6, "歩く": 0.4},
    ("鳥", "water"): {"飛ぶ": 0.5, "渡る": 0.5},
    ("魚", "water"): {"泳ぐ": 0.8, "進む": 0.2},
    ("馬", "land"): {"走る": 0.6, "歩く": 0.3, "進む": 0.1},
    ("馬", "water"): {"渡る": 1.0},
    ("子供", "land"): {"歩く": 0.4, "走る": 0.6},
    ("子供", "water"): {"泳ぐ": 0.7, "渡る": 0.3},
}
WORD_CLASSES = (
    TIMES,
    SUBJECT_ADJECTIVES,
    SUBJECTS,
    {"が": 1.0},
    PLACE_ADJECTIVES,
    PLACE_KIND,
    {"を": 1.0},
    ADVERBS,
    {v: 1.0 for verbs in VERBS.values() for v in verbs},
    CONJUNCTIONS,
)
# The rule that produces each token: one per word class above, then <EOS>.
RULES = (
    "time word",
    "subject adjective",
    "subject",
    "が",
    "place adjective",
    "place",
    "を",
    "adverb",
    "verb",
    "conjunction",
    "end",
)

MAX_NGRAM_ORDER = 4


def _optional(options: dict[str, float]) -> float:
    """The probability that an optional slot stays empty."""
    return 1.0 - sum(options.values())


class JapaneseGrammar:
    """A probabilistic grammar of short Japanese sentences with exact distributions.

    `conjunction_probability` scales the chance (0.35 by default) that a first clause is
    followed by a conjunction and a second clause; 0 gives one-clause sentences only.

    States are tuples; `_transitions(state)` lists (token, probability, next state). The
    states reachable from the start are compiled into two tables, `probs` (states x vocab)
    and `next_state` (states x vocab), used for exact distributions and fast sampling.

    Notebook 08.
    """

    def __init__(self, conjunction_probability: float = 0.35):
        if not 0.0 <= conjunction_probability <= 1.0:
            raise ValueError(
                tr(
                    "conjunction_probability must be in [0, 1], got {conjunction_probability!r}",
                    conjunction_probability=conjunction_probability,
                )
            )
        total = sum(CONJUNCTIONS.values())
        self.conjunctions = {
            c: p * conjunction_probability / total for c, p in CONJUNCTIONS.items()
        }
        words = list(dict.fromkeys(w for word_class in WORD_CLASSES for w in word_class))
        self.tokenizer = Tokenizer(words)
        # rule_of_token[id]: the index in RULES of the rule that produces the token (-1 for
        # <PAD> and <SOS>, which no rule produces). Each word is in one class only.
        self.rule_of_token = np.full(self.tokenizer.vocab_size, -1, dtype=np.int64)
        for rule, word_class in enumerate(WORD_CLASSES):
            for word in word_class:
                self.rule_of_token[self.tokenizer.ids[word]] = rule
        self.rule_of_token[self.tokenizer.eos_id] = RULES.index("end")
        self._compile()

    def __repr__(self) -> str:
        return (
            f"JapaneseGrammar(vocab_size={self.tokenizer.vocab_size}, n_states={len(self.states)})"
        )

    # --- the rules ------------------------------------------------------------------------

    START, DONE = ("start",), ("done",)

    def _transitions(self, state: tuple) -> list[tuple[str, float, tuple]]:
        kind = state[0]
        if kind == "start":  # an optional time word, then the first clause
            rest = _optional(TIMES)
            clause = [(t, p * rest, s) for t, p, s in self._transitions(("clause", 1, None))]
            return [(t, p, ("clause", 1, None)) for t, p in TIMES.items()] + clause
        if kind == "clause":  # [adjective] subject; a second clause needs a new subject
            _, clause, first = state
            rest = _optional(SUBJECT_ADJECTIVES)
            bare = ("noun", clause, first, False)
            subjects = [(t, p * rest, s) for t, p, s in self._transitions(bare)]
            adjectives = [
                (a, p, ("noun", clause, first, a in COLOURS)) for a, p in SUBJECT_ADJECTIVES.items()
            ]
            return adjectives + subjects
        if kind == "noun":  # after a colour adjective, an animal only
            _, clause, first, coloured = state
            allowed = {
                s: p for s, p in SUBJECTS.items() if s != first and (s in ANIMALS or not coloured)
            }
            total = sum(allowed.values())
            return [(s, p / total, ("ga", clause, s)) for s, p in allowed.items()]
        if kind == "ga":
            return [("が", 1.0, ("place", *state[1:]))]
        if kind == "place":  # [adjective] place
            rest = _optional(PLACE_ADJECTIVES)
            places = [(t, p * rest, s) for t, p, s in self._transitions(("place_noun", *state[1:]))]
            return [
                (a, p, ("place_noun", *state[1:])) for a, p in PLACE_ADJECTIVES.items()
            ] + places
        if kind == "place_noun":
            _, clause, subject = state
            return [
                (place, p, ("wo", clause, subject, PLACE_KIND[place]))
                for place, p in PLACES[subject].items()
            ]
        if kind == "wo":
            return [("を", 1.0, ("verb", *state[1:]))]
        if kind == "verb":  # [adverb] verb
            rest = _optional(ADVERBS)
            verbs = [(t, p * rest, s) for t, p, s in self._transitions(("verb_only", *state[1:]))]
            return [(a, p, ("verb_only", *state[1:])) for a, p in ADVERBS.items()] + verbs
        if kind == "verb_only":
            _, clause, subject, place_kind = state
            first = subject if clause == 1 else None
            return [(v, p, ("end", clause, first)) for v, p in VERBS[(subject, place_kind)].items()]
        if kind == "end":
            _, clause, first = state
            if clause == 2 or not self.conjunctions:
                return [(EOS, 1.0, self.DONE)]
            rest = _optional(self.conjunctions)
            chained = [(c, p, ("clause", 2, first)) for c, p in self.conjunctions.items() if p > 0]
            return [(EOS, rest, self.DONE), *chained]
        raise AssertionError(f"unknown state {state!r}")

    def _compile(self) -> None:
        index = {self.START: 0}
        states, table = [self.START], []
        while len(table) < len(states):  # breadth-first over the reachable states
            state = states[len(table)]
            row = {}
            if state != self.DONE:
                for token, p, after in self._transitions(state):
                    if after not in index:
                        index[after] = len(states)
                        states.append(after)
                    token_id = self.tokenizer.ids[token]
                    assert token_id not in row, f"{token!r} twice from {state!r}: ambiguous"
                    row[token_id] = (p, index[after])
            table.append(row)
        vocab = self.tokenizer.vocab_size
        self.states = states
        self.probs = np.zeros((len(states), vocab))
        self.next_state = np.full((len(states), vocab), -1, dtype=np.int64)
        for s, row in enumerate(table):
            for token_id, (p, after) in row.items():
                self.probs[s, token_id] += p
                self.next_state[s, token_id] = after
        live = self.probs[np.arange(len(states)) != index[self.DONE]]
        assert np.allclose(live.sum(axis=1), 1.0), "every state's probabilities sum to 1"
        self._done = index[self.DONE]
        self._order = self._reverse_topological_order()

    def _reverse_topological_order(self) -> list[int]:
        """States after all their successors (the grammar has no loops)."""
        order, seen = [], set()

        def visit(s: int) -> None:
            seen.add(s)
            for t in self.next_state[s][self.next_state[s] >= 0]:
                if int(t) not in seen:
                    visit(int(t))
            order.append(s)

        visit(0)
        return order

    # --- exact quantities -----------------------------------------------------------------

    def state_of(self, prefix) -> int:
        """The state reached after `prefix`; ValueError if the grammar cannot produce it."""
        ids = self._prefix_ids(prefix)
        state = 0
        for position, token_id in enumerate(ids):
            if state == self._done:
                raise ValueError(
                    tr(
                        "prefix continues after <EOS> at position {position}: nothing follows "
                        "<EOS>",
                        position=position,
                    )
                )
            after = int(self.next_state[state, token_id])
            if after < 0:
                seen = " ".join(self.tokenizer.tokens[i] for i in ids[:position]) or "(start)"
                raise ValueError(
                    tr(
                        "prefix cannot be produced by the grammar: {value!r} cannot follow "
                        "{seen!r} (position {position})",
                        value=self.tokenizer.tokens[token_id],
                        seen=seen,
                        position=position,
                    )
                )
            state = after
        return state

    def _prefix_ids(self, prefix) -> list[int]:
        if isinstance(prefix, torch.Tensor):
            if prefix.dim() != 1 or prefix.is_floating_point():
                raise ValueError(
                    tr(
                        "prefix must be a 1-D tensor of token ids, got {dtype} of shape "
                        "{prefix_shape}",
                        dtype=prefix.dtype,
                        prefix_shape=tuple(prefix.shape),
                    )
                )
            ids = prefix.tolist()
        elif isinstance(prefix, str) or (
            isinstance(prefix, Sequence) and all(isinstance(t, str) for t in prefix)
        ):
            ids = [self.tokenizer.ids[t] for t in self.tokenizer.tokenize(prefix)]
        elif isinstance(prefix, Sequence):
            ids = list(prefix)
        else:
            raise TypeError(
                tr(
                    "prefix must be text, a sequence of tokens or ids, or a tensor, got {got_type}",
                    got_type=type(prefix).__name__,
                )
            )
        for i in ids:
            if not is_int(i) or not 0 <= i < len(self.tokenizer):
                raise ValueError(
                    tr(
                        "prefix ids must be ints in [0, {vocab_size}), got {i!r}",
                        vocab_size=len(self.tokenizer),
                        i=i,
                    )
                )
        if ids and ids[0] == self.tokenizer.sos_id:
            ids = ids[1:]
        if self.tokenizer.sos_id in ids or self.tokenizer.pad_id in ids:
            raise ValueError(
                tr(
                    "prefix may hold <SOS> only at the start, and no <PAD>",
                )
            )
        return ids

    def true_next_token_distribution(self, prefix) -> torch.Tensor:
        """P(next token | prefix) over the whole vocabulary, exactly (float64, sums to 1).

        `prefix` is text ("犬 が 河岸 を" or "犬が河岸を"), a list of tokens or of ids, or a 1-D
        tensor of ids; a leading <SOS> is optional. The empty prefix gives the first word."""
        state = self.state_of(prefix)
        if state == self._done:
            raise ValueError(
                tr(
                    "prefix ends with <EOS>: the sentence is over, nothing comes next",
                )
            )
        return torch.from_numpy(self.probs[state].copy())

    def check_batch(self, ids) -> torch.Tensor:
        """A (B, n) batch of this grammar's token ids, n >= 2, as a tensor."""
        ids = torch.as_tensor(ids)
        if ids.dim() != 2 or ids.shape[1] < 2:
            raise ValueError(
                tr(
                    "ids must be a (B, n) batch with n >= 2, got {ids_shape}",
                    ids_shape=tuple(ids.shape),
                )
            )
        check_token_ids(ids, self.tokenizer.vocab_size)  # a negative id would index silently
        return ids

    def true_distributions(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """For a padded batch (B, n) of <SOS> ... <EOS> <PAD>... sentences: the exact
        distribution of the token after every prefix ids[:, :i+1], (B, n-1, vocab) float64,
        and a (B, n-1) bool mask of the predicted positions (those whose target is not <PAD>)."""
        ids = self.check_batch(ids)
        rows = ids.tolist()
        B, n = ids.shape
        states = np.full((B, n - 1), self._done, dtype=np.int64)
        for b, row in enumerate(rows):
            if row[0] != self.tokenizer.sos_id:
                raise ValueError(
                    tr(
                        "ids row {b} must start with <SOS>",
                        b=b,
                    )
                )
            state = 0
            for i in range(n - 1):
                states[b, i] = state
                if row[i + 1] == self.tokenizer.pad_id or state == self._done:
                    states[b, i] = self._done
                    continue
                after = int(self.next_state[state, row[i + 1]])
                if after < 0:
                    raise ValueError(
                        tr(
                            "ids row {b} is not a sentence of the grammar: {value!r}",
                            b=b,
                            value=self.tokenizer.to_text(row, sep=" "),
                        )
                    )
                state = after
        mask = torch.from_numpy(states != self._done)
        return torch.from_numpy(self.probs[states]), mask

    def next_token_rules(self, ids: torch.Tensor) -> torch.Tensor:
        """For a padded batch (B, n) of sentences, as for `true_distributions`: which rule of
        `RULES` produced the token after every prefix ids[:, :i+1], as (B, n-1) int64 indices
        into RULES, and -1 where nothing is predicted (the target is <PAD>).

        The grammar is unambiguous, so the token itself names its rule: 歩く is always a
        verb, <EOS> always the end. Notebook 08 groups the model's KL by these rules."""
        ids = self.check_batch(ids)
        if bool((ids[:, 0] != self.tokenizer.sos_id).any()):
            raise ValueError(
                tr(
                    "every ids row must start with <SOS>",
                )
            )
        rules = torch.from_numpy(self.rule_of_token)[ids[:, 1:]]
        if bool((rules[ids[:, 1:] != self.tokenizer.pad_id] < 0).any()):
            raise ValueError(
                tr(
                    "ids may hold <SOS> only at the start of a row",
                )
            )
        return rules

    def sentence_probability(self, tokens) -> float:
        """P(sentence) = product of the transition probabilities (0 if not a sentence)."""
        try:
            ids = self._prefix_ids(tokens)
        except ValueError:
            return 0.0
        if not ids or ids[-1] != self.tokenizer.eos_id:
            ids = [*ids, self.tokenizer.eos_id]
        state, p = 0, 1.0
        for token_id in ids:
            if state == self._done or self.next_state[state, token_id] < 0:
                return 0.0
            p *= self.probs[state, token_id]
            state = int(self.next_state[state, token_id])
        return p

    @cached_property
    def _expectations(self) -> tuple[float, float, int]:
        """Dynamic programming from the end: for each state, the expected entropy of the rest
        of the sentence, the expected number of tokens still to predict, and the most."""
        entropy = np.zeros(len(self.states))
        length = np.zeros(len(self.states))
        longest = np.zeros(len(self.states), dtype=np.int64)
        for s in self._order:
            if s == self._done:
                continue
            allowed = np.flatnonzero(self.next_state[s] >= 0)
            p, after = self.probs[s, allowed], self.next_state[s, allowed]
            entropy[s] = -np.sum(p * np.log(p)) + np.sum(p * entropy[after])
            length[s] = 1.0 + np.sum(p * length[after])
            longest[s] = 1 + longest[after].max()
        return float(entropy[0]), float(length[0]), int(longest[0])

    def sentence_count(self) -> int:
        """How many different sentences the grammar produces (paths from the start to <EOS>)."""
        count = {self._done: 1}
        for s in self._order:
            if s != self._done:
                count[s] = sum(count[int(t)] for t in self.next_state[s][self.next_state[s] >= 0])
        return count[0]

    def most_likely_sentence(self) -> tuple[list[str], float]:
        """The sentence with the largest probability, found exactly: dynamic programming from
        the end, each state keeping its likeliest way to <EOS>. Returns its tokens (ending in
        <EOS>) and its probability."""
        best = {self._done: (1.0, [])}
        for s in self._order:
            if s != self._done:
                allowed = np.flatnonzero(self.next_state[s] >= 0)
                best[s] = max(
                    (self.probs[s, t] * best[int(self.next_state[s, t])][0],
                     [int(t), *best[int(self.next_state[s, t])][1]]) for t in allowed
                )  # fmt: skip
        p, ids = best[0]
        return [self.tokenizer.tokens[i] for i in ids], float(p)

    def sentence_entropy(self) -> float:
        """H(sentence) = -Σ P(s) log P(s) over all sentences, in nats."""
        return self._expectations[0]

    def expected_predicted_tokens(self) -> float:
        """E[number of tokens a model predicts per sentence]: the words plus <EOS>."""
        return self._expectations[1]

    def entropy_rate(self) -> float:
        """Nats per predicted token: H(sentence) / E[predicted tokens].

        This is the floor of the mean cross-entropy per token (pooled over a large sample of
        sentences) that any model can reach: the true model reaches it, no model goes below."""
        return self.sentence_entropy() / self.expected_predicted_tokens()

    def _visits(self, order: int) -> dict[int, dict[tuple[int, ...], float]]:
        """Forward dynamic programming over (state, the last `order` tokens): the expected
        number of times each pair is reached from the start to <EOS>, as
        {state: {context: mass}}."""
        start_context = (self.tokenizer.sos_id,)[-order:] if order else ()
        mass: dict[int, dict[tuple[int, ...], float]] = {0: {start_context: 1.0}}
        for s in reversed(self._order):  # every state after all the states that lead to it
            if s == self._done:
                continue
            allowed = np.flatnonzero(self.next_state[s] >= 0)
            for context, m in mass.get(s, {}).items():
                for token_id in allowed:
                    following = (*context, int(token_id))[-order:] if order else ()
                    reached = mass.setdefault(int(self.next_state[s, token_id]), {})
                    reached[following] = reached.get(following, 0.0) + m * self.probs[s, token_id]
        return mass

    def ngram_model(self, order: int) -> dict[tuple[int, ...], np.ndarray]:
        """The best model that sees only the last `order` tokens (0: a unigram model, 1: a
        bigram, 2: a trigram), computed exactly: P(next | context) is the expected count of
        the context followed by each token over the expected count of the context, what
        counting an unlimited sample of sentences converges to. Keys are contexts of ids.

        Notebook 08.
        """
        if not is_int(order) or not 0 <= order <= MAX_NGRAM_ORDER:
            raise ValueError(
                tr(
                    "order must be an int from 0 to {MAX_NGRAM_ORDER}, got {order!r} "
                    "(longer contexts multiply the pairs of state and context to track)",
                    MAX_NGRAM_ORDER=MAX_NGRAM_ORDER,
                    order=order,
                )
            )
        counts: dict[tuple[int, ...], np.ndarray] = {}
        for state, contexts in self._visits(order).items():
            if state == self._done:
                continue
            for context, m in contexts.items():
                row = counts.setdefault(context, np.zeros(self.tokenizer.vocab_size))
                row += m * self.probs[state]
        return {context: row / row.sum() for context, row in counts.items()}

    def ngram_kl(self, order: int) -> float:
        """The exact mean KL(true ‖ n-gram model) per predicted token, in nats: how far the
        best model that sees only the last `order` tokens stays from the truth, on the same
        scale as a trained model's mean KL (notebook 08)."""
        model = self.ngram_model(order)
        total = 0.0
        for state, contexts in self._visits(order).items():
            if state == self._done:
                continue
            p = self.probs[state]
            support = p > 0
            for context, m in contexts.items():
                q = model[context][support]
                total += m * float(np.sum(p[support] * np.log(p[support] / q)))
        return total / self.expected_predicted_tokens()

    @property
    def max_length(self) -> int:
        """The most ids a sentence takes, <SOS> and <EOS> included."""
        return self._expectations[2] + 1

    # --- sampling -------------------------------------------------------------------------

    def sample_ids(self, n: int, seed: int | np.random.Generator = 0) -> torch.Tensor:
        """n sentences as a (n, max_length) batch of ids: <SOS> words <EOS> <PAD>..."""
        check_positive_int("n", n)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        out = np.full((n, self.max_length), self.tokenizer.pad_id, dtype=np.int64)
        out[:, 0] = self.tokenizer.sos_id
        state = np.zeros(n, dtype=np.int64)
        for i in range(1, self.max_length):
            live = state != self._done
            if not live.any():
                break
            cdf = np.cumsum(self.probs[state[live]], axis=1)
            u = rng.random(live.sum()) * cdf[:, -1]
            tokens = (cdf <= u[:, None]).sum(axis=1)  # first token whose cdf exceeds u
            out[live, i] = tokens
            state[live] = self.next_state[state[live], tokens]
        return torch.from_numpy(out)

    def sample(self, n: int, seed: int | np.random.Generator = 0) -> list[list[str]]:
        """n sentences, each a list of word tokens (no <SOS>, <EOS> or <PAD>)."""
        return [self.tokenizer.decode(row, skip_special=True) for row in self.sample_ids(n, seed)]
