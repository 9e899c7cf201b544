"""The one way an explorer writes HTML: the course's own template (which may hold <b>, <br>,
<sub>) filled with values that are escaped, whatever they are. A token such as <SOS>, <EOS>
or <PAD> is then shown as text, never swallowed by the page as an unknown tag.

    explorer.show(markup("query <b>{query}</b> puts {weight:.2f} on <b>{top}</b>",
                         query=tokens[i], weight=w, top=tokens[j]))
"""

from __future__ import annotations

import html
import numbers

from ..figures.style import RED as ERROR_COLOUR
from ..support.language import ntr, tr


def _safe(value):
    # Numbers keep their format specs ({weight:.2f}); everything else is text, escaped.
    if isinstance(value, (bool, numbers.Number)):
        return value
    item = getattr(value, "item", None)  # a 0-dim tensor or a NumPy scalar
    if callable(item) and getattr(value, "ndim", None) == 0:
        return item()
    return html.escape(str(value))


def markup(text: str, /, **values) -> str:
    """tr(text, **values), every value escaped: the template is ours, what fills it is data."""
    return tr(text, **{name: _safe(value) for name, value in values.items()})


def markup_n(singular: str, plural: str, n: int, /, **values) -> str:
    """ntr with every value escaped: the form that fits the count n."""
    return ntr(singular, plural, n, **{name: _safe(value) for name, value in values.items()})


def escaped(value) -> str:
    """A value shown as text, as it is (a token, a sentence, an error message)."""
    return html.escape(str(value))


def error_markup(message: str) -> str:
    """An error the explorer shows instead of its readout, escaped, in the course's red."""
    return f'<span style="color:{ERROR_COLOUR}">{html.escape(message)}</span>'
