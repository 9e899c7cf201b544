import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nbhelpers import (
    GPT1,
    GPT1Block,
    GPT1Config,
    MultiHeadAttention,
    one_hot,
    padding_mask,
    parameter_breakdown,
)
from nbhelpers.exercises.references import reference_layer
from nbhelpers.support.validation import check_token_ids

# GPT-1's "117M": 12 x 768, 12 heads, 512 positions, 40,478 BPE tokens, counted in the tensors
# of a model built with those sizes (below) and by the formula of GPT1Config.parameter_count
PAPER_PARAMETERS = 116_534_784


def tiny_config(**overrides) -> GPT1Config:
    settings = dict(vocab_size=11, n_ctx=8, d_model=16, n_layers=3, n_heads=4)
    return GPT1Config(**(settings | overrides))


def tiny_model(seed: int = 0, **overrides) -> GPT1:
    torch.manual_seed(seed)
    return GPT1(tiny_config(**overrides)).eval()


# --- one_hot and the embedding lookup ---------------------------------------------------


def test_one_hot_rows_have_a_single_one_in_the_tokens_column():
    ids = torch.tensor([[3, 0, 2], [1, 1, 4]])
    U = one_hot(ids, 5)
    assert U.shape == (2, 3, 5) and U.dtype == torch.float32
    assert torch.equal(U.sum(-1), torch.ones(2, 3))
    assert torch.equal(U.argmax(-1), ids)
    assert torch.equal(U, F.one_hot(ids, 5).float())
    assert one_hot(ids, 5, dtype=torch.float64).dtype == torch.float64


def test_worked_example_picks_rows_3_2_5_of_W_e():
    # The theory numbers tokens from 1: tokens 3, 2, 5 are Python ids 2, 1, 4.
    W_e = torch.arange(1.0, 16.0).reshape(5, 3)  # row r (1-based) holds 3r-2, 3r-1, 3r
    U = one_hot(torch.tensor([3, 2, 5]) - 1, 5)
    assert torch.equal(U, torch.tensor([[0.0, 0, 1, 0, 0], [0.0, 1, 0, 0, 0], [0.0, 0, 0, 0, 1]]))
    assert U.shape == (3, 5)
    assert torch.equal(U @ W_e, torch.stack([W_e[2], W_e[1], W_e[4]]))


def test_one_hot_product_equals_indexing_and_nn_embedding():
    generator = torch.Generator().manual_seed(0)
    W_e = torch.randn(50, 8, generator=generator)
    ids = torch.randint(0, 50, (2, 7), generator=generator)
    embedding = nn.Embedding(50, 8)
    with torch.no_grad():
        embedding.weight.copy_(W_e)
    by_product = one_hot(ids, 50) @ W_e
    assert torch.allclose(by_product, W_e[ids], atol=1e-6, rtol=0)
    assert torch.allclose(by_product, embedding(ids), atol=1e-6, rtol=0)


def test_embed_is_the_one_hot_product_plus_positions():
    model = tiny_model()
    ids = torch.tensor([[1, 5, 5, 0]])
    U = one_hot(ids, model.config.vocab_size)
    expected = U @ model.W_e.weight + model.W_p[:4]
    assert torch.allclose(model.embed(ids), expected, atol=1e-6, rtol=0)
    # Token 5 twice: the same row of W_e, two different rows of h_0 thanks to W_p.
    h0 = model.embed(ids)[0]
    assert not torch.allclose(h0[1], h0[2])


# --- tied weights -------------------------------------------------------------------------


def test_output_layer_is_the_embedding_matrix_not_a_copy():
    model = tiny_model()
    assert sum(p.data_ptr() == model.W_e.weight.data_ptr() for p in model.parameters()) == 1
    ids = torch.tensor([[1, 2, 3]])
    logits = model(ids)
    h = model.hidden_states(ids)
    assert torch.allclose(logits, h @ model.W_e.weight.T, atol=1e-6, rtol=0)
    # Changing W_e in place changes the output layer too: they are one tensor.
    with torch.no_grad():
        model.W_e.weight[7].zero_()
    assert torch.all(model(ids)[..., 7] == 0)


def test_gradients_of_input_and_output_use_flow_into_one_tensor():
    model = tiny_model()
    ids = torch.tensor([[1, 2, 3, 4]])
    logits = model(ids)
    F.cross_entropy(logits[0, :-1], ids[0, 1:]).backward()
    grad = model.W_e.weight.grad
    assert grad is not None
    # Token 9 never occurs in the input, so its row gets gradient only from the output layer.
    assert grad[9].abs().sum() > 0
    # ...and the input rows get both contributions in the same .grad tensor.
    assert grad[1].abs().sum() > 0


# --- the block and the stack ---------------------------------------------------------------


