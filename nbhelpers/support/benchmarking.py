"""Timing and peak-memory measurements for notebook 10 and the scripts in benchmarks/.

Time: the median of several wall-clock runs (`time.perf_counter`), after warm-up runs, with
the device synchronised around each run so that a GPU's queued work is counted. A median
shrugs off the odd run slowed down by another process on a shared machine.

Peak memory: how much *more* memory a call needed at its worst moment than before it ran.
  * CUDA: `torch.cuda.max_memory_allocated` after `reset_peak_memory_stats`, minus what was
    allocated before the call: exactly the tensors torch's allocator handed out.
  * CPU on Linux: the peak resident set size (VmHWM in /proc/self/status, reset by writing 5 to
    /proc/self/clear_refs) minus the resident size before the call. This counts every page
    the call touched, tensors and kernel scratch space alike, in 4 KiB pages. glibc first
    hands the free blocks it still holds back to the system (malloc_trim), and while the
    call runs it gives every large freed block back at once (its mmap and trim thresholds
    fixed at 128 KiB), so that memory freed earlier does not sit resident and hide the
    call's needs. Afterwards both thresholds are set back to glibc's defaults (128 KiB);
    glibc offers no way to turn its own raising of them back on, so that alone outlasts the
    first measurement: large blocks keep going straight back to the system.
  * anywhere else: not measured (None).

Resetting VmHWM also resets the process's own peak (getrusage's ru_maxrss): the peak before
each reset is kept, and `process_peak_bytes()` gives the peak of the whole run.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from .language import tr
from .validation import is_int

_PROC_STATUS = Path("/proc/self/status")
_PROC_CLEAR_REFS = Path("/proc/self/clear_refs")
_peak_before_resets = 0  # the process's peak resident bytes before peak_memory reset it


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of each measured run; `median` is the figure to report."""

    runs: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    def __str__(self) -> str:
        return f"{format_seconds(self.median)} (median of {len(self.runs)})"


def _check_int_at_least(name: str, value, minimum: int = 1) -> None:
    # Not validation.check_positive_int: warmup may be 0.
    if not is_int(value) or value < minimum:
        raise ValueError(
            tr(
                "{name} must be an int >= {minimum}, got {value!r}",
                name=name,
                minimum=minimum,
                value=value,
            )
        )


def synchronize(device: torch.device | str | None) -> None:
    """Wait for the device's queued work (a no-op on the CPU)."""
    device = torch.device(device) if device is not None else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def time_call(
    fn: Callable[[], object],
    *,
    repeats: int = 5,
    warmup: int = 1,
    device: torch.device | str | None = None,
) -> Timing:
    """Run fn() `warmup` times unmeasured, then `repeats` times measured."""
    return time_interleaved({"fn": fn}, repeats=repeats, warmup=warmup, device=device)["fn"]


def time_interleaved(
    fns: Mapping[str, Callable[[], object]],
    *,
    repeats: int = 5,
    warmup: int = 1,
    device: torch.device | str | None = None,
) -> dict[str, Timing]:
    """Time several functions in alternating rounds (a, b, c, a, b, c, ...).

    On a shared machine the load drifts; interleaving exposes every contender to the same
    drift, which matters when the question is a ratio ("within 10% of ...").
    """
    if not fns:
        raise ValueError(tr("fns must name at least one function to time"))
    _check_int_at_least("repeats", repeats)
    _check_int_at_least("warmup", warmup, minimum=0)
    for name, fn in fns.items():
        if not callable(fn):
            raise TypeError(
                tr(
                    "fns[{name!r}] must be callable, got {fn_type}",
                    name=name,
                    fn_type=type(fn).__name__,
                )
            )
    # Not torch.utils.benchmark.Timer: its timeit() warms up with two extra calls every time,
    # which triples the cost of the large calls measured once each, and it cannot alternate.
    runs: dict[str, list[float]] = {name: [] for name in fns}
    for round_index in range(warmup + repeats):
        for name, fn in fns.items():
            synchronize(device)
            start = time.perf_counter()
            fn()
            synchronize(device)
            if round_index >= warmup:
                runs[name].append(time.perf_counter() - start)
    return {name: Timing(tuple(values)) for name, values in runs.items()}


