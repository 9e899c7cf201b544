"""Notebook 07's architecture pictures and the deep-stack measurement behind its section on
residual connections and LayerNorm."""

import warnings

import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.figure import Figure
from matplotlib.text import Text

from nbhelpers.experiments.deep_stack import (
    MAX_DEPTH,
    VARIANTS,
    block_forward,
    compare_stacks,
    cosines,
    deep_stack,
    profile_stack,
    rms,
    scaled_norm,
)
from nbhelpers.figures.architecture import gpt1_block_figure, transformer_vs_gpt1_figure
from nbhelpers.figures.canvas import figure_to_png
from nbhelpers.figures.deep_stack import deep_stack_figure
from nbhelpers.gpt1 import GPT1, GPT1Block, GPT1Config


@pytest.fixture(scope="module")
def profiles():
    return compare_stacks(depth=24, seed=0)


def texts(figure: Figure) -> list[Text]:
    return [t for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()]


def text_strings(figure: Figure) -> list[str]:
    return [t.get_text() for t in texts(figure)]


BUILDERS = {
    "gpt1_block_figure": gpt1_block_figure,
    "transformer_vs_gpt1_figure": transformer_vs_gpt1_figure,
    "deep_stack_figure": lambda: deep_stack_figure(compare_stacks(depth=6)),
}


@pytest.mark.parametrize("build", BUILDERS.values(), ids=BUILDERS.keys())
def test_builders_return_pure_figures_at_100_dpi_with_legible_text(build):
    before = plt.get_fignums()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a glyph missing from the font is a UserWarning
        figure = build()
        png = figure_to_png(figure)
    assert isinstance(figure, Figure)
    assert plt.get_fignums() == before  # nothing went through pyplot's state
    assert figure.dpi >= 100
    assert png.startswith(b"\x89PNG")
    small = [(t.get_text(), t.get_fontsize()) for t in texts(figure) if t.get_fontsize() < 9]
    assert not small, f"texts under 9 pt: {small}"


def gpt1_part_names(model: GPT1) -> set[str]:
    """The attribute names of GPT1's parts and of one block's, read from the instance."""
    block = model.blocks[0]
    return {
        *(name for name, _ in model.named_children()),
        *(name for name, _ in model.named_parameters(recurse=False)),
        *(name for name, _ in block.named_children()),
        type(block).__name__,
    }


def test_the_block_diagram_labels_every_part_with_the_code_s_own_name():
    config = GPT1Config(vocab_size=9, n_ctx=8, d_model=16, n_layers=2, n_heads=2)
    model = GPT1(config).eval()
    names = gpt1_part_names(model)
    assert {"W_e", "W_p", "blocks", "attn", "ln_1", "ffn", "ln_2", "dropout"} <= names
    labels = set(text_strings(gpt1_block_figure()))
    missing = names - labels
    assert not missing, f"the diagram does not name {sorted(missing)}"
    # the output layer drawn as W_e.weight.T is what forward computes
    assert "W_e.weight.T" in labels
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert torch.equal(model(ids), model.hidden_states(ids) @ model.W_e.weight.T)


def test_the_block_diagram_draws_post_ln_layernorm_after_each_addition():
    figure = gpt1_block_figure()
    height = {t.get_text(): t.get_position()[1] for t in texts(figure)}
    additions = sorted(t.get_position()[1] for t in texts(figure) if t.get_text() == "+")
    assert len(additions) == 3  # the embedding sum and one per sublayer
    _, after_attn, after_ffn = additions
    order = [
        height["W_e"], height["attn"], after_attn, height["ln_1"], height["ffn"], after_ffn,
        height["ln_2"], height["W_e.weight.T"],
    ]  # fmt: skip
    assert order == sorted(order), "bottom to top: attn, +, ln_1, ffn, +, ln_2"


def test_the_stacks_show_cross_attention_in_the_translator_only():
    labels = text_strings(transformer_vs_gpt1_figure())
    assert labels.count("cross-attention") == 1
    assert labels.count("no cross-attention") == 1
    assert labels.count("masked self-attention") == 2  # the decoder and GPT-1
    assert labels.count("self-attention") == 1  # the encoder's, unmasked
    assert labels.count("feed-forward (FFN)") == 3
    assert labels.count("add & LayerNorm") == 2 + 3 + 2


def test_block_forward_with_both_switches_is_the_gpt1_block():
    torch.manual_seed(0)
    block = GPT1Block(16, 2, 64).eval()
    h = torch.randn(2, 5, 16)
    with torch.no_grad():
        assert torch.equal(block_forward(block, h), block(h))
        plain = block_forward(block, h, residual=False, layer_norm=False)
        assert torch.equal(plain, block.ffn(block.attn(h)))


def test_the_stack_is_initialised_as_gpt1_in_float64():
    blocks = deep_stack(4, 32, 4, generator=torch.Generator().manual_seed(0))
    weights = torch.cat([b.attn.W_Q.weight.detach().flatten() for b in blocks])
    assert weights.dtype == torch.float64
    assert abs(float(weights.std()) - 0.02) < 0.002
    assert all(float(b.ffn[0].bias.detach().abs().max()) == 0.0 for b in blocks)


