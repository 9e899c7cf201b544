"""Labelled tasks built from the grammar, for fine-tuning (notebook 11). Their labels are
exact: the grammar says whether a sentence can be produced, and who does what in it.

* `grammaticality`, a one-sentence classification like GPT-1's CoLA: half the sentences are
  the grammar's own, half have their subject, place or verb replaced by another word of the
  same kind so that the grammar cannot produce them (魚 が 空 を 泳ぐ). Label 1: grammatical.
* `entailment`, a pair task like GPT-1's natural-language inference: a premise
  (毎朝 犬 が 河岸 を ゆっくり 歩く) and a short hypothesis (犬 が 歩く). Label 1: the premise's
  subject does the hypothesis's verb; 0: the hypothesis has another subject or another verb.
* `similarity`, a pair task like GPT-1's paraphrase detection (QQP, MRPC), without an order:
  two sentences, label 1 when they tell of the same subject doing the same thing
  (犬 が 河岸 を 歩く, 白い 犬 が 公園 を ゆっくり 歩く), 0 when the subject or the verb differs
  (the other one is shared, so that a single word decides).
* `multiple choice`, like GPT-1's RACE or Story Cloze: a premise and four short answers
  (犬 が 歩く, 猫 が 歩く, 犬 が 走る, 馬 が 歩く), exactly one of which the premise entails; the
  label is its index.

Sentences have one clause (`JapaneseGrammar(conjunction_probability=0)`), so that a pair
fits the pre-trained model's context.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..support.language import tr
from ..support.validation import check_positive_int, check_seed
from .grammar import PLACE_KIND, SUBJECTS, VERBS, JapaneseGrammar

TASKS = ("grammaticality", "entailment", "similarity", "multiple choice")
CHOICES = 4  # answers per multiple-choice example
PAIR_WORDS = (
    17  # the two sentences of a similarity pair, at most: <SOS> a <DELIM> b <EXTRACT> fits 20
)
_VERBS = tuple(dict.fromkeys(v for verbs in VERBS.values() for v in verbs))
_SLOTS = {"subject": tuple(SUBJECTS), "place": tuple(PLACE_KIND), "verb": _VERBS}


@dataclass(frozen=True)
class LabelledExample:
    """One example: its text (one part, or a premise and a hypothesis) and its label."""

    parts: tuple[tuple[str, ...], ...]
    label: int


def _where(sentence: list[str]) -> dict[str, int]:
    return {"subject": sentence.index("が") - 1, "place": sentence.index("を") - 1, "verb": -1}


def corrupt(sentence: list[str], rng: np.random.Generator, grammar: JapaneseGrammar) -> list[str]:
    """The sentence with its subject, place or verb replaced by another word of the same kind,
    chosen so that the grammar cannot produce the result."""
    where = _where(sentence)
    while True:
        slot = ("subject", "place", "verb")[rng.integers(3)]
        options = [w for w in _SLOTS[slot] if w != sentence[where[slot]]]
        changed = list(sentence)
        changed[where[slot]] = options[rng.integers(len(options))]
        if grammar.sentence_probability(changed) == 0.0:
            return changed


def make_task(name: str, n: int, seed: int = 0) -> list[LabelledExample]:
    """n labelled examples of task `name` (one of TASKS) from a NumPy generator seeded with
    `seed`: half of each label in random order, or for multiple choice the right answer at a
    random place among the CHOICES."""
    if name not in TASKS:
        raise ValueError(
            tr(
                "name must be one of {TASKS}, got {name!r}",
                TASKS=TASKS,
                name=name,
            )
        )
    check_positive_int("n", n)
    check_seed("seed", seed)
    grammar = JapaneseGrammar(conjunction_probability=0.0)
    rng = np.random.default_rng(seed)
    sentences = grammar.sample(n, rng)
    labels = rng.permutation(np.arange(n) % 2)
    examples = []
    for sentence, label in zip(sentences, labels.tolist(), strict=True):
        if name == "grammaticality":
            text = sentence if label else corrupt(sentence, rng, grammar)
            examples.append(LabelledExample((tuple(text),), label))
            continue
        subject, verb = _subject_verb(sentence)
        if name == "similarity":
            examples.append(_similar_pair(sentence, label, rng, grammar))
            continue
        if name == "multiple choice":
            examples.append(_choices(sentence, rng))
            continue
        if not label:
            if rng.integers(2):
                subject = _other(SUBJECTS, subject, rng)
            else:
                verb = _other(_VERBS, verb, rng)
        examples.append(LabelledExample((tuple(sentence), (subject, "が", verb)), label))
    return examples


def _subject_verb(sentence) -> tuple[str, str]:
    where = _where(list(sentence))
    return sentence[where["subject"]], sentence[where["verb"]]


def _similar_pair(a, label: int, rng: np.random.Generator, grammar: JapaneseGrammar):
    """a and a second sentence b of the grammar: the same subject and verb (label 1), or one
    of the two the same and the other different (label 0), the pair at most PAIR_WORDS words."""
    subject, verb = _subject_verb(a)
    while True:
        b = grammar.sample(1, rng)[0]
        same = [x == y for x, y in zip(_subject_verb(b), (subject, verb), strict=True)]
        wanted = all(same) if label else sum(same) == 1
        if wanted and len(a) + len(b) <= PAIR_WORDS:
            return LabelledExample((tuple(a), tuple(b)), label)


def _choices(sentence, rng: np.random.Generator) -> LabelledExample:
    """The premise and CHOICES answers S が V: its own subject and verb once, the others with
    another subject or another verb; the label is where the right one landed."""
    subject, verb = _subject_verb(sentence)
    answers = {(subject, verb)}
    while len(answers) < CHOICES:
        if rng.integers(2):
            answers.add((_other(SUBJECTS, subject, rng), verb))
        else:
            answers.add((subject, _other(_VERBS, verb, rng)))
    wrong = sorted(answers - {(subject, verb)})
    order = rng.permutation(CHOICES).tolist()
    ranked = [(subject, verb), *wrong]
    answers = [ranked[k] for k in order]
    label = answers.index((subject, verb))
    parts = (tuple(sentence), *((s, "が", v) for s, v in answers))
    return LabelledExample(parts, label)


def _other(words, word: str, rng: np.random.Generator) -> str:
    options = [w for w in words if w != word]
    return options[rng.integers(len(options))]
