import itertools
import math

import numpy as np
import pytest
import torch

from nbhelpers.corpus import EOS, PAD, SOS, JapaneseGrammar, Tokenizer
from nbhelpers.corpus.grammar import ANIMALS, RULES, SUBJECTS, WORD_CLASSES


@pytest.fixture(scope="module")
def grammar():
    return JapaneseGrammar()


def all_sentences(grammar):
    """Every sentence with its probability, by walking the compiled state tables."""
    stack = [(0, [], 1.0)]
    while stack:
        state, ids, p = stack.pop()
        for token_id in np.flatnonzero(grammar.next_state[state] >= 0):
            q = p * grammar.probs[state, token_id]
            if token_id == grammar.tokenizer.eos_id:
                yield ids, q
            else:
                stack.append((int(grammar.next_state[state, token_id]), [*ids, int(token_id)], q))


def test_vocabulary_and_lengths_meet_the_spec(grammar):
    assert grammar.tokenizer.vocab_size >= 30 + 3
    assert grammar.tokenizer.tokens[:3] == [PAD, SOS, EOS]
    lengths = {len(s) for s in grammar.sample(3000, seed=1)}
    assert min(lengths) == 5 and max(lengths) >= 12
    assert grammar.max_length == 20  # 18 words at most, plus <SOS> and <EOS>


def test_running_example_is_a_sentence_and_the_verb_depends_on_the_subject(grammar):
    assert grammar.sentence_probability("犬 が 河岸 を 歩く") > 0
    tokens = grammar.tokenizer.tokens
    after = {}
    for subject in ("犬", "猫", "馬"):
        probs = grammar.true_next_token_distribution(f"{subject} が 河岸 を")
        after[subject] = {tokens[i]: round(float(p), 6) for i, p in enumerate(probs) if p > 0}
    # the same place, the same を: only the subject, 3 tokens back, tells the verbs apart
    assert len({tuple(sorted(d.items())) for d in after.values()}) == 3
    assert after["犬"]["歩く"] == pytest.approx(0.35)
    assert after["猫"]["歩く"] == pytest.approx(0.49)
    # the dependency survives an adjective and an adverb in between (6 tokens)
    probs = grammar.true_next_token_distribution("鳥 が 広い 空 を ゆっくり")
    assert probs[grammar.tokenizer.ids["飛ぶ"]] == 1.0


def test_second_subject_differs_from_the_first(grammar):
    probs = grammar.true_next_token_distribution("犬 が 河岸 を 歩く ので 小さな")
    assert probs[grammar.tokenizer.ids["犬"]] == 0
    others = sum(p for s, p in SUBJECTS.items() if s != "犬")
    assert float(probs[grammar.tokenizer.ids["猫"]]) == pytest.approx(SUBJECTS["猫"] / others)
    ended = grammar.true_next_token_distribution("犬 が 河岸 を 歩く ので 猫 が 道 を 走る")
    assert ended[grammar.tokenizer.eos_id] == 1.0


@pytest.mark.parametrize(
    "prefix",
    ["", "犬", "今日 白い 犬 が", "魚 が 池 を 静かに", "鳥 が 空 を 飛ぶ から 子供 が 川 を"],
)
def test_true_distribution_sums_to_one_and_matches_sentence_probabilities(grammar, prefix):
    probs = grammar.true_next_token_distribution(prefix)
    assert probs.dtype == torch.float64 and probs.shape == (grammar.tokenizer.vocab_size,)
    assert float(probs.sum()) == pytest.approx(1.0, abs=1e-12)
    assert torch.equal(probs, grammar.true_next_token_distribution(["<SOS>", *prefix.split()]))


def test_a_colour_adjective_describes_an_animal_never_a_child(grammar):
    ids = grammar.tokenizer.ids
    animals = sum(SUBJECTS[s] for s in ANIMALS)
    for prefix in ("白い", "今日 黒い"):
        probs = grammar.true_next_token_distribution(prefix)
        assert probs[ids["子供"]] == 0
        for animal in ANIMALS:  # the animals keep their odds, renormalised
            assert float(probs[ids[animal]]) == pytest.approx(SUBJECTS[animal] / animals)
    # a size adjective describes children too, with the unconditioned probabilities
    probs = grammar.true_next_token_distribution("小さな")
    assert float(probs[ids["子供"]]) == pytest.approx(SUBJECTS["子供"])
    # in a second clause the colour and the new-subject rules combine: neither 子供 nor 犬
    probs = grammar.true_next_token_distribution("犬 が 河岸 を 歩く ので 白い")
    assert probs[ids["子供"]] == 0 and probs[ids["犬"]] == 0
    rest = animals - SUBJECTS["犬"]
    assert float(probs[ids["猫"]]) == pytest.approx(SUBJECTS["猫"] / rest)
    assert grammar.sentence_probability("白い 子供 が 公園 を 歩く") == 0.0
    assert grammar.sentence_probability("白い 猫 が 公園 を 歩く") > 0