def test_block_matches_a_post_ln_transformer_layer_with_a_causal_mask():
    torch.manual_seed(0)
    block = GPT1Block(d_model=32, n_heads=4, d_ff=128).eval()

    reference = reference_layer(block, n_heads=4)  # the same weights in torch's own layer
    x = torch.randn(2, 6, 32)
    mask = nn.Transformer.generate_square_subsequent_mask(6)
    with torch.no_grad():
        assert torch.allclose(block(x), reference(x, src_mask=mask), atol=1e-5, rtol=0)


def test_hidden_states_stack_the_blocks():
    model = tiny_model()
    ids = torch.tensor([[0, 3, 6, 9]])
    h = model.embed(ids)
    for block in model.blocks:
        h = block(h)
        assert h.shape == (1, 4, 16)
    assert torch.allclose(model.hidden_states(ids), h, atol=1e-6, rtol=0)


@pytest.mark.parametrize("changed", [1, 3, 5])
def test_changing_a_later_token_leaves_earlier_logits_unchanged(changed):
    model = tiny_model()
    ids = torch.tensor([[1, 2, 3, 4, 5, 6]])
    perturbed = ids.clone()
    perturbed[0, changed] = 10
    with torch.no_grad():
        before, after = model(ids), model(perturbed)
    assert torch.allclose(before[:, :changed], after[:, :changed], atol=1e-6, rtol=0)
    assert not torch.allclose(before[:, changed:], after[:, changed:], atol=1e-3)


def test_last_only_equals_the_last_row_of_the_full_output():
    model = tiny_model()
    ids = torch.tensor([[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]])
    with torch.no_grad():
        full, last = model(ids), model(ids, last_only=True)
    assert last.shape == (2, 11)
    assert torch.allclose(last, full[:, -1], atol=1e-6, rtol=0)


def test_a_single_unbatched_sentence_works():
    model = tiny_model()
    assert model(torch.tensor([1, 2, 3])).shape == (3, 11)


def test_dropout_is_off_in_eval_mode_and_on_in_training():
    model = tiny_model(dropout=0.5)
    ids = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        assert torch.equal(model(ids), model(ids))
        model.train()
        assert not torch.equal(model(ids), model(ids))


# --- parameter counts ----------------------------------------------------------------------


def test_paper_configuration_has_116_5_million_parameters():
    config = GPT1Config.paper()
    assert (config.n_layers, config.d_model, config.n_heads) == (12, 768, 12)
    assert (config.n_ctx, config.vocab_size, config.ff_width) == (512, 40478, 3072)
    assert config.parameter_count() == PAPER_PARAMETERS
    # The published "117M" is this count rounded to the nearest million.
    with torch.device("meta"):  # shapes only: 470 MB of weights are not needed to count them
        model = GPT1(config)
    assert sum(p.numel() for p in model.parameters()) == PAPER_PARAMETERS
    breakdown = parameter_breakdown(model)
    assert sum(breakdown.values()) == PAPER_PARAMETERS
    assert breakdown["W_e token embedding (also the output layer)"] == 40478 * 768
    assert breakdown["W_p position embedding"] == 512 * 768


def test_formula_count_matches_the_model_for_other_shapes():
    for config in (tiny_config(), tiny_config(d_ff=40), GPT1Config.small(30)):
        model = GPT1(config)
        assert config.parameter_count() == sum(p.numel() for p in model.parameters())
        assert sum(parameter_breakdown(model).values()) == config.parameter_count()


def test_small_configuration():
    config = GPT1Config.small(40)
    assert (config.vocab_size, config.n_ctx, config.d_model) == (40, 32, 64)
    assert (config.n_layers, config.n_heads, config.ff_width) == (2, 4, 256)


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ids", "error", "message"),
    [
        (torch.tensor([[1, 11]]), ValueError, r"ids must lie in \[0, vocab_size=11\)"),
        (torch.tensor([[-1, 2]]), ValueError, r"ids must lie in \[0, vocab_size=11\)"),
        (torch.tensor([[1.0, 2.0]]), ValueError, "ids must hold integer token ids"),
        (torch.tensor([[True, False]]), ValueError, "ids must hold integer token ids"),
        (torch.arange(9)[None], ValueError, "ids has 9 positions .* n_ctx=8"),
        (torch.zeros(1, 0, dtype=torch.long), ValueError, r"ids must have shape \(\.\.\., n\)"),
        ([[1, 2]], TypeError, "ids must be a torch.Tensor"),
    ],
)
def test_bad_ids_are_named(ids, error, message):
    model = tiny_model()
    with pytest.raises(error, match=message):
        model(ids)
    with pytest.raises(error, match=message):
        model.embed(ids)


def test_ids_on_another_device_are_named():
    model = tiny_model().to("meta")  # a device every machine has, so the test runs anywhere
    with pytest.raises(ValueError, match="ids must be on the model's device meta, got cpu"):
        model(torch.tensor([[1, 2]]))


