"""nbhelpers changes nothing in the learner's process that it does not say it changes: the
figures use the course's font without touching rcParams, a memory measurement leaves the
process as it found it and still knows the run's peak, and a cache of drawn texts is keyed
on everything that changes them. Each test compares the global state before and after."""

from __future__ import annotations

import subprocess
import sys

import matplotlib
import pytest
import torch


def run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_importing_the_figures_and_drawing_one_leaves_rcparams_alone():
    code = """
import matplotlib, json
before = dict(matplotlib.rcParams)
import nbhelpers.figures as f, nbhelpers.widgets
from nbhelpers import attention_heatmap, figure_to_png
fig = attention_heatmap([[0.5, 0.5], [0.2, 0.8]], ["犬", "が"], ["犬", "が"], title="重み")
figure_to_png(fig)
changed = sorted(k for k, v in matplotlib.rcParams.items() if before.get(k) != v)
fonts = sorted({t.get_fontname() for t in fig.findobj(matplotlib.text.Text) if t.get_text()})
print(json.dumps([changed, fonts]))
"""
    import json

    changed, fonts = json.loads(run(code))
    assert changed == [], f"importing or drawing changed rcParams {changed}"
    assert fonts == ["IPAexGothic"], fonts  # the course's figures still draw Japanese


def test_a_learners_own_figure_keeps_its_font_after_the_course_draws():
    from matplotlib.figure import Figure

    from nbhelpers.figures import attention_heatmap, figure_to_png

    family = list(matplotlib.rcParams["font.family"])
    figure_to_png(attention_heatmap([[1.0]], ["犬"], ["犬"]))
    mine = Figure()
    text = mine.text(0.5, 0.5, "mine")
    assert list(matplotlib.rcParams["font.family"]) == family
    assert text.get_fontname() != "IPAexGothic" or family == ["IPAexGothic"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resident-set method is Linux")
def test_peak_memory_leaves_the_process_and_its_run_peak_as_they_were():
    code = """
import json, resource, torch
import nbhelpers.support.benchmarking as b
big = torch.ones(64 * 2**20 // 4); big += 1; del big          # a 64 MiB peak, early on
run_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
if b.memory_method("cpu").startswith("not measured"):
    print(json.dumps(None)); raise SystemExit
peak = b.peak_memory(lambda: torch.ones(2**20).sum())         # a 4 MiB call, afterwards
print(json.dumps([run_peak, b.process_peak_bytes(), peak, b._glibc.cache_info().currsize]))
"""
    import json

    found = json.loads(run(code))
    if found is None:
        pytest.skip("this kernel does not let a process reset its peak resident size")
    run_peak, whole_run, peak, _ = found
    assert whole_run >= run_peak, "the run's peak was lost when peak_memory reset it"
    assert peak < 32 * 2**20  # the call's own peak, not the earlier 64 MiB


def test_measuring_memory_sets_glibcs_thresholds_back_to_their_defaults(monkeypatch):
    # glibc's mmap and trim thresholds are fixed only while a call is measured, then set to
    # glibc's defaults again (the one thing that outlasts it: glibc's own raising of them,
    # which it offers no way to turn back on, says benchmarking's docstring).
    import nbhelpers.support.benchmarking as b

    calls = []

    class FakeLibc:
        def mallopt(self, parameter, value):
            calls.append(("mallopt", parameter, value))

        def malloc_trim(self, pad):
            calls.append(("trim", pad))

    monkeypatch.setattr(b, "_glibc", lambda: FakeLibc())
    if b.memory_method("cpu").startswith("not measured"):
        pytest.skip("this kernel does not let a process reset its peak resident size")
    b.peak_memory(lambda: calls.append("the call"))
    during = calls.index("the call")
    assert ("mallopt", -3, 128 * 1024) in calls[:during]  # fixed while measuring
    assert calls[during + 1 :] == [("mallopt", -3, 128 * 1024), ("mallopt", -1, 128 * 1024)]


def test_the_drawn_text_cache_is_keyed_on_the_font_and_the_text_settings():
    from matplotlib.font_manager import FontProperties

    from nbhelpers.figures.sprite_text import sprite

    regular, bold = FontProperties(size=12), FontProperties(size=12, weight="bold")
    assert not torch.equal(
        torch.as_tensor(sprite("8", "black", regular, 100).astype(float)).sum(),
        torch.as_tensor(sprite("8", "black", bold, 100).astype(float)).sum(),
    )
    course = FontProperties(family="IPAexGothic", size=12)
    plain = sprite("犬", "black", course, 100)
    with matplotlib.rc_context({"text.antialiased": False}):
        sharp = sprite("犬", "black", course, 100)
    assert plain.shape != sharp.shape or (plain != sharp).any()


def test_loading_the_course_model_and_seeded_constructors_leave_the_global_rng_alone():
    from nbhelpers.experiments.course_model import load_course_model
    from nbhelpers.fine_tuning import GPT1Classifier

    state = torch.get_rng_state()
    model = load_course_model()
    assert torch.equal(torch.get_rng_state(), state), "load_course_model drew from the global RNG"
    model.add_tokens(2, generator=torch.Generator().manual_seed(0))
    assert torch.equal(torch.get_rng_state(), state), "add_tokens drew from the global RNG"
    GPT1Classifier(model, 2, extract_id=model.config.vocab_size - 1, seed=0)
    assert torch.equal(torch.get_rng_state(), state), "GPT1Classifier drew from the global RNG"