def test_the_stack_leaves_torch_s_global_generator_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    compare_stacks(depth=3)
    assert torch.equal(torch.rand(3), expected)


def test_norms_survive_numbers_whose_squares_underflow():
    x = torch.tensor([3e-200, 4e-200], dtype=torch.float64)
    assert torch.linalg.vector_norm(x) == 0  # the naive norm underflows
    assert torch.isclose(scaled_norm(x), torch.tensor(5e-200, dtype=torch.float64))
    assert torch.isclose(rms(x), torch.tensor(5e-200 / 2**0.5, dtype=torch.float64))
    assert scaled_norm(torch.zeros(3)) == 0
    y = torch.randn(4, 5, dtype=torch.float64)
    assert torch.isclose(scaled_norm(y), torch.linalg.vector_norm(y))


def test_the_profile_matches_an_ordinary_backward_pass_through_gpt1_blocks():
    generator = torch.Generator().manual_seed(3)
    blocks = deep_stack(3, 16, 2, generator=generator)
    h_0 = torch.randn(2, 5, 16, generator=generator, dtype=torch.float64)
    target = torch.randn(2, 5, 16, generator=generator, dtype=torch.float64)
    profile = profile_stack(blocks, h_0, target, name="GPT-1", residual=True, layer_norm=True)
    h, states = h_0.clone().requires_grad_(), []
    states.append(h)
    for block in blocks:
        h = block(h)
        h.retain_grad()
        states.append(h)
    torch.nn.functional.mse_loss(h, target).backward()
    expected = torch.stack([
        torch.linalg.vector_norm(torch.cat([
            linear.weight.grad.flatten()
            for linear in (b.attn.W_Q, b.attn.W_K, b.attn.W_V, b.attn.W_O, b.ffn[0], b.ffn[2])
        ]))
        for b in blocks
    ])  # fmt: skip
    assert torch.allclose(profile.weight_gradient, expected, rtol=1e-10, atol=0)
    upstream = torch.stack([torch.linalg.vector_norm(s.grad) for s in states])
    assert torch.allclose(profile.upstream_gradient, upstream, rtol=1e-10, atol=0)
    activations = torch.stack([s.detach().pow(2).mean().sqrt() for s in states])
    assert torch.allclose(profile.activation_rms, activations, rtol=1e-10, atol=0)


def test_compare_stacks_is_seeded_and_measures_every_layer(profiles):
    again = compare_stacks(depth=24, seed=0)
    other = compare_stacks(depth=24, seed=1)
    assert [p.name for p in profiles] == [name for name, *_ in VARIANTS]
    for first, second, third in zip(profiles, again, other, strict=True):
        assert torch.equal(first.weight_gradient, second.weight_gradient)
        assert not torch.equal(first.weight_gradient, third.weight_gradient)
        assert first.depth == 24
        assert first.activation_rms.shape == first.upstream_gradient.shape == (25,)


def test_residuals_keep_every_layer_s_gradient_and_the_plain_stack_loses_it(profiles):
    plain, residual, norm_only, gpt1, _ = profiles
    for profile in (residual, gpt1):
        weights, upstream = profile.weight_gradient, profile.upstream_gradient
        # every block gets about the same weight gradient, the first as much as the last
        assert float(weights.max() / weights.min()) < 1.5
        assert 0.5 < float(upstream[0] / upstream[-1]) < 2.0
        assert 0.5 < float(profile.activation_rms.min()) <= float(profile.activation_rms.max()) < 2
    # plain: forward and backward signals vanish, ~1e-4 per block; so do all weight gradients
    assert float(plain.activation_rms[-1]) < 1e-50
    assert float(plain.upstream_gradient[0] / plain.upstream_gradient[-1]) < 1e-50
    assert float(plain.weight_gradient.max()) < 1e-50
    # LayerNorm alone restores the forward scale but not an even gradient
    assert 0.5 < float(norm_only.activation_rms.min())
    assert float(norm_only.weight_gradient.max() / norm_only.weight_gradient.min()) > 2.0


def test_layernorm_alone_keeps_the_size_but_not_the_content(profiles):
    _, residual, norm_only, gpt1, gpt2 = profiles
    # every position ends as the same vector, and nothing of its own input is left
    assert float(norm_only.position_cosine) > 0.999
    assert abs(float(norm_only.input_cosine)) < 0.1
    for profile in (residual, gpt1, gpt2):  # a residual keeps each position's own input
        assert float(profile.position_cosine) < 0.1
        assert float(profile.input_cosine) > 0.95


def test_the_cosines_against_a_direct_computation():
    output = torch.tensor([[[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]]])
    h_0 = torch.tensor([[[2.0, 0.0], [0.0, -1.0], [1.0, 1.0]]])
    between, own = cosines(output, h_0)
    assert torch.allclose(between, torch.tensor((0.0 + 2**-0.5 + 2**-0.5) / 3))
    assert torch.allclose(own, torch.tensor((1.0 - 1.0 + 1.0) / 3))
    # no floor on the lengths: the plain stack's outputs are about 1e-92 long
    tiny = cosines(output.double() * 1e-92, h_0.double())
    assert torch.allclose(tiny[0], between.double()) and torch.allclose(tiny[1], own.double())


