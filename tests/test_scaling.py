import pytest
import torch

from nbhelpers import AttentionMemoryExplorer
from nbhelpers.figures.scaling import loglog_figure
from nbhelpers.memory import attention_memory
from nbhelpers.statistics import fitted_slope


def test_attention_memory_counts_the_matrices_each_path_holds():
    sizes = attention_memory(1024, heads=4, d_k=64)
    matrix, output = 4 * 1024 * 1024 * 4, 4 * 1024 * 64 * 4
    assert sizes["(a) from scratch"] == 3 * matrix + output
    assert sizes["(c) sdpa[math]"] == 2 * matrix + output
    assert sizes["(b)/(c) flash"] == output + 4 * 1024 * 4
    half = attention_memory(1024, heads=4, d_k=64, dtype=torch.float16)
    assert half["(a) from scratch"] * 2 == sizes["(a) from scratch"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "n must be a positive int"),
        ({"n": 8, "heads": 1.5}, "heads must be a positive int"),
        ({"n": 8, "dtype": torch.int64}, "dtype must be a floating-point torch.dtype"),
    ],
)
def test_attention_memory_names_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        attention_memory(**kwargs)


def test_memory_explorer_redraws_on_each_control():
    explorer = AttentionMemoryExplorer()
    for control, value in ((explorer.n, 65536), (explorer.heads, 1), (explorer.dtype, "float16")):
        before_png, before_text = explorer.png(), explorer.readout.value
        control.value = value
        assert explorer.png() != before_png
        assert explorer.readout.value != before_text
    assert "does <b>not</b> fit" not in explorer.readout.value  # 1 head, float16, n = 65536
    explorer.heads.value = 32
    assert "does <b>not</b> fit" in explorer.readout.value
    assert repr(explorer) == "AttentionMemoryExplorer()"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 1000}, "n must be a power of two"),
        ({"dtype": "float64"}, "dtype must be one of"),
        ({"heads": 0}, "heads must be a positive int"),
    ],
)
def test_memory_explorer_names_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AttentionMemoryExplorer(**kwargs)


def test_fitted_slope_and_loglog_figure():
    ns = [128, 256, 512, 1024]
    assert fitted_slope(ns, [n**2 for n in ns]) == pytest.approx(2.0)
    assert fitted_slope(ns, [3 * n for n in ns]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least 2 positive points"):
        fitted_slope([128, 256], [0, 5])
    figure = loglog_figure(
        {"quadratic": (ns, [n**2 for n in ns]), "linear": (ns, [128, None, 0, 1024])},
        ylabel="bytes",
        guides={2: "quadratic", 1: "linear"},
    )
    labels = [line.get_label() for line in figure.axes[0].get_lines()]
    assert labels == ["quadratic", "linear", "O(n²)", "O(n)"]
    with pytest.raises(ValueError, match="series must hold"):
        loglog_figure({}, ylabel="bytes")


def test_against_dk_draws_a_band_on_a_linear_axis_when_asked():
    from matplotlib.collections import PolyCollection

    from nbhelpers.figures.scaling import against_dk_figure

    d_ks = [1, 2, 4]
    figure = against_dk_figure(
        d_ks, {"v": [1.0, 0.9, 1.1]}, band=("spread", [0.8] * 3, [1.2] * 3), log_y=False,
        ylabel="y",
    )  # fmt: skip
    ax = figure.axes[0]
    assert ax.get_yscale() == "linear" and ax.get_xscale() == "log"
    assert any(isinstance(c, PolyCollection) for c in ax.collections)
    assert "spread" in [t.get_text() for t in ax.get_legend().get_texts()]