def test_a_child_never_goes_to_the_sea_or_a_pond(grammar):
    probs = grammar.true_next_token_distribution("子供 が")
    tokens = grammar.tokenizer.tokens
    places = {tokens[i] for i, p in enumerate(probs) if p > 0}
    assert "海" not in places and "池" not in places and "川" in places
    verbs = grammar.true_next_token_distribution("子供 が 川 を")
    assert verbs[grammar.tokenizer.ids["泳ぐ"]] > 0 and verbs[grammar.tokenizer.ids["渡る"]] > 0
    # an independent route: a large sample never pairs them
    text = [" ".join(s) for s in grammar.sample(20_000, seed=6)]
    for pair in ("子供 が 海", "子供 が 池", "子供 が 広い 海", "白い 子供", "黒い 子供"):
        assert not any(pair in sentence for sentence in text), pair
    assert any("白い 猫" in sentence for sentence in text)


def test_every_predicted_position_knows_the_rule_of_its_next_token(grammar):
    ids = grammar.tokenizer.encode(
        "今日 白い 犬 が 広い 河岸 を ゆっくり 歩く ので 猫 が 道 を 走る", eos=True
    )
    batch = grammar.tokenizer.pad(
        [ids.tolist(), grammar.tokenizer.encode("鳥 が 空 を 飛ぶ", eos=True).tolist()]
    )
    rules = grammar.next_token_rules(batch)
    assert rules.shape == (2, batch.shape[1] - 1) and rules.dtype == torch.int64
    names = [RULES[r] for r in rules[0].tolist()]
    assert names == [
        "time word", "subject adjective", "subject", "が", "place adjective", "place", "を",
        "adverb", "verb", "conjunction", "subject", "が", "place", "を", "verb", "end",
    ]  # fmt: skip
    assert [RULES[r] for r in rules[1, :5].tolist()] == ["subject", "が", "place", "を", "verb"]
    assert rules[1, 5].item() == RULES.index("end") and bool((rules[1, 6:] == -1).all())
    # on samples: a rule exactly where a token is predicted, and the token's word class
    sample = grammar.sample_ids(500, seed=8)
    rules = grammar.next_token_rules(sample)
    _, mask = grammar.true_distributions(sample)
    assert torch.equal(rules >= 0, mask)
    targets = sample[:, 1:]
    for rule, word_class in enumerate(WORD_CLASSES):
        chosen = targets[rules == rule].unique().tolist()
        assert chosen and {grammar.tokenizer.tokens[i] for i in chosen} <= set(word_class)
    assert bool((targets[rules == RULES.index("end")] == grammar.tokenizer.eos_id).all())
    with pytest.raises(ValueError, match="start with <SOS>"):
        grammar.next_token_rules(sample[:, 1:])
    with pytest.raises(ValueError, match=r"\(B, n\) batch"):
        grammar.next_token_rules(sample[0])


def test_prefix_forms_agree(grammar):
    ids = grammar.tokenizer.encode("犬が河岸を")
    a = grammar.true_next_token_distribution("犬 が 河岸 を")
    assert torch.equal(a, grammar.true_next_token_distribution("犬が河岸を"))
    assert torch.equal(a, grammar.true_next_token_distribution(ids))
    assert torch.equal(a, grammar.true_next_token_distribution(ids.tolist()))