def test_bad_mask_is_named():
    model = tiny_model()
    with pytest.raises(ValueError, match="mask of shape"):
        model(torch.tensor([[1, 2, 3]]), mask=torch.zeros(2, 2))


@pytest.mark.parametrize(
    ("ids", "vocab_size", "message"),
    [
        (torch.tensor([5]), 5, r"ids must lie in \[0, vocab_size=5\)"),
        (torch.tensor([0.0]), 5, "ids must hold integer token ids"),
        (torch.tensor([0]), 0, "vocab_size must be a positive int"),
        (torch.tensor([0]), 2.0, "vocab_size must be a positive int"),
        (torch.tensor([0]), True, "vocab_size must be a positive int"),
    ],
)
def test_bad_one_hot_input_is_named(ids, vocab_size, message):
    with pytest.raises(ValueError, match=message):
        one_hot(ids, vocab_size)


def test_one_hot_wants_a_floating_dtype():
    with pytest.raises(ValueError, match="dtype must be a floating-point"):
        one_hot(torch.tensor([0]), 3, dtype=torch.long)


def test_check_token_ids_names_the_argument_it_is_given():
    with pytest.raises(ValueError, match="prefix has 4 positions"):
        check_token_ids(torch.arange(4), 10, n_ctx=3, name="prefix")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"vocab_size": 0}, "vocab_size must be a positive int"),
        ({"vocab_size": 10.0}, "vocab_size must be a positive int"),
        ({"n_ctx": -1}, "n_ctx must be a positive int"),
        ({"d_model": True}, "d_model must be a positive int"),
        ({"n_layers": 0}, "n_layers must be a positive int"),
        ({"n_heads": 0}, "n_heads must be a positive int"),
        ({"n_heads": 3}, "d_model=16 is not divisible by n_heads=3"),
        ({"d_ff": 0}, "d_ff must be a positive int or None"),
        ({"d_ff": True}, "d_ff must be a positive int or None"),
        ({"d_ff": 64.0}, "d_ff must be a positive int or None"),
        ({"dropout": 1.0}, r"dropout must be in \[0, 1\)"),
        ({"dropout": -0.1}, r"dropout must be in \[0, 1\)"),
        ({"dropout": "0.1"}, r"dropout must be in \[0, 1\)"),
        ({"dropout": float("nan")}, r"dropout must be in \[0, 1\)"),
    ],
)
def test_bad_config_values_are_named(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny_config(**overrides)


def test_model_wants_a_config():
    with pytest.raises(TypeError, match="config must be a GPT1Config"):
        GPT1({"vocab_size": 10})
    with pytest.raises(TypeError, match="model must be a GPT1"):
        parameter_breakdown(nn.Linear(2, 2))


# --- the fast path --------------------------------------------------------------------------


def test_a_causal_forward_leaves_the_mask_to_the_kernel(monkeypatch):
    calls = []
    real = torch.nn.functional.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", spy)
    model = GPT1(GPT1Config(vocab_size=11, n_ctx=8, d_model=16, n_layers=2, n_heads=4)).eval()
    with torch.no_grad():
        model(torch.tensor([[1, 2, 3, 4, 5]]))
    assert len(calls) == 2  # one per block
    assert all(c.get("attn_mask") is None and c.get("is_causal") is True for c in calls)


def test_a_padding_mask_still_combines_with_the_causal_mask():
    model = GPT1(GPT1Config(vocab_size=11, n_ctx=8, d_model=16, n_layers=1, n_heads=4)).eval()
    ids = torch.tensor([[1, 2, 3, 0, 0], [1, 4, 5, 6, 7]])
    pad = padding_mask([3, 5], 5)
    with torch.no_grad():
        padded = model(ids, pad)
        alone = model(ids[:1, :3])  # the first sentence without its padding
    torch.testing.assert_close(padded[:1, :3], alone, atol=1e-6, rtol=0)


def test_the_paper_configuration_has_gpt1s_dropout_everywhere_gpt1_put_it():
    with torch.device("meta"):
        model = GPT1(GPT1Config.paper())
    assert model.config.dropout == 0.1
    assert model.dropout.p == 0.1  # the embeddings
    block = model.blocks[0]
    assert block.dropout.p == 0.1 and block.attn.dropout == 0.1  # residuals, attention weights
    assert isinstance(block.ffn[1], nn.GELU) and block.ffn[1].approximate == "tanh"


def test_attention_dropout_acts_while_training_only():
    torch.manual_seed(0)
    attn = MultiHeadAttention(16, 4, causal=True, dropout=0.5)
    x = torch.randn(2, 5, 16)
    attn.train()
    assert not torch.equal(attn(x), attn(x))
    attn.eval()
    assert torch.equal(attn(x), attn(x))
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\), got 1.5"):
        MultiHeadAttention(16, 4, dropout=1.5)
