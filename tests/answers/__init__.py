"""Answers to every exercise, as a learner might write them: the worked solutions (the code
cells tagged "solution" in solutions/*.ipynb, so the notebooks a learner reads are the ones
tested), the usual mistakes with the words each report must show, and correct answers in
other styles. One module per notebook (nb01.py ... nb11.py); the unit tests
(tests/test_exercises.py) and the browser tests (tests/browser/test_checkers_in_the_page.py)
read the same table.

A mistake is (answer, words): the report must fail and show `words` after "hint:". Where
the report names the problem without a hint (the answer raised, say), the words are wrapped
in Says(...).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from torch import nn

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


class Says(str):
    """Words a failed report must show that are not a hint (the answer raised, say)."""


@dataclass
class Exercise:
    checker: object
    solution: str  # the name the worked solution (and the learner's cell) defines
    mistakes: list = field(default_factory=list)  # (answer, words)
    other_styles: list = field(default_factory=list)  # correct answers, written otherwise

    @property
    def name(self) -> str:
        return self.checker.__name__

    @property
    def hinted_mistakes(self) -> list:
        return [(answer, words) for answer, words in self.mistakes if not isinstance(words, Says)]

    @property
    def is_class(self) -> bool:
        return self.solution[0].isupper()


@functools.cache
def solved() -> dict:
    """Every name the solution cells define."""
    names: dict = {}
    for path in sorted(SOLUTIONS.glob("*_solutions.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if "solution" in cell.get("metadata", {}).get("tags", []):
                exec(compile(cell.source, f"{path.name}", "exec"), names)
    return names


def skeleton_function(*args, **kwargs):
    raise NotImplementedError


class SkeletonModule(nn.Module):
    def __init__(self, *args):
        super().__init__()
        raise NotImplementedError


def skeleton(exercise: Exercise):
    """The exercise's cell as the learner finds it."""
    return SkeletonModule if exercise.is_class else skeleton_function


def all_exercises() -> list[Exercise]:
    from . import nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10, nb11

    modules = (nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10, nb11)
    return [exercise for module in modules for exercise in module.EXERCISES]
