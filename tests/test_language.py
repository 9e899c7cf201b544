"""nbhelpers' own words in Japanese: every text the package marks for translation (found by
Babel's extractor, scripts/po.py) has a translation in nbhelpers/locale/ja/LC_MESSAGES/
nbhelpers.po, the catalogue holds nothing the code no longer says, each translation keeps the
English text's {placeholders}, and the placeholders are named for what they hold."""

from __future__ import annotations

import re
import shutil
import string
import subprocess

import pytest
from po import CATALOGUE, extracted

from nbhelpers.support import language as lang

CATALOGUES = sorted((lang.LOCALE / "ja" / "LC_MESSAGES").glob("*.po"))
JA = lang.catalogue("ja")
TEXTS = extracted()


def fields(text) -> set[str]:
    """The {placeholders} of a text; of a text with plural forms, those of every form."""
    forms = text if isinstance(text, tuple) else (text,)
    return {
        name
        for form in forms
        for _, name, _, _ in string.Formatter().parse(form)
        if name is not None
    }


def forms(translation) -> tuple:
    return translation if isinstance(translation, tuple) else (translation,)


def test_one_catalogue_for_nbhelpers_own_words():
    # the notebooks print their own words, in each edition's language: no catalogue of theirs
    assert CATALOGUES == [CATALOGUE]


def test_every_text_has_a_japanese_translation():
    missing = [f"{where}: {text!r}" for text, where in TEXTS.items() if not JA.get(text)]
    assert not missing, (
        f"{len(missing)} texts have no Japanese translation (python scripts/po.py update, "
        "then translate):\n" + "\n".join(missing)
    )


def test_the_catalogue_holds_only_texts_the_code_uses():
    unused = sorted(map(str, set(JA) - set(TEXTS)))
    assert not unused, f"the catalogue holds texts the code no longer says: {unused}"


def test_the_extractor_finds_what_the_package_marks():
    # a few texts of each kind of marker, written where a learner meets them
    assert "attention weight" in TEXTS  # tr(...)
    assert any(isinstance(text, tuple) for text in TEXTS)  # ntr(singular, plural, n)
    assert "one square matrix" in TEXTS  # tr in a checker's case table


MACHINE_MADE = re.compile(r"\d$|__|_flatte$")


def test_placeholders_are_named_for_what_they_hold():
    # {value2}, {sorted__RESERVED}: names a script made from the expression, which tell a
    # translator nothing
    bad = sorted(
        f"{{{name}}} in {text!r}"
        for text in TEXTS
        for name in fields(text)
        if name.isidentifier() and MACHINE_MADE.search(name)
    )
    assert not bad, "\n".join(bad)


def test_no_translation_is_left_empty():
    empty = [en for en, ja in JA.items() if not all(form.strip() for form in forms(ja))]
    assert not empty, f"empty translations (they would fall back to English): {empty}"


def test_translations_keep_the_placeholders():
    wrong = [
        f"{en!r}: {sorted(fields(en))} vs {sorted(fields(ja))}"
        for en, ja in JA.items()
        if any(fields(en) != fields(form) for form in forms(ja))
    ]
    assert not wrong, "\n".join(wrong)


def test_translations_keep_the_error_figure_before_its_bracket():
    # tests/nbval.cfg finds a check's machine-dependent digits by their place, in any
    # language: the figure, then at once the bracket that holds the tolerance.
    import re

    from nbhelpers.support.checks import ERROR_FIGURE

    placed = re.compile(re.escape(ERROR_FIGURE) + r" ?[(（]")
    wrong = [
        en
        for en, ja in JA.items()
        if ERROR_FIGURE in str(en)
        and not all(placed.search(text) for text in [*forms(ja), *(forms(en))])
    ]
    assert not wrong, f"texts whose {ERROR_FIGURE} is not followed by its bracket: {wrong}"


@pytest.fixture
def restore_language():
    yield
    lang.set_language(None)


def test_english_is_the_default_and_ja_translates(monkeypatch, restore_language):
    monkeypatch.delenv(lang.ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.setitem(lang.catalogue("ja"), "{n} heads", "{n} 個のヘッド")
    assert lang.language() == "en"
    assert lang.tr("{n} heads", n=4) == "4 heads"
    lang.set_language("ja")
    assert lang.tr("{n} heads", n=4) == "4 個のヘッド"
    assert lang.tr("no such text") == "no such text"  # falls back to English


def test_the_environment_variable_chooses_until_set_language_does(monkeypatch, restore_language):
    monkeypatch.setenv(lang.ENVIRONMENT_VARIABLE, "ja")
    assert lang.language() == "ja"
    lang.set_language("en")
    assert lang.language() == "en"


def test_unknown_languages_are_refused(monkeypatch, restore_language):
    with pytest.raises(ValueError, match=r"language must be one of \('en', 'ja'\), got 'fr'"):
        lang.set_language("fr")
    monkeypatch.setenv(lang.ENVIRONMENT_VARIABLE, "de")
    with pytest.raises(ValueError, match="NBHELPERS_LANG must be one of"):
        lang.language()


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext's msgfmt is not installed")
@pytest.mark.parametrize("path", CATALOGUES, ids=lambda p: p.name)
def test_gettext_accepts_each_catalogue(path, tmp_path):
    # GNU msgfmt's own checks (-c): the header, and the format flags against each text
    result = subprocess.run(
        ["msgfmt", "-c", "-o", str(tmp_path / "out.mo"), str(path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_plural_forms_follow_the_count(restore_language):
    # English has two forms; Japanese one (the catalogue's Plural-Forms: nplurals=1).
    singular, plural = "n_h = {n} head of d_head = {d_head}", "n_h = {n} heads of d_head = {d_head}"
    assert (singular, plural) in JA
    lang.set_language("en")
    assert lang.ntr(singular, plural, 1, d_head=8) == "n_h = 1 head of d_head = 8"
    assert lang.ntr(singular, plural, 2, d_head=4) == "n_h = 2 heads of d_head = 4"
    assert lang.ntr(singular, plural, 0, d_head=4) == "n_h = 0 heads of d_head = 4"
    lang.set_language("ja")
    assert lang.ntr(singular, plural, 1, d_head=8) == "n_h = 1 個のヘッド、d_head = 8"
    assert lang.ntr(singular, plural, 2, d_head=4) == "n_h = 2 個のヘッド、d_head = 4"
    # untranslated: English's rule, in any language
    assert lang.ntr("{n} cat", "{n} cats", 1) == "1 cat"