def test_impossible_prefixes_raise_value_errors_naming_the_problem(grammar):
    with pytest.raises(ValueError, match="'泳ぐ' cannot follow '猫 が 公園 を'"):
        grammar.true_next_token_distribution("猫 が 公園 を 泳ぐ")
    with pytest.raises(ValueError, match="unknown token 'ライオン'"):
        grammar.true_next_token_distribution("ライオン が")
    with pytest.raises(ValueError, match="nothing comes next"):
        grammar.true_next_token_distribution("犬 が 河岸 を 歩く <EOS>")
    with pytest.raises(ValueError, match="after <EOS>"):
        grammar.true_next_token_distribution("犬 が 河岸 を 歩く <EOS> 犬")
    with pytest.raises(ValueError, match="<SOS> only at the start"):
        grammar.true_next_token_distribution("犬 <SOS>")
    with pytest.raises(ValueError, match="prefix ids"):
        grammar.true_next_token_distribution([1, 999])
    assert grammar.sentence_probability("犬 が 河岸 を") == 0.0  # a prefix, not a sentence


def test_entropy_by_dynamic_programming_matches_enumeration():
    one_clause = JapaneseGrammar(conjunction_probability=0.0)
    sentences = list(all_sentences(one_clause))
    probs = np.array([p for _, p in sentences])
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    entropy = -np.sum(probs * np.log(probs))
    predicted = sum(p * (len(ids) + 1) for ids, p in sentences)  # words + <EOS>
    assert one_clause.sentence_count() == len(sentences)
    assert one_clause.sentence_entropy() == pytest.approx(entropy, rel=1e-12)
    assert one_clause.expected_predicted_tokens() == pytest.approx(predicted, rel=1e-12)
    assert one_clause.entropy_rate() == pytest.approx(entropy / predicted, rel=1e-12)
    some = sentences[:: max(1, len(sentences) // 50)]
    for ids, p in some:
        assert one_clause.sentence_probability(ids) == pytest.approx(p, rel=1e-12)


def test_sampling_agrees_with_the_exact_entropy_rate(grammar):
    ids = grammar.sample_ids(20000, seed=3)
    probs, mask = grammar.true_distributions(ids)
    target = probs.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)[mask]
    assert bool((target > 0).all())  # every sampled token was possible
    estimate = float(-target.log().mean())
    assert estimate == pytest.approx(grammar.entropy_rate(), abs=0.01)
    tokens_per_sentence = float(mask.sum()) / len(ids)
    assert tokens_per_sentence == pytest.approx(grammar.expected_predicted_tokens(), abs=0.05)
    assert 1.0 < grammar.entropy_rate() < 1.3


def test_sampling_is_reproducible_and_seed_dependent(grammar):
    assert torch.equal(grammar.sample_ids(50, seed=7), grammar.sample_ids(50, seed=7))
    assert grammar.sample(50, seed=7) != grammar.sample(50, seed=8)
    ids = grammar.sample_ids(50, seed=7)
    assert bool((ids[:, 0] == grammar.tokenizer.sos_id).all())
    ends = (ids == grammar.tokenizer.eos_id).float().argmax(1)
    for row, end in zip(ids, ends, strict=True):
        assert bool((row[end + 1 :] == grammar.tokenizer.pad_id).all())
    with pytest.raises(ValueError, match="n must be a positive int"):
        grammar.sample(0)


def test_true_distributions_match_one_prefix_at_a_time(grammar):
    ids = grammar.sample_ids(5, seed=2)
    probs, mask = grammar.true_distributions(ids)
    for b, i in itertools.product(range(5), range(ids.shape[1] - 1)):
        if mask[b, i]:
            expected = grammar.true_next_token_distribution(ids[b, : i + 1])
            assert torch.equal(probs[b, i], expected)


def test_tokenizer_round_trip_and_errors():
    tokenizer = JapaneseGrammar().tokenizer
    ids = tokenizer.encode("犬が河岸を歩く", eos=True)
    assert tokenizer.decode(ids) == [SOS, "犬", "が", "河岸", "を", "歩く", EOS]
    assert tokenizer.to_text(ids) == "犬が河岸を歩く"
    assert tokenizer.to_text(ids, sep=" ") == "犬 が 河岸 を 歩く"
    assert torch.equal(tokenizer.encode("<SOS> 犬"), tokenizer.encode("犬"))
    assert tokenizer.encode("犬", sos=False).tolist() == [tokenizer.ids["犬"]]
    assert tokenizer.encode("").tolist() == [tokenizer.sos_id]
    # longest match: 静かな and 静かに share a prefix, とき is not と + き
    assert tokenizer.tokenize("静かな川を静かに") == ["静かな", "川", "を", "静かに"]
    with pytest.raises(ValueError, match="unknown token 'ネコ'"):
        tokenizer.encode("ネコ が")
    with pytest.raises(ValueError, match="unknown token 'xyz'"):
        tokenizer.encode(["犬", "xyz"])
    with pytest.raises(TypeError, match="text must be a str"):
        tokenizer.encode(3)
    with pytest.raises(ValueError, match=r"ids must be ints in \[0, 41\)"):
        tokenizer.decode([0, 41])
    batch = tokenizer.pad([[1, 10], [1, 10, 16, 2]])
    assert batch.tolist() == [[1, 10, 0, 0], [1, 10, 16, 2]]
    assert repr(tokenizer) == "Tokenizer(41 tokens)"
    with pytest.raises(ValueError, match="must be distinct"):
        Tokenizer(["犬", "犬"])


def test_entropy_rate_is_a_proper_rate(grammar):
    # H(sentence) / E[tokens]: positive, and far below log(vocab) (the uniform guess)
    assert 0 < grammar.entropy_rate() < math.log(grammar.tokenizer.vocab_size)
    assert grammar.sentence_entropy() == pytest.approx(
        grammar.entropy_rate() * grammar.expected_predicted_tokens()
    )


# --- n-gram baselines -----------------------------------------------------------------------


def test_the_exact_bigram_kl_agrees_with_counting_a_large_sample(grammar):
    # An independent route: count bigrams in sampled sentences, then average KL(true ‖ counts)
    # over the predicted positions of other sampled sentences.
    vocab, pad = grammar.tokenizer.vocab_size, grammar.tokenizer.pad_id
    train = grammar.sample_ids(40_000, seed=4)
    counts = torch.zeros(vocab, vocab, dtype=torch.float64)
    pairs = torch.stack([train[:, :-1].flatten(), train[:, 1:].flatten()], 1)
    pairs = pairs[pairs[:, 1] != pad]
    counts.index_put_((pairs[:, 0], pairs[:, 1]), torch.ones(len(pairs), dtype=torch.float64),
                      accumulate=True)  # fmt: skip
    counted = counts / counts.sum(1, keepdim=True).clamp(min=1)
    test = grammar.sample_ids(4_000, seed=5)
    p, mask = grammar.true_distributions(test)
    q = counted[test[:, :-1]]
    support = p > 0
    kl = torch.where(support, p * (p.clamp(min=1e-300).log() - q.clamp(min=1e-300).log()), 0.0)
    estimate = float(kl.sum(-1)[mask].mean())
    assert abs(estimate - grammar.ngram_kl(1)) < 0.01, (estimate, grammar.ngram_kl(1))


def test_longer_contexts_never_predict_worse(grammar):
    kls = [grammar.ngram_kl(order) for order in range(4)]
    assert all(a > b for a, b in zip(kls, kls[1:], strict=False)), kls
    assert kls[0] > 1.0 > kls[1]  # a unigram model is far off; one token of context helps most


def test_the_unigram_model_is_the_token_frequency_of_a_large_sample(grammar):
    (context, unigram), *_ = grammar.ngram_model(0).items()
    assert context == ()
    ids = grammar.sample_ids(20_000, seed=3)[:, 1:]  # the predicted tokens, <PAD> aside
    targets = ids[ids != grammar.tokenizer.pad_id]
    frequency = torch.bincount(targets, minlength=grammar.tokenizer.vocab_size).double()
    frequency /= frequency.sum()
    assert float((frequency - torch.from_numpy(unigram)).abs().max()) < 0.005


def test_the_bigram_model_conditions_on_the_last_token(grammar):
    bigram = grammar.ngram_model(1)
    after_ga = bigram[(grammar.tokenizer.ids["が"],)]
    assert abs(after_ga.sum() - 1) < 1e-12
    # after が come places only (and their adjectives), never a particle
    assert (
        after_ga[grammar.tokenizer.ids["を"]] == 0 and after_ga[grammar.tokenizer.ids["河岸"]] > 0
    )


def test_a_negative_order_is_refused(grammar):
    with pytest.raises(ValueError, match="order must be an int from 0 to 4, got -1"):
        grammar.ngram_model(-1)
    with pytest.raises(ValueError, match="got 9"):
        grammar.ngram_kl(9)
