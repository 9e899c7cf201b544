"""The checker modules import their toolkit with one `from .core import *`; ruff cannot then
tell a toolkit name from a typo (F405 is switched off for them in pyproject.toml). Here every
name ruff cannot resolve in those modules must be one that core.__all__ exports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nbhelpers.exercises import core

EXERCISES = Path(core.__file__).resolve().parent


def test_every_star_imported_name_is_in_the_toolkit():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed")
    found = subprocess.run(
        [ruff, "check", "--select", "F405", "--output-format", "json", "--no-cache",
         "--isolated", str(EXERCISES)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    reports = json.loads(found.stdout)
    assert reports, "ruff reported no star-imported name: is the star import still there?"
    names = {report["message"].split("`")[1] for report in reports}
    unknown = sorted(names - set(core.__all__))
    assert not unknown, f"names neither defined nor in core.__all__: {unknown}"
    print(f"{len(reports)} uses of {len(names)} toolkit names, all in core.__all__")
