import pytest
import torch

from nbhelpers import GPT1, CausalityExplorer, GPT1Config

VOCAB = ["犬", "猫", "が", "河岸", "公園", "を", "歩く"]
SENTENCE = ["犬", "が", "河岸", "を", "歩く"]


def make_model() -> GPT1:
    torch.manual_seed(0)
    config = GPT1Config(vocab_size=len(VOCAB), n_ctx=8, d_model=16, n_layers=3, n_heads=2)
    return GPT1(config)


def make_explorer(**kwargs) -> CausalityExplorer:
    return CausalityExplorer(make_model(), VOCAB, SENTENCE, **kwargs)


def test_earlier_positions_do_not_move_in_any_layer():
    explorer = make_explorer(replacement="公園")
    assert explorer.png().startswith(b"\x89PNG")
    movement = explorer.movement()
    assert movement.shape == (4, 5)  # h_0 .. h_3, five positions
    assert torch.all(movement[:, :2] == 0)
    assert torch.all(movement[1:, 2:] > 0)
    assert "positions 0–1 did not move at all" in explorer.readout.value  # counted from 0
    assert "Changing position 2 " in explorer.readout.value
    assert "河岸→公園" in explorer.readout.value


def test_without_the_mask_the_change_leaks_backwards_and_the_model_is_restored():
    explorer = make_explorer()
    before_png = explorer.png()
    explorer.causal.value = False
    assert explorer.png() != before_png
    assert torch.all(explorer.movement()[1:, :2] > 0)
    assert "moved too" in explorer.readout.value
    assert all(block.attn.causal for block in explorer.model.blocks)


def test_choosing_a_position_never_replaces_a_token_by_itself():
    explorer = make_explorer(replacement="犬")
    explorer.position.value = 0  # 犬 at position 0: the replacement must change
    assert explorer.replacement.value != VOCAB.index("犬")
    assert explorer.movement()[0, 0] > 0
    assert "no earlier position" in explorer.readout.value


def test_repr_is_short_and_stable_whatever_the_controls_say():
    explorer = make_explorer()
    expected = "CausalityExplorer(5 positions, 3 blocks)"
    for position in (1, 3):
        explorer.position.value = position
        assert repr(explorer) == expected


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        ((None, VOCAB, SENTENCE), {}, TypeError, "model must be a GPT1"),
        (("model", VOCAB[:3], SENTENCE), {}, ValueError, "vocab has 3 tokens"),
        (("model", VOCAB, ["犬", "狐"]), {}, ValueError, r"unknown: \['狐'\]"),
        (("model", VOCAB, ["犬"] * 9), {}, ValueError, "sentence must be 1 to n_ctx=8"),
        (
            ("model", VOCAB, SENTENCE),
            {"position": 5},
            ValueError,
            "position must be an int from 0 to 4",
        ),
        (("model", VOCAB, SENTENCE), {"position": -1}, ValueError, "position must be an int"),
        (("model", VOCAB, SENTENCE), {"replacement": "狐"}, ValueError, "replacement must be"),
    ],
)
def test_bad_input_is_named(args, kwargs, error, message):
    args = tuple(make_model() if a == "model" else a for a in args)
    with pytest.raises(error, match=message):
        CausalityExplorer(*args, **kwargs)


def test_the_explorer_leaves_the_callers_model_as_it_was():
    from nbhelpers import GPT1, CausalityExplorer, GPT1Config

    torch.manual_seed(0)
    vocab = ["a", "b", "c", "d"]
    model = GPT1(GPT1Config(vocab_size=4, n_ctx=6, d_model=8, n_layers=2, n_heads=2)).train()
    explorer = CausalityExplorer(model, vocab, ["a", "b", "c", "d"], position=1)
    explorer.causal.value = False
    assert all(block.attn.causal for block in model.blocks)  # never flipped
    assert model.training  # its mode is the caller's
    moved = explorer.movement()
    assert moved[1:, 0].max() > 0  # without the mask the change leaks backwards
    explorer.causal.value = True
    assert explorer.movement()[:, 0].max() == 0


def test_hidden_states_of_every_layer_end_with_h_L():
    from nbhelpers import GPT1, GPT1Config

    torch.manual_seed(0)
    model = GPT1(GPT1Config(vocab_size=5, n_ctx=6, d_model=8, n_layers=3, n_heads=2)).eval()
    ids = torch.tensor([[1, 2, 3, 4]])
    states = model.hidden_states(ids, every_layer=True)
    assert states.shape == (4, 1, 4, 8)
    torch.testing.assert_close(states[-1], model.hidden_states(ids))
    torch.testing.assert_close(states[0], model.embed(ids))
