"""Fine-tuning (notebook 11): the input transformations, the new embedding rows, the
classifier and L1, L2, L3 against torch's own functions; the tasks' labels against the
grammar; and the stored curves against a rerun."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from nbhelpers import GPT1, GPT1Config
from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.corpus.tasks import make_task
from nbhelpers.experiments.fine_tuning import (
    PAPER_RECIPE,
    FineTuningSettings,
    batches,
    encode,
    fine_tune,
    learning_rate_at,
    load_curves,
    split,
    starting_model,
    task_tokenizer,
)
from nbhelpers.fine_tuning import (
    DELIM,
    EXTRACT,
    START,
    GPT1Classifier,
    classification_input,
    entailment_input,
    fine_tuning_loss,
    l1,
    l2,
    l3,
    multiple_choice_inputs,
    similarity_inputs,
)


def small(seed=0, vocab=12):
    torch.manual_seed(seed)
    return GPT1(GPT1Config(vocab_size=vocab, n_ctx=12, d_model=16, n_layers=2, n_heads=2)).eval()


def test_add_tokens_keeps_the_trained_rows_and_grows_the_tied_output():
    model = small()
    before = model.W_e.weight.detach().clone()
    ids = torch.tensor([[1, 3, 4, 5]])
    logits_before = model(ids)
    new = model.add_tokens(2, generator=torch.Generator().manual_seed(0))
    assert new == [12, 13] and model.config.vocab_size == 14
    assert torch.equal(model.W_e.weight[:12].detach(), before)
    logits = model(ids)
    assert logits.shape == (1, 4, 14)
    torch.testing.assert_close(logits[..., :12], logits_before)  # old tokens: same numbers
    assert model(torch.tensor([[1, 13, 12]])).shape == (1, 3, 14)  # new ids are accepted
    assert 0.005 < float(model.W_e.weight[12:].detach().std()) < 0.05  # N(0, 0.02²)


def test_the_transformations_follow_the_papers_figure():
    a, b = ["犬", "が", "歩く"], ["猫", "が", "走る"]
    assert classification_input(a) == ["<SOS>", *a, EXTRACT]
    assert entailment_input(a, b) == ["<SOS>", *a, DELIM, *b, EXTRACT]
    assert similarity_inputs(a, b) == [["<SOS>", *a, DELIM, *b, EXTRACT],
                                       ["<SOS>", *b, DELIM, *a, EXTRACT]]  # fmt: skip
    assert multiple_choice_inputs(a[:2], [["歩く"], ["走る"]])[1] == ["<SOS>", "犬", "が", DELIM,
                                                                     "走る", EXTRACT]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: classification_input("犬が歩く"), "text must be a non-empty list of tokens"),
        (lambda: classification_input([]), "text must be a non-empty list"),
        (lambda: entailment_input(["犬", EXTRACT], ["犬"]), "premise must not hold"),
        (lambda: multiple_choice_inputs(["犬"], [["歩く"]]), "answers must be a list of 2"),
        (lambda: FineTuningSettings(task="sentiment"), "task must be one of"),
        (lambda: FineTuningSettings(layers=-1), "layers must be None or an int"),
        (lambda: FineTuningSettings(lam=-0.5), "lam"),
        (lambda: make_task("grammaticality", 0), "n must be a positive int"),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def test_the_classifier_reads_the_extract_token_and_ignores_the_padding_after_it():
    model = small()
    classifier = GPT1Classifier(model, 3, extract_id=11, seed=0)
    ids = torch.tensor([[1, 3, 4, 11, 0, 0], [1, 5, 6, 7, 8, 11]])
    class_logits, lm_logits = classifier(ids)
    with torch.no_grad():
        h = model.hidden_states(ids)
    expected = torch.stack([h[0, 3], h[1, 5]]) @ classifier.W_y.weight.T
    torch.testing.assert_close(class_logits, expected)
    alone, _ = classifier(ids[:1, :4])  # the same sequence without its padding
    torch.testing.assert_close(class_logits[:1], alone)
    assert lm_logits.shape == (2, 6, 12)
    with pytest.raises(ValueError, match="exactly one <EXTRACT>"):
        classifier(torch.tensor([[1, 3, 4, 5]]))
    with pytest.raises(ValueError, match=r"ids must be \(B, n\) for a classification head"):
        classifier(torch.stack([ids, ids.flip(0)], dim=1))


def test_the_similarity_head_adds_the_two_orders():
    """h_L^m of a-b plus h_L^m of b-a, then W_y: each order run through the model alone."""
    model = small()
    classifier = GPT1Classifier(model, 2, extract_id=11, seed=0, kind="similarity")
    ab = torch.tensor([[1, 3, 4, 10, 5, 11], [1, 6, 10, 7, 8, 11]])  # 10 stands for <DELIM>
    ba = torch.tensor([[1, 5, 10, 3, 4, 11], [1, 7, 8, 10, 6, 11]])
    summed, lm_logits = classifier(torch.stack([ab, ba], dim=1))  # (B, 2, n)
    with torch.no_grad():
        h_ab, h_ba = model.hidden_states(ab)[:, -1], model.hidden_states(ba)[:, -1]
    torch.testing.assert_close(summed, (h_ab + h_ba) @ classifier.W_y.weight.T)
    assert lm_logits.shape == (2, 2, 6, 12)


def test_the_multiple_choice_head_scores_each_answer_and_softmaxes_over_them():
    """One score per answer, h_L^m W_y with W_y (d, 1); P(answer) = softmax over the k
    answers; the loss is F.cross_entropy over those k scores."""
    model = small()
    with pytest.raises(ValueError, match="n_classes must be 1"):
        GPT1Classifier(model, 2, extract_id=11, kind="multiple choice")
    classifier = GPT1Classifier(model, 1, extract_id=11, seed=0, kind="multiple choice")
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 10, (3, 4, 6), generator=g)
    ids[..., -1] = 11  # every answer's sequence ends in <EXTRACT>
    scores, _ = classifier(ids)
    assert scores.shape == (3, 4)
    with torch.no_grad():
        for b in range(3):
            for k in range(4):
                alone = model.hidden_states(ids[b, k])[-1] @ classifier.W_y.weight[0]
                torch.testing.assert_close(scores[b, k], alone)
    labels = torch.tensor([0, 3, 1])
    torch.testing.assert_close(
        l2(scores, labels), -F.cross_entropy(scores, labels, reduction="sum")
    )


def test_l1_l2_l3_and_the_loss_against_cross_entropy():
    g = torch.Generator().manual_seed(0)
    class_logits, labels = torch.randn(5, 3, generator=g), torch.tensor([0, 2, 1, 1, 0])
    lm_logits = torch.randn(5, 7, 10, generator=g)
    ids = torch.randint(1, 10, (5, 7), generator=g)
    ids[2, 4:] = 0
    L2 = l2(class_logits, labels)
    L1 = l1(lm_logits, ids, pad_id=0)
    torch.testing.assert_close(L2, -F.cross_entropy(class_logits, labels, reduction="sum"))
    torch.testing.assert_close(
        L1,
        -F.cross_entropy(
            lm_logits[:, :-1].transpose(1, 2), ids[:, 1:], ignore_index=0, reduction="sum"
        ),  # fmt: skip
    )
    assert float(l3(L2, L1, 0.5)) == pytest.approx(float(L2 + 0.5 * L1))


def test_the_fine_tuning_loss_is_the_mean_of_each_term():
    model = small()
    classifier = GPT1Classifier(model, 2, extract_id=11)
    ids = torch.tensor([[1, 3, 4, 11, 0], [1, 5, 6, 7, 11]])
    labels = torch.tensor([1, 0])
    with torch.no_grad():
        class_logits, lm_logits = classifier(ids)
        loss = fine_tuning_loss(classifier, ids, labels, lam=0.5, pad_id=0)
    N = int((ids[:, 1:] != 0).sum())
    expected = -l2(class_logits, labels) / 2 - 0.5 * l1(lm_logits, ids, 0) / N
    torch.testing.assert_close(loss, expected)


@pytest.mark.parametrize("name", ["grammaticality", "entailment"])
def test_the_task_labels_are_exact_and_balanced(name):
    grammar = JapaneseGrammar(conjunction_probability=0.0)
    examples = make_task(name, 200, seed=5)
    assert sum(e.label for e in examples) == 100
    for e in examples:
        if name == "grammaticality":
            assert (grammar.sentence_probability(list(e.parts[0])) > 0) == bool(e.label)
        else:
            premise, hypothesis = e.parts
            assert grammar.sentence_probability(list(premise)) > 0
            subject = premise[premise.index("が") - 1]
            holds = hypothesis[0] == subject and hypothesis[2] == premise[-1]
            assert holds == bool(e.label)


def subject_and_verb(sentence):
    return sentence[list(sentence).index("が") - 1], sentence[-1]


def test_the_similarity_labels_are_exact_balanced_and_fit_the_context():
    grammar = JapaneseGrammar(conjunction_probability=0.0)
    examples = make_task("similarity", 200, seed=5)
    assert sum(e.label for e in examples) == 100
    for e in examples:
        a, b = e.parts
        assert grammar.sentence_probability(list(a)) > 0 < grammar.sentence_probability(list(b))
        same = [x == y for x, y in zip(subject_and_verb(a), subject_and_verb(b), strict=True)]
        assert (all(same) if e.label else sum(same) == 1) and len(a) + len(b) <= 17


def test_multiple_choice_has_one_entailed_answer_at_the_label():
    examples = make_task("multiple choice", 200, seed=5)
    assert {e.label for e in examples} == {0, 1, 2, 3}
    for e in examples:
        premise, *answers = e.parts
        subject, verb = subject_and_verb(premise)
        holds = [a[0] == subject and a[2] == verb for a in answers]
        assert len(answers) == 4 and holds.count(True) == 1 and holds.index(True) == e.label
        assert len(set(answers)) == 4


@pytest.mark.parametrize(("task", "shape"), [("similarity", (3, 2)), ("multiple choice", (3, 4))])
def test_several_sequences_per_example_encode_as_one_row_each(task, shape):
    tokenizer = task_tokenizer()
    examples = make_task(task, 3, seed=0)
    ids, labels = encode(task, examples, tokenizer)
    assert ids.shape[:2] == shape and ids.shape[2] <= 20 and labels.shape == (3,)
    first = [tokenizer.tokens[i] for i in ids[0, 1] if i != tokenizer.pad_id]
    if task == "similarity":  # the second row is the b-a order
        a, b = examples[0].parts
        assert first == ["<SOS>", *b, DELIM, *a, EXTRACT]
    else:
        assert first == ["<SOS>", *examples[0].parts[0], DELIM, *examples[0].parts[2], EXTRACT]


def test_the_task_tokenizer_matches_the_new_rows():
    tokenizer = task_tokenizer()
    model, new_ids = starting_model(layers=1, seed=0)
    assert new_ids == [tokenizer.ids[DELIM], tokenizer.ids[EXTRACT]]
    assert model.config.vocab_size == tokenizer.vocab_size
    ids, labels = encode("entailment", make_task("entailment", 3), tokenizer)
    assert ids.shape[1] <= model.config.n_ctx and labels.shape == (3,)


def test_the_test_set_is_never_trained_on():
    pool, test = split("grammaticality", seed=0)
    assert not {e.parts for e in pool} & {e.parts for e in test}


def test_starting_models_transfer_what_they_say():
    pre, _ = starting_model(layers=1, seed=0)
    emb, _ = starting_model(layers=0, seed=0)
    none, _ = starting_model(layers=None, seed=0)
    assert torch.equal(pre.W_e.weight[:41], emb.W_e.weight[:41])
    assert not torch.equal(pre.blocks[0].ffn[0].weight, emb.blocks[0].ffn[0].weight)
    assert not torch.equal(pre.W_e.weight[:41], none.W_e.weight[:41])


@pytest.mark.slow  # a fine-tuning run
def test_the_stored_curves_cover_the_sweep_and_a_rerun_lands_within_their_spread():
    curves = load_curves()
    runs = curves["runs"]
    keys = {(r["task"], r["start"], r["lam"], r["n_labelled"]) for r in runs}
    assert len(runs) == 3 * len(keys)  # three seeds each
    assert all(0.0 <= r["accuracy"] <= 1.0 for r in runs)
    chosen = ("grammaticality", "pre-trained", 0.5, 64)
    stored = [r["accuracy"] for r in runs
              if (r["task"], r["start"], r["lam"], r["n_labelled"]) == chosen]  # fmt: skip
    result, _ = fine_tune(task="grammaticality", n_labelled=64, layers=1, lam=0.5, seed=0)
    assert min(stored) - 0.02 <= result.accuracy <= max(stored) + 0.02


def test_the_new_start_token_replaces_sos_and_leaves_the_other_new_rows_as_they_were():
    tokenizer = task_tokenizer(new_start=True)
    ids, _ = encode("similarity", make_task("similarity", 3), tokenizer)  # (3, 2, n)
    assert bool((ids[..., 0] == tokenizer.ids[START]).all())
    assert not bool((ids == tokenizer.ids["<SOS>"]).any())
    with_start, new_ids = starting_model(layers=1, seed=3, new_start=True)
    without, old_ids = starting_model(layers=1, seed=3)
    assert new_ids[:2] == old_ids and new_ids[2] == tokenizer.ids[START]
    assert torch.equal(with_start.W_e.weight[: old_ids[-1] + 1], without.W_e.weight)


def test_l1_on_some_examples_only_is_their_cross_entropy():
    model = small()
    classifier = GPT1Classifier(model, 2, extract_id=11)
    ids = torch.tensor([[1, 3, 4, 11, 0], [1, 5, 6, 7, 11], [1, 2, 9, 11, 0]])
    labels = torch.tensor([1, 0, 1])
    keep = labels == 1
    with torch.no_grad():
        class_logits, lm_logits = classifier(ids)
        loss = fine_tuning_loss(classifier, ids, labels, lam=0.5, pad_id=0, lm_examples=keep)
        none = fine_tuning_loss(classifier, ids, labels, lam=0.5, pad_id=0,
                                lm_examples=torch.zeros(3, dtype=torch.bool))  # fmt: skip
    lm = F.cross_entropy(
        lm_logits[keep, :-1].flatten(0, 1), ids[keep, 1:].flatten(), ignore_index=0
    )
    torch.testing.assert_close(loss, F.cross_entropy(class_logits, labels) + 0.5 * lm)
    torch.testing.assert_close(none, F.cross_entropy(class_logits, labels))
    with pytest.raises(ValueError, match="lm_examples must be None or a bool tensor"):
        fine_tuning_loss(classifier, ids, labels, pad_id=0, lm_examples=torch.ones(3))


def test_the_classifier_dropout_acts_in_training_only():
    classifier = GPT1Classifier(small(), 2, extract_id=11, dropout=0.5)
    ids = torch.tensor([[1, 3, 4, 11]] * 8)
    classifier.eval()
    assert torch.equal(classifier(ids)[0], classifier(ids)[0])
    classifier.train()
    torch.manual_seed(0)
    logits = classifier(ids)[0]
    assert not torch.allclose(logits, logits[:1].expand_as(logits))  # rows differ: dropped


def test_the_papers_schedule_warms_up_then_decays_linearly_to_zero():
    settings = FineTuningSettings(n_labelled=1000, **PAPER_RECIPE)
    assert settings.total_steps == 3 * 32  # 3 epochs of ceil(1000 / 32) batches
    rates = [learning_rate_at(settings, step) for step in range(settings.total_steps)]
    assert rates[0] == pytest.approx(6.25e-5)  # 0.2 % of 96 steps rounds to one step
    assert rates[-1] == pytest.approx(6.25e-5 / 95)
    assert all(a >= b for a, b in zip(rates, rates[1:], strict=False)) and rates[1] > rates[-1]
    longer = FineTuningSettings(
        n_labelled=1000, steps=1000, epochs=None, schedule="warm-up, linear decay", warmup=0.01
    )
    warm = [learning_rate_at(longer, step) for step in range(12)]
    assert warm[:10] == pytest.approx([1e-3 * (s + 1) / 10 for s in range(10)])
    assert FineTuningSettings().total_steps == 300  # the course's: steps at a constant rate
    assert learning_rate_at(FineTuningSettings(), 299) == 1e-3


def test_epochs_show_every_example_once_per_epoch():
    settings = FineTuningSettings(n_labelled=70, batch_size=32, epochs=2)
    rows = list(batches(settings, torch.Generator().manual_seed(0)))
    assert [len(r) for r in rows] == [32, 32, 6, 32, 32, 6]
    for epoch in (rows[:3], rows[3:]):
        assert sorted(torch.cat(epoch).tolist()) == list(range(70))


def test_settings_refuse_what_they_cannot_run():
    with pytest.raises(ValueError, match="lm_on"):
        FineTuningSettings(task="entailment", lm_on="grammatical")
    with pytest.raises(ValueError, match="model must be one of"):
        FineTuningSettings(model="huge")
    with pytest.raises(ValueError, match="schedule must be one of"):
        FineTuningSettings(schedule="cosine")
    with pytest.raises(ValueError, match="embeddings must be one of"):
        FineTuningSettings(embeddings="huge")


def test_swapped_embeddings_are_the_other_models_and_nothing_else():
    from nbhelpers.experiments.course_model import DEEP_MODEL_PATH, load_course_model
    from nbhelpers.experiments.fine_tuning import starting_model

    deep = load_course_model(path=DEEP_MODEL_PATH)
    own, _ = starting_model(0, seed=0, model="course")
    swapped, _ = starting_model(0, seed=0, model="course", embeddings="deep")
    rows = deep.W_e.weight.shape[0]  # the task tokens' new rows come after the vocabulary
    assert torch.equal(swapped.W_e.weight[:rows], deep.W_e.weight)
    assert torch.equal(swapped.W_p, deep.W_p)
    assert torch.equal(swapped.W_e.weight[rows:], own.W_e.weight[rows:])  # same new rows
    pairs = zip(swapped.blocks.parameters(), own.blocks.parameters(), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)


def test_a_run_with_dropout_does_not_depend_on_what_ran_before():
    settings = FineTuningSettings(n_labelled=32, steps=4, classifier_dropout=0.5, seed=1)
    first, tuned = fine_tune(settings)
    torch.rand(1000)  # the global generator moves on, as other runs in a sweep move it
    second, again = fine_tune(settings)
    assert first.accuracy == second.accuracy
    assert torch.equal(tuned.W_y.weight, again.W_y.weight)
    # returned in eval mode, as pre-training returns its model: no dropout in later use
    assert not tuned.training and not any(m.training for m in tuned.modules())
