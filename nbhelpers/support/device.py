"""Where the course's tensors live: the one place that chooses a device."""

from __future__ import annotations

import os
import platform
import warnings

import torch

from .language import listing, tr

DEVICE_ENV_VAR = "NBHELPERS_DEVICE"
KNOWN_DEVICES = ("cpu", "cuda", "mps")


def available_devices() -> list[str]:
    """The device types this machine can use, in order of preference (CPU is always last)."""
    found = []
    if torch.cuda.is_available():
        found.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    found.append("cpu")
    return found


def get_device() -> torch.device:
    """CUDA if present, then Apple's MPS, then the CPU.

    The environment variable NBHELPERS_DEVICE=cpu|cuda|mps overrides the choice; it is how
    the stored notebook outputs are produced on the CPU even on a machine with a GPU.
    """
    available = available_devices()
    requested = os.environ.get(DEVICE_ENV_VAR, "").strip().lower()
    if not requested:
        return torch.device(available[0])
    if requested not in KNOWN_DEVICES:
        raise ValueError(
            tr(
                "{DEVICE_ENV_VAR}={requested!r} is not a device this course knows; expected one "
                "of {known} (available here: {available})",
                DEVICE_ENV_VAR=DEVICE_ENV_VAR,
                requested=requested,
                known=", ".join(KNOWN_DEVICES),
                available=", ".join(available),
            )
        )
    if requested not in available:
        raise RuntimeError(
            tr(
                "{DEVICE_ENV_VAR}={requested!r} but no {requested} device is available on this "
                "machine; available here: {available}. Unset {DEVICE_ENV_VAR} to choose "
                "automatically.",
                DEVICE_ENV_VAR=DEVICE_ENV_VAR,
                requested=requested,
                available=", ".join(available),
            )
        )
    return torch.device(requested)


def device_name(device: torch.device | str | None = None) -> str:
    """A human-readable name of the device (the GPU model, or the CPU architecture)."""
    device = torch.device(device) if device is not None else get_device()
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    if device.type == "mps":
        return "Apple GPU (MPS)"
    machine = platform.machine() or tr("unknown")
    return tr(
        "CPU ({machine}, {threads} threads)", machine=machine, threads=torch.get_num_threads()
    )


def sdpa_kernels(device: torch.device | str | None = None) -> dict[str, bool]:
    """Which kernels of F.scaled_dot_product_attention run on this device.

    Probed by running a tiny attention call with only that kernel allowed: a kernel that the
    build or the hardware lacks raises, which is the honest answer to "is it offered here".
    """
    from torch.nn.attention import SDPBackend, sdpa_kernel

    device = torch.device(device) if device is not None else get_device()
    # Flash and memory-efficient kernels on CUDA want half precision and head dims of 8k.
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    # No random numbers: the probe must not move the global RNG that notebooks seed.
    q = torch.ones(1, 1, 8, 16, device=device, dtype=dtype)
    backends = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "memory-efficient": SDPBackend.EFFICIENT_ATTENTION,
        "math": SDPBackend.MATH,
    }
    offered = {}
    for name, backend in backends.items():
        try:
            with warnings.catch_warnings(), sdpa_kernel(backend):
                warnings.simplefilter("ignore")
                torch.nn.functional.scaled_dot_product_attention(q, q, q)
            offered[name] = True
        except RuntimeError:
            offered[name] = False
    return offered


def describe_environment(device: torch.device | str | None = None) -> str:
    """A one-line banner: torch's version, the device, and the attention kernels it offers
    ("torch 2.13.0+cpu | cpu: CPU (x86_64, 2 threads) | attention kernels: flash, math")."""
    device = torch.device(device) if device is not None else get_device()
    names = {"flash": "flash", "memory-efficient": tr("memory-efficient"), "math": "math"}
    offered = [names[name] for name, ok in sdpa_kernels(device).items() if ok]
    return tr(
        "torch {version} | {device}: {name} | attention kernels: {kernels}",
        version=torch.__version__,
        device=device.type,
        name=device_name(device),
        kernels=listing(offered),
    )
