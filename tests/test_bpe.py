"""BPE (notebook 06): learned merge for merge as Hugging Face `tokenizers` learns them, encoding
and decoding exact inverses, and a clear error for what the corpus never had."""

from __future__ import annotations

import json

import pytest

from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.corpus.bpe import learn_bpe, merge, merges_until_single, pair_counts


@pytest.fixture(scope="module")
def corpus():
    return ["".join(words) for words in JapaneseGrammar().sample(600, seed=3)]


def test_the_merges_and_encodings_agree_with_hugging_face_tokenizers(corpus):
    tokenizers = pytest.importorskip("tokenizers")
    bpe = learn_bpe(corpus, 60)
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=len(bpe.alphabet) + 60, min_frequency=0, show_progress=False
    )
    hf.train_from_iterator(corpus, trainer)
    theirs = [tuple(m.split(" ") if isinstance(m, str) else m)
              for m in json.loads(hf.to_str())["model"]["merges"]]  # fmt: skip
    assert [m.pair for m in bpe.merges] == theirs
    assert any(m.tied > 1 for m in bpe.merges)  # the tie rule was exercised
    assert all(hf.encode(text).tokens == bpe.encode(text) for text in corpus)


@pytest.mark.parametrize("unit", ["char", "byte"])
def test_decoding_inverts_encoding(corpus, unit):
    bpe = learn_bpe(corpus, 40, unit)
    for k in (0, 7, 40):
        assert all(bpe.decode(bpe.encode(text, k)) == text for text in corpus[:100])


def test_counting_and_merging_by_hand():
    corpus = {tuple("ああああ"): 2, tuple("あい"): 1}
    assert pair_counts(corpus) == {("あ", "あ"): 6, ("あ", "い"): 1}
    assert merge(tuple("ああああ"), ("あ", "あ")) == ("ああ", "ああ")
    assert merge(tuple("あああ"), ("あ", "あ")) == ("ああ", "あ")  # left to right


def test_the_first_merge_is_the_most_frequent_pair_counting_repeated_texts():
    texts = ["飛ぶ"] * 5 + ["犬が歩く", "猫も歩く", "馬は歩く", "子供と歩く"]  # 歩く in more texts
    first = learn_bpe(texts, 1).merges[0]
    assert first.pair == ("飛", "ぶ") and first.count == 5 and first.tied == 1


def test_words_become_single_tokens_at_the_measured_merge(corpus):
    bpe = learn_bpe(corpus, 40)
    k = merges_until_single(bpe, "河岸")
    assert k is not None and len(bpe.encode("河岸", k)) == 1 and len(bpe.encode("河岸", k - 1)) == 2
    assert merges_until_single(bpe, "犬") == 0


def test_byte_level_needs_merges_to_rebuild_a_kanji(corpus):
    bpe = learn_bpe(corpus, 40, "byte")
    assert len(bpe.encode("犬", 0)) == 3
    assert merges_until_single(bpe, "犬") >= 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda b: b.encode("象が歩く"), "symbols the corpus never had"),
        (lambda b: b.encode("犬", 999), "n_merges must be an int from 0 to"),
        (lambda b: b.encode(42), "text must be a str"),
        (lambda b: learn_bpe(["犬"], -1), "n_merges must be an int >= 0"),
        (lambda b: learn_bpe([], 3), "at least one text"),
        (lambda b: learn_bpe(["犬"], 1, unit="word"), "unit must be one of"),
    ],
)
def test_bad_input_names_the_argument(corpus, call, message):
    bpe = learn_bpe(corpus[:50], 5)
    with pytest.raises((ValueError, TypeError), match=message):
        call(bpe)
