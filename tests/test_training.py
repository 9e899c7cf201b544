import math

import pytest
import torch
import torch.nn.functional as F
from matplotlib.figure import Figure

from nbhelpers import GPT1, GPT1Config
from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.corpus.grammar import RULES, VERBS
from nbhelpers.experiments.heldout import HeldOut, evaluate, evaluate_by_rule, make_heldout
from nbhelpers.experiments.pretraining import corpus_model_config, learning_rate, train
from nbhelpers.experiments.sampling import sample_sentences
from nbhelpers.figures.canvas import figure_to_png
from nbhelpers.figures.training import RULE_GROUPS, rule_kl_figure, training_figure
from nbhelpers.statistics import kl_divergence


@pytest.fixture(scope="module")
def grammar():
    return JapaneseGrammar()


@pytest.fixture(scope="module")
def heldout(grammar):
    return make_heldout(grammar, n=300, seed=99)


def small_model(grammar, seed=0):
    torch.manual_seed(seed)
    return GPT1(corpus_model_config(grammar, d_model=32, n_layers=1, n_heads=2))


def test_heldout_holds_exact_distributions(grammar, heldout):
    assert heldout.ids.shape == (300, grammar.max_length)
    assert heldout.true_probs.shape == (300, grammar.max_length - 1, grammar.tokenizer.vocab_size)
    sums = heldout.true_probs.sum(-1)
    assert torch.allclose(sums[heldout.mask], torch.ones(()), atol=1e-6)
    assert bool((sums[~heldout.mask] == 0).all())
    assert heldout.predicted_tokens == int((heldout.ids[:, 1:] != grammar.tokenizer.pad_id).sum())
    # the true model's loss on 300 sentences is close to the exact entropy rate
    assert heldout.true_loss == pytest.approx(grammar.entropy_rate(), abs=0.1)


def test_evaluate_matches_a_direct_computation(grammar, heldout):
    model = small_model(grammar)
    kl, loss = evaluate(model, heldout)
    with torch.no_grad():
        log_q = F.log_softmax(model(heldout.ids[:, :-1]), dim=-1)
    total_kl, count = 0.0, 0
    for b, i in heldout.mask.nonzero().tolist()[:200]:
        p = heldout.true_probs[b, i].double()
        support = p > 0
        total_kl += float((p[support] * (p[support].log() - log_q[b, i][support])).sum())
        count += 1
    keep = heldout.mask.nonzero()[:200]
    only = torch.zeros_like(heldout.mask)
    only[keep[:, 0], keep[:, 1]] = True
    sub = HeldOut(heldout.ids, heldout.true_probs, only, true_loss=0.0)
    assert evaluate(model, sub)[0] == pytest.approx(total_kl / count, rel=1e-4)
    targets = heldout.ids[:, 1:]
    ce = F.cross_entropy(log_q[heldout.mask], targets[heldout.mask])
    assert loss == pytest.approx(float(ce), rel=1e-5)
    assert kl > 0 and loss > heldout.true_loss


def test_kl_per_rule_matches_a_direct_computation(grammar, heldout):
    model = small_model(grammar, seed=3)
    by_rule = evaluate_by_rule(model, heldout, chunk=70)  # chunks that split the batch unevenly
    assert list(by_rule) == list(RULES)
    with torch.no_grad():
        q = F.softmax(model(heldout.ids[:, :-1]).double(), dim=-1)
    kl = kl_divergence(heldout.true_probs.double(), q)
    targets = heldout.ids[:, 1:]
    verb_ids = {grammar.tokenizer.ids[v] for options in VERBS.values() for v in options}
    verbs = torch.isin(targets, torch.tensor(sorted(verb_ids)))
    assert by_rule["verb"] == pytest.approx(float(kl[verbs].mean()), rel=1e-4)
    ends = targets == grammar.tokenizer.eos_id
    assert by_rule["end"] == pytest.approx(float(kl[ends].mean()), rel=1e-4)
    # the rules' means, weighted by how often each occurs, give back the overall mean
    counts = torch.stack([(heldout.rules == r).sum() for r in range(len(RULES))]).double()
    pooled = float((counts * torch.tensor(list(by_rule.values()))).sum() / counts.sum())
    assert pooled == pytest.approx(evaluate(model, heldout)[0], rel=1e-4)
    without = HeldOut(heldout.ids, heldout.true_probs, heldout.mask, heldout.true_loss)
    with pytest.raises(ValueError, match="heldout.rules is None"):
        evaluate_by_rule(model, without)
    assert evaluate(model, without) == evaluate(model, heldout)  # rules are optional


