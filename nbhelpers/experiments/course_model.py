"""The course's trained model and the record of its training run, stored in nbhelpers/data/.

`scripts/save_course_model.py` runs notebook 08's recipe (on the CPU, one thread, torch's
portable kernels) and stores the trained weights, the run's measurements (`TrainingHistory`)
and copies of the weights at a few steps. Notebook 08 trains its own model live, but a run
of hundreds of steps turns the CPU's last-bit rounding into different digits, so the numbers
the course quotes, and everything notebooks 09 and 10 show of the trained model, come from
this stored run: the same on every machine.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from ..gpt1 import GPT1, GPT1Config, check_gpt1
from ..support.language import tr
from .pretraining import TrainingHistory, cpu_copy

COURSE_MODEL_PATH = Path(__file__).resolve().parent.parent / "data" / "course_model.pt"
# the same recipe with 4 blocks, for notebook 11's layers-transferred curve (GPT-1's Figure 2)
DEEP_MODEL_PATH = COURSE_MODEL_PATH.with_name("deep_model.pt")
_PLAIN = (int, float, str, bool)  # what torch.load(weights_only=True) reads back
_SERIES = ("steps", "seconds", "kl", "heldout_loss", "train_loss")


@dataclass
class CourseRun:
    """The stored run: the trained model (eval mode), what training measured, the recipe."""

    model: GPT1
    history: TrainingHistory
    details: dict


def save_course_model(
    model: GPT1,
    history: TrainingHistory | None = None,
    path: str | Path = COURSE_MODEL_PATH,
    **details,
) -> Path:
    """Store `model`'s configuration and weights, `history` (its measurements and
    checkpoints) and `details` (plain numbers and strings such as the recipe) in a file that
    `torch.load(..., weights_only=True)` reads."""
    check_gpt1(model)
    if history is not None and not isinstance(history, TrainingHistory):
        raise TypeError(
            tr(
                "history must be a TrainingHistory, got {got_type}",
                got_type=type(history).__name__,
            )
        )
    for name, value in details.items():
        if type(value) not in _PLAIN:
            raise TypeError(
                tr(
                    "{name} must be a plain int, float, str or bool, got {value!r}",
                    name=name,
                    value=value,
                )
            )
    saved = {"config": asdict(model.config), "state_dict": cpu_copy(model), "details": details}
    if history is not None:
        saved["history"] = {
            "entropy_rate": history.entropy_rate,
            "heldout_true_loss": history.heldout_true_loss,
            **{name: list(getattr(history, name)) for name in _SERIES},
            "kl_by_rule": {rule: list(values) for rule, values in history.kl_by_rule.items()},
        }
        # the last step's copy is the model itself: stored once
        last = history.steps[-1] if history.steps else None
        saved["checkpoints"] = {k: v for k, v in history.checkpoints.items() if k != last}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(saved, path)
    return path


def load_course_model(
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    path: str | Path = COURSE_MODEL_PATH,
) -> GPT1:
    """Notebook 08's trained model, stored by `scripts/save_course_model.py`, in eval mode on
    `device`. `dtype=torch.float64` evaluates it with 16 digits, so that what a notebook
    prints of it does not depend on the CPU's rounding. Loaded with weights_only=True: the
    file holds tensors and plain values only, never code to run.

    Notebooks 09 and 10.
    """
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(
            tr(
                "dtype must be torch.float32 or torch.float64, got {dtype!r}",
                dtype=dtype,
            )
        )
    saved = _read(path)
    return _model(saved["config"], saved["state_dict"]).to(device=device, dtype=dtype)


def load_course_run(
    dtype: torch.dtype = torch.float64, path: str | Path = COURSE_MODEL_PATH
) -> CourseRun:
    """The stored run: its model (on the CPU, in `dtype`: float64 by default, see
    `load_course_model`), its TrainingHistory with the weights kept at a few steps, and the
    recipe. Notebook 08."""
    saved = _read(path)
    if "history" not in saved:
        raise ValueError(
            tr(
                "{path} holds no training run: rerun scripts/save_course_model.py",
                path=path,
            )
        )
    model = load_course_model(dtype=dtype, path=path)
    record = saved["history"]
    history = TrainingHistory(record["entropy_rate"], record["heldout_true_loss"])
    for name in _SERIES:
        setattr(history, name, list(record[name]))
    history.kl_by_rule = {rule: list(values) for rule, values in record["kl_by_rule"].items()}
    history.checkpoints = {int(step): weights for step, weights in saved["checkpoints"].items()}
    history.checkpoints[history.steps[-1]] = saved["state_dict"]
    return CourseRun(model, history, dict(saved["details"]))


def course_model_details(path: str | Path = COURSE_MODEL_PATH) -> dict:
    """What the stored model's file says about its training: the recipe, its held-out KL."""
    return dict(_read(path)["details"])


def _model(config: dict, state_dict: dict) -> GPT1:
    with torch.random.fork_rng(devices=[]):  # the initial weights are overwritten: no draws
        model = GPT1(GPT1Config(**config))
    model.load_state_dict(state_dict)
    return model.eval()


def _read(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            tr(
                "no course model at {path}: run `python scripts/save_course_model.py` "
                "to train and store it",
                path=path,
            )
        )
    return torch.load(path, map_location="cpu", weights_only=True)
