import math

import pytest
import torch
import torch.nn.functional as F
from matplotlib.figure import Figure

from nbhelpers import GPT1, GPT1Config
from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.figures import training_figure
from nbhelpers.training import (
    HeldOut,
    corpus_model_config,
    evaluate,
    learning_rate,
    make_heldout,
    train,
)


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
