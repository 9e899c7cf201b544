import pytest
import torch

from nbhelpers import describe_environment, get_device
from nbhelpers.support.device import DEVICE_ENV_VAR, available_devices, sdpa_kernels


def test_default_prefers_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    assert get_device().type == available_devices()[0]
    assert available_devices()[-1] == "cpu"


def test_override_to_cpu(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV_VAR, "CPU ")
    assert get_device() == torch.device("cpu")


def test_unknown_value_names_the_variable_and_lists_choices(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV_VAR, "tpu")
    with pytest.raises(ValueError, match=DEVICE_ENV_VAR) as err:
        get_device()
    assert "cpu, cuda, mps" in str(err.value)
    assert "available here: " in str(err.value)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_unavailable_cuda_names_the_variable(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV_VAR, "cuda")
    with pytest.raises(RuntimeError, match=f"{DEVICE_ENV_VAR}='cuda'.*available here: .*cpu"):
        get_device()


def test_cuda_is_chosen_automatically_when_present(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV_VAR, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert get_device().type == "cuda"


def test_banner_reports_version_device_and_kernels(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV_VAR, "cpu")
    banner = describe_environment()
    assert "\n" not in banner  # one line
    assert banner.startswith(f"torch {torch.__version__} | cpu: ")
    offered = [name for name, ok in sdpa_kernels(torch.device("cpu")).items() if ok]
    assert banner.endswith("attention kernels: " + ", ".join(offered))


def test_banner_leaves_the_global_random_state_alone(monkeypatch):
    # Notebooks seed, print the banner, then draw: the banner must not shift their numbers.
    monkeypatch.setenv(DEVICE_ENV_VAR, "cpu")
    state = torch.get_rng_state()
    describe_environment()
    assert torch.equal(torch.get_rng_state(), state)
