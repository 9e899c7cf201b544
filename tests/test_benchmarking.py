import subprocess
import sys
from pathlib import Path

import pytest
import torch

from nbhelpers.support import benchmarking as bm


def test_timing_median_and_str():
    timing = bm.Timing((0.3, 0.1, 0.2))
    assert timing.median == 0.2
    assert str(timing) == "200 ms (median of 3)"


def test_time_call_runs_warmup_plus_repeats():
    calls = []
    timing = bm.time_call(lambda: calls.append(1), repeats=4, warmup=2)
    assert len(calls) == 6
    assert len(timing.runs) == 4
    assert all(run >= 0 for run in timing.runs)


def test_time_interleaved_alternates_the_contenders():
    order = []
    timings = bm.time_interleaved(
        {"a": lambda: order.append("a"), "b": lambda: order.append("b")}, repeats=2, warmup=0
    )
    assert order == ["a", "b", "a", "b"]
    assert set(timings) == {"a", "b"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"repeats": 0}, "repeats must be an int >= 1"),
        ({"warmup": -1}, "warmup must be an int >= 0"),
    ],
)
def test_bad_counts_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bm.time_call(lambda: None, **kwargs)


def test_non_callable_is_named():
    with pytest.raises(TypeError, match=r"fns\['x'\] must be callable"):
        bm.time_interleaved({"x": 3})
    with pytest.raises(TypeError, match="fn must be callable"):
        bm.peak_memory(3)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resident-set method is Linux")
def test_peak_memory_sees_a_large_temporary_tensor():
    if bm.memory_method("cpu").startswith("not measured"):
        pytest.skip("this kernel does not let a process reset its peak resident size")
    size = 64 * 2**20

    def allocate_and_drop():
        torch.ones(size // 4).sum()  # 64 MiB touched, then freed

    peak = bm.peak_memory(allocate_and_drop)
    assert size * 0.9 <= peak <= size * 1.5


def test_formatting():
    assert bm.format_seconds(0.01234) == "12.3 ms"
    assert bm.format_seconds(2.5) == "2.5 s"
    assert bm.format_seconds(3e-6) == "3 µs"
    assert bm.format_bytes(None) == "n/a"
    assert bm.format_bytes(512) == "512 B"
    assert bm.format_bytes(1536) == "1.5 KiB"
    assert bm.format_bytes(3 * 2**40) == "3 TiB"
    assert bm.format_bytes(3 * 2**30) == "3 GiB"


def test_cpu_threads_restores_the_thread_count():
    from nbhelpers.support.threads import cpu_threads

    before = torch.get_num_threads()
    with cpu_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="cpu_threads must be a positive int or None"):
        with cpu_threads(0):
            pass
    with pytest.raises(RuntimeError, match="inside"):  # restored after an error, too
        with cpu_threads(1):
            raise RuntimeError("inside")
    assert torch.get_num_threads() == before


def test_importing_the_package_changes_nothing_in_the_process():
    import subprocess
    import sys

    code = (
        "import nbhelpers.support.benchmarking as b, sys; "
        "print(b._glibc.cache_info().currsize, 'matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"]  # libc not loaded, no plotting imported


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux only")
def test_probing_whether_the_peak_can_be_reset_keeps_the_peak_so_far():
    """memory_method() and peak_memory() reset VmHWM; the process's peak before them must
    survive in process_peak_bytes. Run in a fresh process: the suite's own peak would hide a
    loss."""
    code = (
        "import torch\n"
        "from nbhelpers.support import benchmarking as bm\n"
        "x = torch.ones(100_000_000); del x\n"  # 400 MB at the peak, then freed
        "bm.memory_method(); bm.peak_memory(lambda: torch.zeros(10))\n"
        "print(bm.process_peak_bytes())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)  # fmt: skip
    assert int(done.stdout.split()[-1]) >= 400_000_000
