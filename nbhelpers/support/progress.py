"""A progress line that a notebook redraws in place, and that is saved as it ended.

tqdm's widget bar is saved in a notebook with the text of its first state, "0% 0/800", and
shows as nothing without a kernel. This is one line of text rewritten with a carriage
return: JupyterLab shows only its latest state, and a notebook executed with stream
coalescing (`make notebooks`) saves "training: step 800 of 800". Outside IPython (a
script, the tests) it prints nothing.
"""

from __future__ import annotations

import sys

from .language import tr


def in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


class ProgressLine:
    def __init__(self, label: str, total: int, *, enabled: bool = True):
        """`label`: what is progressing, already in the learner's language (tr("training"))."""
        self.label, self.total = label, total
        self.enabled = enabled and in_ipython()

    def update(self, done: int) -> None:
        if self.enabled:
            end = "\n" if done >= self.total else ""
            line = tr(
                "{label}: step {done} of {total}", label=self.label, done=done, total=self.total
            )
            print("\r" + line, end=end, file=sys.stdout)