def test_with_wider_weights_only_layernorm_keeps_the_residual_stream_in_scale():
    plain, residual, norm_only, gpt1, _ = compare_stacks(depth=24, seed=0, init_std=0.1)
    assert float(residual.activation_rms[-1]) > 5.0  # the additions pile up
    assert float(residual.upstream_gradient[0] / residual.upstream_gradient[-1]) > 10.0
    for profile in (norm_only, gpt1):
        assert 0.5 < float(profile.activation_rms[1:].min())
        assert float(profile.activation_rms.max()) < 2.0
    assert 0.5 < float(gpt1.upstream_gradient[0] / gpt1.upstream_gradient[-1]) < 2.0
    assert gpt1.init_std == 0.1


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"depth": 0}, ValueError, "depth must be a positive int, got 0"),
        ({"depth": True}, ValueError, "depth must be a positive int, got True"),
        ({"depth": 2.0}, ValueError, "depth must be a positive int, got 2.0"),
        ({"depth": MAX_DEPTH + 1}, ValueError, f"depth must be at most {MAX_DEPTH}"),
        ({"d_model": 30, "n_heads": 4}, ValueError, "d_model=30 is not divisible by n_heads=4"),
        ({"n_tokens": 0}, ValueError, "n_tokens must be a positive int"),
        ({"batch": -1}, ValueError, "batch must be a positive int"),
        ({"seed": -1}, ValueError, r"seed must be an int in \[0, 2\*\*32\)"),
        ({"init_std": 0.0}, ValueError, "init_std must be a positive number, got 0.0"),
        ({"init_std": "0.02"}, ValueError, "init_std must be a positive number, got '0.02'"),
    ],
)
def test_bad_stack_sizes_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        compare_stacks(**kwargs)


def test_each_wiring_keeps_its_colour_when_drawn_alone(profiles):
    from matplotlib.colors import to_hex

    from nbhelpers.figures.deep_stack import STYLES

    gpt1 = profiles[3]
    figure = deep_stack_figure([gpt1])  # one variant: a range of about one decade
    colours = {to_hex(line.get_color()) for ax in figure.axes for line in ax.get_lines()}
    assert colours == {STYLES[(True, True, False)]["color"]}
    assert figure_to_png(figure).startswith(b"\x89PNG")


def test_gpt1_block_norm_first_puts_each_layernorm_before_its_sublayer():
    torch.manual_seed(0)
    post = GPT1Block(8, 2, 32).eval()
    pre = GPT1Block(8, 2, 32, norm_first=True).eval()
    pre.load_state_dict(post.state_dict())  # the same weights, the other wiring
    h = torch.randn(2, 5, 8)
    with torch.no_grad():
        inner = h + post.attn(post.ln_1(h))  # GPT-2's order, written out
        expected = inner + post.ffn(post.ln_2(inner))
        assert torch.allclose(pre(h), expected, atol=1e-6)
        assert torch.allclose(block_forward(post, h), post(h), atol=1e-6)  # GPT-1's forward


def test_a_final_layernorm_passes_back_one_over_root_two_of_the_output_gradient(profiles):
    # At initialisation both stacks that end in a LayerNorm, GPT-1's post-LN and GPT-2's
    # pre-LN with its final LayerNorm, pass back about 1/√2 of what the loss sends: the
    # LayerNorm removes the gradient's component along its input, about half of a random
    # target's mean squared error. The residual-only stack, with no LayerNorm, passes all.
    by_name = {p.name: p for p in profiles}
    for name in ("residual + LayerNorm (GPT-1)", "pre-LN + final LayerNorm (GPT-2)"):
        ratio = float(by_name[name].upstream_gradient[0] / by_name[name].output_gradient)
        assert abs(ratio - 2**-0.5) < 0.02, (name, ratio)
    residual = by_name["residual only"]
    assert abs(float(residual.upstream_gradient[0] / residual.output_gradient) - 1) < 0.05
    gpt2 = by_name["pre-LN + final LayerNorm (GPT-2)"]
    assert gpt2.pre_ln and float(gpt2.weight_gradient.max() / gpt2.weight_gradient.min()) < 2.0


def test_bad_switches_blocks_and_profiles_are_named(profiles):
    block = GPT1Block(8, 2, 32)
    h = torch.randn(3, 8)
    with pytest.raises(TypeError, match="residual must be True or False, got 1"):
        block_forward(block, h, residual=1)
    with pytest.raises(TypeError, match="block must be a GPT1Block, got Linear"):
        block_forward(torch.nn.Linear(8, 8), h)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        deep_stack(2, generator=0)
    with pytest.raises(ValueError, match="profiles must be a non-empty list"):
        deep_stack_figure([])
    with pytest.raises(TypeError, match="profiles must hold StackProfile"):
        deep_stack_figure([1.0])
    with pytest.raises(ValueError, match=r"the same depth, got depths \[6, 24\]"):
        deep_stack_figure([profiles[0], compare_stacks(depth=6)[0]])
