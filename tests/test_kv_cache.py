import pytest
import torch

from nbhelpers import GPT1, GPT1Config
from nbhelpers.inference import (
    check_cache_agrees,
    generate_with_cache,
    generate_without_cache,
)
from nbhelpers.kv_cache import KVCache

VOCAB = 23


def make_model(**overrides):
    torch.manual_seed(0)
    config = dict(vocab_size=VOCAB, n_ctx=24, d_model=16, n_layers=2, n_heads=4)
    return GPT1(GPT1Config(**{**config, **overrides}))


def prompt(n=5, batch=None):
    shape = (n,) if batch is None else (batch, n)
    return torch.randint(0, VOCAB, shape, generator=torch.Generator().manual_seed(1))


def test_cached_and_recomputed_generation_give_the_same_tokens():
    model = make_model()
    slow = generate_without_cache(model, prompt(), 12)
    fast = generate_with_cache(model, prompt(), 12)
    assert slow.shape == (17,)
    assert torch.equal(slow, fast)
    assert torch.equal(fast[:5], prompt())


def test_batched_generation_agrees_and_keeps_the_batch_axis():
    model = make_model()
    ids = prompt(4, batch=3)
    slow, slow_logits = generate_without_cache(model, ids, 6, return_logits=True)
    fast, fast_logits = generate_with_cache(model, ids, 6, return_logits=True)
    assert fast.shape == (3, 10)
    assert fast_logits.shape == (3, 6, VOCAB)
    assert torch.equal(slow, fast)
    torch.testing.assert_close(fast_logits, slow_logits, atol=1e-5, rtol=0)


def test_cached_logits_equal_the_full_forward_at_every_position():
    model = make_model().eval()
    ids = prompt(9, batch=1)
    cache = KVCache(model, batch=1, capacity=9)
    with torch.no_grad():
        full = model(ids)  # (1, 9, vocab)
        first = model(ids[:, :4], last_only=True, cache=cache)  # a prompt of 4, then 1 by 1
        steps = [model(ids[:, j : j + 1], last_only=True, cache=cache) for j in range(4, 9)]
    torch.testing.assert_close(first, full[:, 3], atol=1e-5, rtol=0)
    for j, logits in zip(range(4, 9), steps, strict=True):
        torch.testing.assert_close(logits, full[:, j], atol=1e-5, rtol=0)
    assert cache.length == 9


def test_check_cache_agrees_prints_and_returns_the_tokens(capsys):
    model = make_model()
    tokens = check_cache_agrees(model, prompt(), 8)
    assert tokens.shape == (13,)
    assert "OK" in capsys.readouterr().out


def test_generation_leaves_the_training_mode_as_it_was():
    model = make_model(dropout=0.5).train()
    slow = generate_without_cache(model, prompt(), 4)
    fast = generate_with_cache(model, prompt(), 4)
    assert torch.equal(slow, fast)  # dropout is off while generating
    assert model.training


def test_cache_memory_is_two_tensors_per_layer():
    model = make_model()
    cache = KVCache(model, batch=2, capacity=10)
    assert cache.nbytes == 2 * 2 * 2 * 10 * 16 * 4  # K and V, 2 layers, batch 2, 10 pos, d 16
    assert repr(cache) == "KVCache(layers=2, capacity=10)"


def test_prompt_plus_new_tokens_longer_than_the_context_is_named_with_a_cache():
    model = make_model()
    with pytest.raises(ValueError, match=r"max_new_tokens=20 .*n_ctx=24.*<= 19"):
        generate_with_cache(model, prompt(5), 20)
    # without a cache the window slides: the last n_ctx tokens are the context
    assert generate_without_cache(model, prompt(5), 20).shape == (25,)


@pytest.mark.parametrize("generate", [generate_with_cache, generate_without_cache])
def test_no_new_tokens_gives_the_prompt_back(generate):
    ids = prompt(5)
    assert torch.equal(generate(make_model(), ids, 0), ids)


@pytest.mark.parametrize("generate", [generate_with_cache, generate_without_cache])
@pytest.mark.parametrize(
    ("ids", "max_new_tokens", "message"),
    [
        (torch.tensor([1, 2, VOCAB]), 3, r"ids must lie in \[0, vocab_size=23\)"),
        (torch.tensor([1.0, 2.0]), 3, "ids must hold integer token ids"),
        (torch.zeros(2, 2, 3, dtype=torch.long), 3, r"ids must have shape \(n,\) or"),
        (torch.zeros(30, dtype=torch.long), 1, "n_ctx=24"),
        (torch.tensor([1, 2]), -1, "max_new_tokens must be an int >= 0"),
        (torch.tensor([1, 2]), 2.0, "max_new_tokens must be an int >= 0"),
    ],
)
def test_bad_input_names_the_argument(generate, ids, max_new_tokens, message):
    with pytest.raises(ValueError, match=message):
        generate(make_model(), ids, max_new_tokens)


def test_model_must_be_a_gpt1():
    with pytest.raises(TypeError, match="model must be a GPT1"):
        generate_with_cache(torch.nn.Linear(2, 2), prompt(), 2)


def test_several_new_tokens_after_a_cached_prefix_see_the_right_keys():
    # t > 1 queries after start > 0: the lower-right causal mask, not the kernel's is_causal
    model = make_model().eval()
    ids = prompt(9, batch=2)
    cache = KVCache(model, batch=2, capacity=9)
    with torch.no_grad():
        full = model(ids)
        model(ids[:, :3], cache=cache)
        rest = model(ids[:, 3:], cache=cache)
    torch.testing.assert_close(rest, full[:, 3:], atol=1e-5, rtol=0)


def test_a_cache_that_is_full_says_so():
    model = make_model().eval()
    cache = KVCache(model, batch=1, capacity=4)
    with torch.no_grad():
        model(prompt(4, batch=1), cache=cache)
        with pytest.raises(ValueError, match="the cache holds 4 positions, asked for 5"):
            model(prompt(1, batch=1), cache=cache)