def test_short_training_run_learns_and_is_reproducible(grammar, heldout):
    threads = torch.get_num_threads()
    runs = []
    for _ in range(2):
        model = small_model(grammar)
        before, _ = evaluate(model, heldout)
        history = train(
            model,
            grammar,
            steps=60,
            batch_size=32,
            eval_every=20,
            heldout=heldout,
            progress=False,
            checkpoints=[0, 30, 60],
        )
        runs.append((history, model))
    history, model = runs[0]
    assert torch.get_num_threads() == threads  # restored
    assert history.steps == [20, 40, 60]
    assert history.kl[-1] < 0.7 * before
    assert history.heldout_loss[-1] < math.log(grammar.tokenizer.vocab_size)
    assert history.kl == runs[1][0].kl  # same seed, same weights: the same run on the CPU
    assert history.entropy_rate == grammar.entropy_rate()
    assert history.heldout_true_loss == heldout.true_loss
    assert not model.training
    assert repr(history) == "TrainingHistory(3 evaluations)"
    assert history.first_below(10.0) == (20, history.seconds[0])
    assert history.first_below(0.0) is None
    assert isinstance(training_figure(history), Figure)
    assert len(training_figure(history).axes) == 2
    # the KL per rule at every evaluation, the same as measuring the final model afresh
    assert list(history.kl_by_rule) == list(RULES)
    assert all(len(values) == 3 for values in history.kl_by_rule.values())
    assert history.rule_kl_at(60) == pytest.approx(evaluate_by_rule(model, heldout))
    with pytest.raises(ValueError, match="one of the evaluated steps"):
        history.rule_kl_at(50)
    # checkpoints: CPU copies of the weights, the last one the trained model's
    assert sorted(history.checkpoints) == [0, 30, 60]
    final = history.checkpoints[60]
    assert all(torch.equal(final[k], v) for k, v in model.state_dict().items())
    initial = small_model(grammar).state_dict()
    assert all(torch.equal(history.checkpoints[0][k], v) for k, v in initial.items())
    assert not torch.equal(history.checkpoints[30]["W_e.weight"], final["W_e.weight"])
    # one panel per group of rules, every rule drawn once, with the mean and the target
    assert sorted(r for _, rules in RULE_GROUPS for r in rules) == sorted(RULES)
    figure = rule_kl_figure(history)
    assert len(figure.axes) == len(RULE_GROUPS)
    for ax, (_, rules) in zip(figure.axes, RULE_GROUPS, strict=True):
        assert len(ax.get_lines()) == len(rules) + 2
    assert figure.dpi >= 100 and figure_to_png(figure).startswith(b"\x89PNG")
    untargeted = rule_kl_figure(history, kl_target=None)
    assert [len(ax.get_lines()) for ax in untargeted.axes] == [len(r) + 1 for _, r in RULE_GROUPS]
    history.kl_by_rule.clear()
    with pytest.raises(ValueError, match="no KL per rule"):
        rule_kl_figure(history)


def test_sampled_sentences_are_seeded_and_judged_by_the_grammar(grammar):
    model = small_model(grammar)
    sentences = sample_sentences(model, grammar, 5, seed=2)
    assert sentences == sample_sentences(model, grammar, 5, seed=2)
    assert sentences != sample_sentences(model, grammar, 5, seed=3)
    for text, grammatical in sentences:
        assert grammatical == (
            not text.endswith("…") and grammar.sentence_probability(text + " <EOS>") > 0
        )
    with pytest.raises(ValueError, match="n must be a positive int"):
        sample_sentences(model, grammar, 0)
    with pytest.raises(ValueError, match="cpu_threads"):
        sample_sentences(model, grammar, 1, cpu_threads=0)


def test_learning_rate_warms_up_then_decays():
    rates = [learning_rate(s, 100, 1e-2, 10) for s in range(100)]
    assert rates[0] == pytest.approx(1e-3) and rates[9] == pytest.approx(1e-2)
    assert max(rates) == pytest.approx(1e-2)
    assert all(a >= b for a, b in zip(rates[9:], rates[10:], strict=False))
    assert rates[-1] > 1e-2 * 0.05 - 1e-12


def test_train_rejects_bad_input(grammar):
    model = small_model(grammar)
    with pytest.raises(TypeError, match="model must be a GPT1"):
        train(torch.nn.Linear(2, 2), grammar)
    with pytest.raises(TypeError, match="grammar must be a JapaneseGrammar"):
        train(model, "犬 が 河岸 を 歩く")
    with pytest.raises(ValueError, match="vocab_size"):
        train(GPT1(GPT1Config(vocab_size=10, n_ctx=20, d_model=8, n_layers=1, n_heads=2)), grammar)
    with pytest.raises(ValueError, match="n_ctx"):
        train(GPT1(corpus_model_config(grammar, n_ctx=5, d_model=8, n_heads=2)), grammar)
    with pytest.raises(ValueError, match="steps must be a positive int"):
        train(model, grammar, steps=0)
    with pytest.raises(ValueError, match="cpu_threads"):
        train(model, grammar, steps=1, cpu_threads=0)
    with pytest.raises(ValueError, match="checkpoints must be ints from 0 to steps=5"):
        train(model, grammar, steps=5, checkpoints=[6])
    with pytest.raises(TypeError, match="checkpoints must be a sequence"):
        train(model, grammar, steps=5, checkpoints=5)


def test_train_step_leaves_the_pad_targets_out_of_the_loss_and_the_gradient():
    """-L1 / N over the targets that are not <PAD>: the loss equals a sum over the real
    targets divided by their count, and the step moves the weights exactly as a loss
    computed from the real targets alone."""
    import copy

    from nbhelpers.experiments.pretraining import train_step

    torch.manual_seed(0)
    model = GPT1(GPT1Config(vocab_size=9, n_ctx=8, d_model=16, n_layers=1, n_heads=2))
    ids = torch.tensor([[1, 3, 5, 6, 2, 0, 0], [1, 4, 5, 7, 8, 6, 2]])  # 0 is <PAD>
    twin = copy.deepcopy(model)
    loss = train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), ids, pad_id=0)
    logits, targets = twin(ids[:, :-1]), ids[:, 1:]
    real = targets != 0
    by_hand = -F.log_softmax(logits, -1).gather(-1, targets[..., None])[..., 0][real].mean()
    assert torch.allclose(loss, by_hand.detach(), atol=1e-6)
    optimizer = torch.optim.SGD(twin.parameters(), lr=0.1)
    optimizer.zero_grad()
    by_hand.backward()
    optimizer.step()
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in
               zip(model.parameters(), twin.parameters(), strict=True))  # fmt: skip
