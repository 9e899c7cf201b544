"""A progress line that a notebook updates in place, and that is stored as its last state.

A progress bar widget (tqdm's, say) is saved in the notebook with the text of its first
state, "0% 0/800", and shows as nothing without a kernel. One display updated in place is
saved as it ended, "training: step 800 of 800", and costs no widget. Outside IPython (a
script, the tests) it prints nothing.
"""

from __future__ import annotations


class ProgressLine:
    def __init__(self, label: str, total: int, *, enabled: bool = True):
        self.label, self.total = label, total
        self._handle = None
        if enabled:
            try:
                from IPython import get_ipython
                from IPython.display import display
            except ImportError:  # no IPython: nothing to show
                return
            if get_ipython() is not None:
                self._handle = display(self._text(0), display_id=True)

    def _text(self, done: int, note: str = ""):
        from IPython.display import Pretty

        return Pretty(f"{self.label}: step {done} of {self.total}{note}")

    def update(self, done: int, note: str = "") -> None:
        if self._handle is not None:
            self._handle.update(self._text(done, note))
