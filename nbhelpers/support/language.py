"""The language of the course's own words: figure labels, explorer readouts, checker reports.

English is the default and is written in the code itself, as gettext does: `tr("query i")`
returns the text in the current language. The Japanese strings all live in one table,
`translations_ja.JA`, keyed by the English text; a text missing from it falls back to English
(tests/test_language.py lists what is missing and fails).

    nbhelpers.set_language("ja")     # in a notebook, or
    NBHELPERS_LANG=ja jupyter lab    # for every kernel (`make lab-ja` does this)

A text with `{placeholders}` is formatted after translation, so a translation may put the
values in another order: tr("{n} heads", n=4) -> "4 個のヘッド".

Titles and labels that a notebook passes to a figure builder (`title="self-attention
weights"`) are the notebook's words, not nbhelpers': the builders pass them through
`translate`, and the table holds them too, so that the Japanese edition, whose code is the
English code, draws them in Japanese.
"""

from __future__ import annotations

import os

from .translations_ja import JA

LANGUAGES = ("en", "ja")
ENVIRONMENT_VARIABLE = "NBHELPERS_LANG"
_TABLES = {"en": {}, "ja": JA}
_chosen: str | None = None  # set_language's choice; None: the environment variable decides


def _check(code) -> str:
    if code not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {code!r}")
    return code


def set_language(code: str | None) -> None:
    """Use `code` ("en" or "ja") from now on; None goes back to NBHELPERS_LANG (or English).

    Figures and explorers built before the call keep the words they were built with."""
    global _chosen
    _chosen = None if code is None else _check(code)


def language() -> str:
    """The language in use: set_language's choice, else NBHELPERS_LANG, else "en"."""
    if _chosen is not None:
        return _chosen
    code = os.environ.get(ENVIRONMENT_VARIABLE, "").strip() or "en"
    if code not in LANGUAGES:
        raise ValueError(
            f"the environment variable {ENVIRONMENT_VARIABLE} must be one of {LANGUAGES}, "
            f"got {code!r}"
        )
    return code


def translate(text):
    """A caller's text (a title, a label) in the current language, if the table has it;
    anything else (None, a number, an untranslated text) comes back unchanged."""
    if isinstance(text, str):
        return _TABLES[language()].get(text, text)
    return text


def tr(text: str, /, **values) -> str:
    """`text` in the current language (English when untranslated), formatted with `values`."""
    translated = _TABLES[language()].get(text, text)
    return translated.format(**values) if values else translated