@functools.cache
def _glibc():
    # Loaded on the first measurement, not at import: importing nbhelpers changes nothing.
    with contextlib.suppress(OSError, TypeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim"):
            return libc
    return None


# mallopt's parameters (malloc.h) and glibc's default for both: 128 KiB.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _GLIBC_DEFAULT = -1, -3, 128 * 1024


@contextlib.contextmanager
def _large_blocks_returned_at_once():
    # Fixed thresholds stop glibc from raising them after each big free (its default), so a
    # freed tensor leaves the resident set at once instead of padding the next baseline.
    libc = _glibc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, _GLIBC_DEFAULT)
        libc.mallopt(_M_TRIM_THRESHOLD, _GLIBC_DEFAULT)
    try:
        yield
    finally:
        if libc is not None:  # glibc's default values again (its own raising stays off)
            libc.mallopt(_M_MMAP_THRESHOLD, _GLIBC_DEFAULT)
            libc.mallopt(_M_TRIM_THRESHOLD, _GLIBC_DEFAULT)


def _release_free_memory() -> None:
    # Free blocks still resident in the heap would be reused by the call without raising the
    # resident size: hand them back to the system first so that reuse is counted too.
    if _glibc() is not None:
        _glibc().malloc_trim(0)


def _resident_bytes(field: str) -> int:
    for line in _PROC_STATUS.read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    raise OSError(f"{field} not found in {_PROC_STATUS}")


def _can_reset_peak_rss() -> bool:
    """Whether VmHWM can be reset here; trying resets it, so the peak so far is kept first
    (process_peak_bytes reports it)."""
    global _peak_before_resets
    try:
        _peak_before_resets = max(_peak_before_resets, _resident_bytes("VmHWM:"))
        _PROC_CLEAR_REFS.write_text("5")
        _resident_bytes("VmHWM:")
    except OSError:
        return False
    return True


def memory_method(device: torch.device | str | None = None) -> str:
    """How `peak_memory` measures on this device: a phrase to print next to the figures."""
    device = torch.device(device) if device is not None else torch.device("cpu")
    if device.type == "cuda":
        return tr("CUDA allocator peak (torch.cuda.max_memory_allocated)")
    if device.type == "cpu" and _can_reset_peak_rss():
        return tr("peak resident set size of the process (Linux VmHWM), 4 KiB pages")
    return tr("not measured on this device")


def peak_memory(fn: Callable[[], object], device: torch.device | str | None = None) -> int | None:
    """Bytes a call to fn() needed at its peak beyond what was in use before; None where
    this device offers no way to measure it (see the module docstring for the methods)."""
    if not callable(fn):
        raise TypeError(tr("fn must be callable, got {fn_type}", fn_type=type(fn).__name__))
    device = torch.device(device) if device is not None else torch.device("cpu")
    if device.type == "cuda":
        synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        result = fn()
        synchronize(device)
        peak = torch.cuda.max_memory_allocated(device) - before
        del result
        return peak
    if device.type != "cpu" or not _can_reset_peak_rss():
        return None
    global _peak_before_resets
    with _large_blocks_returned_at_once():
        _release_free_memory()
        _peak_before_resets = max(_peak_before_resets, _resident_bytes("VmHWM:"))
        _PROC_CLEAR_REFS.write_text("5")  # VmHWM := current resident size
        before = _resident_bytes("VmRSS:")
        result = fn()
        peak = _resident_bytes("VmHWM:") - before
        del result
    return max(peak, 0)


def process_peak_bytes() -> int:
    """The process's peak resident bytes over its whole run, whatever peak_memory reset on
    the way (getrusage's ru_maxrss loses what came before each reset)."""
    import resource
    import sys

    rusage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    current = rusage if sys.platform == "darwin" else rusage * 1024  # KiB on Linux
    if _PROC_STATUS.exists():
        current = max(current, _resident_bytes("VmHWM:"))
    return max(current, _peak_before_resets)


def format_seconds(seconds: float) -> str:
    """A duration with a unit that keeps 3 significant digits: 12.3 ms, 4.56 s."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_bytes(count: int | None) -> str:
    """1536 -> '1.5 KiB'; None -> 'n/a'."""
    if count is None:
        return "n/a"
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.3g} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    raise AssertionError("unreachable")
