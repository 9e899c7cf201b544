import pytest
import torch
import torch.nn.functional as F

from nbhelpers import GPT1, GPT1Config
from nbhelpers.inference import generate, log_likelihood, next_token_distribution

VOCAB, N_CTX = 11, 8


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    model = GPT1(GPT1Config(vocab_size=VOCAB, n_ctx=N_CTX, d_model=16, n_layers=2, n_heads=2))
    with torch.no_grad():  # larger logits than the 0.02-std initialisation gives
        model.W_e.weight.mul_(40)
    return model.eval()


IDS = torch.tensor([1, 4, 7, 3])


def test_next_token_distribution_is_the_softmax_of_the_last_row(model):
    probs = next_token_distribution(model, IDS)
    reference = F.softmax(model(IDS)[-1], dim=-1)
    torch.testing.assert_close(probs, reference, rtol=0, atol=1e-6)
    assert probs.shape == (VOCAB,)
    batch = next_token_distribution(model, torch.stack([IDS, IDS.flip(0)]))
    assert batch.shape == (2, VOCAB)
    torch.testing.assert_close(batch[0], probs)


def test_temperature_and_top_k(model):
    logits = model(IDS)[-1]
    hot = next_token_distribution(model, IDS, temperature=2.0)
    torch.testing.assert_close(hot, F.softmax(logits / 2.0, dim=-1), rtol=0, atol=1e-6)
    top3 = next_token_distribution(model, IDS, top_k=3)
    kept = torch.topk(logits, 3).indices
    assert int((top3 > 0).sum()) == 3 and bool((top3[kept] > 0).all())
    torch.testing.assert_close(top3[kept], F.softmax(logits[kept], dim=-1), rtol=0, atol=1e-6)
    greedy = next_token_distribution(model, IDS, top_k=1, temperature=0.3)
    assert float(greedy[logits.argmax()]) == 1.0


def test_generate_greedy_is_repeated_argmax(model):
    out = generate(model, IDS, 3, top_k=1)
    assert out.shape == (7,) and torch.equal(out[:4], IDS)
    context = IDS
    for _ in range(3):
        context = torch.cat([context, model(context)[-1].argmax().view(1)])
    assert torch.equal(out, context)


def test_generate_is_reproducible_with_a_generator_and_crops_the_context(model):
    def sample(seed):
        return generate(model, IDS, 10, 5.0, generator=torch.Generator().manual_seed(seed))

    a = sample(5)
    assert torch.equal(a, sample(5)) and a.shape == (14,)  # over n_ctx = 8: a sliding window
    assert not torch.equal(a, sample(6))


def test_generate_stops_at_eos_and_fills_finished_rows(model):
    first = int(generate(model, IDS, 1, top_k=1)[-1])  # greedy's next token, used as "EOS"
    out = generate(model, IDS, 5, top_k=1, eos_id=first)
    assert out.tolist() == [*IDS.tolist(), first]
    batch = torch.stack([IDS, IDS])
    out = generate(model, batch, 4, eos_id=first, generator=torch.Generator().manual_seed(0))
    for row in out:
        hits = (row[4:] == first).nonzero()
        if len(hits):
            assert bool((row[4 + int(hits[0]) :] == first).all())


def test_log_likelihood_is_minus_n_times_mean_cross_entropy(model):
    ids = torch.tensor([1, 4, 7, 3, 9])
    L1 = log_likelihood(model, ids)
    logits = model(ids[:-1])
    cross_entropy = F.cross_entropy(logits, ids[1:])
    torch.testing.assert_close(-L1 / 4, cross_entropy, rtol=0, atol=1e-6)
    by_hand = sum(torch.log_softmax(logits[i], -1)[ids[i + 1]] for i in range(4))
    torch.testing.assert_close(L1, by_hand, rtol=0, atol=1e-5)
    L1.backward()  # differentiable: the training objective
    model.zero_grad()


def test_log_likelihood_ignores_padding(model):
    padded = torch.tensor([[1, 4, 7, 0, 0], [1, 4, 7, 3, 9]])
    L1 = log_likelihood(model, padded, pad_id=0)
    torch.testing.assert_close(L1[0], log_likelihood(model, torch.tensor([1, 4, 7])))
    torch.testing.assert_close(L1[1], log_likelihood(model, padded[1]))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: next_token_distribution(m, torch.tensor([1, VOCAB])), r"ids must lie in"),
        (lambda m: next_token_distribution(m, torch.tensor([-1, 2])), r"ids must lie in"),
        (lambda m: next_token_distribution(m, torch.ones(N_CTX + 1, dtype=torch.long)), "n_ctx"),
        (lambda m: next_token_distribution(m, IDS, temperature=0), "temperature must be"),
        (lambda m: next_token_distribution(m, IDS, temperature=-1.0), "temperature must be"),
        (lambda m: next_token_distribution(m, IDS, temperature=float("nan")), "temperature"),
        (lambda m: next_token_distribution(m, IDS, top_k=0), "top_k must be >= 1"),
        (lambda m: next_token_distribution(m, IDS, top_k=VOCAB + 1), "top_k must be <="),
        (lambda m: next_token_distribution(m, IDS.float()), "integer token ids"),
        (lambda m: generate(m, torch.ones(N_CTX + 1, dtype=torch.long), 2), "n_ctx"),
        (lambda m: generate(m, IDS, -1), "max_new_tokens must be an int >= 0"),
        (lambda m: generate(m, IDS, 2, temperature=0.0), "top_k=1"),
        (lambda m: generate(m, IDS, 2, top_k=0), "top_k"),
        (lambda m: generate(m, IDS, 2, eos_id=VOCAB), "eos_id"),
        (lambda m: log_likelihood(m, torch.tensor([1])), "at least 2 tokens"),
        (lambda m: log_likelihood(m, torch.tensor([1, 99])), "ids must lie in"),
    ],
)
def test_bad_input_raises_value_errors_naming_the_argument(model, call, message):
    with pytest.raises(ValueError, match=message):
        call(model)


def test_wrong_types_raise_type_errors(model):
    with pytest.raises(TypeError, match="model must be a GPT1"):
        next_token_distribution(torch.nn.Linear(2, 2), IDS)
    with pytest.raises(TypeError, match="top_k must be an int"):
        next_token_distribution(model, IDS, top_k=2.5)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        generate(model, IDS, 1, generator=3)
    with pytest.raises(TypeError, match="ids must be a torch.Tensor"):
        next_token_distribution(model, [1, 2])


def test_inference_leaves_the_models_mode_alone(model):
    model.train()
    next_token_distribution(model, IDS)
    assert model.training
    model.eval()
