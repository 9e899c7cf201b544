"""The course's own words in Japanese: every text passed to `tr` (in nbhelpers or in a
notebook's code) has a translation in the catalogues (nbhelpers/locale/ja/LC_MESSAGES/*.po),
they hold nothing the code no longer says, each text is in one catalogue only, and each
translation keeps the English text's {placeholders}."""

from __future__ import annotations

import ast
import shutil
import string
import subprocess
from pathlib import Path

import nbformat
import pytest
from babel.messages.pofile import read_po

from nbhelpers.support import language as lang

PACKAGE = Path(lang.__file__).resolve().parent.parent
ROOT = PACKAGE.parent
# The keyword arguments through which a notebook hands its own words to a figure builder,
# which passes them through `translate`.
CALLER_TEXT_KEYWORDS = {"title", "titles", "names", "xlabel", "ylabel", "colorbar_label"}
CATALOGUES = sorted((lang.LOCALE / "ja" / "LC_MESSAGES").glob("*.po"))
JA = lang.catalogue("ja")


# The calls that translate their first argument (a text), and those that translate their first
# two (a text with plural forms: singular, plural), in nbhelpers.
TRANSLATING = {"tr": 1, "markup": 1, "ntr": 2, "markup_n": 2}


def translatable_texts() -> dict:
    """{English text: where it is first used} for every `tr("...")` call in nbhelpers (and
    the calls that go through it); a text with plural forms is keyed (singular, plural)."""
    found: dict = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            count = TRANSLATING.get(getattr(node.func, "id", None))
            if count is None:
                continue
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            texts = node.args[:count]
            if len(texts) < count or not all(
                isinstance(t, ast.Constant) and isinstance(t.value, str) for t in texts
            ):
                if path.name == "readout.py":  # the helpers themselves pass a name on
                    continue
                raise AssertionError(f"{where}: needs string literals, so they can be listed")
            key = texts[0].value if count == 1 else tuple(t.value for t in texts)
            found.setdefault(key, where)
    return found | notebook_texts()


def notebook_texts() -> dict[str, str]:
    """{text: where} for the string literals the English notebooks pass to `tr` (what their
    code prints), as a figure's title or labels (CALLER_TEXT_KEYWORDS) or as what a
    check_close compared; their Japanese editions run the same code."""
    found: dict[str, str] = {}
    for path in sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("solutions/*.ipynb")]):
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type != "code":
                continue
            source = "\n".join(
                "" if line.lstrip().startswith(("%", "!")) else line
                for line in cell.source.splitlines()
            )  # IPython magics are not Python
            for node in ast.walk(ast.parse(source)):
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "id", None) in ("check_close", "tr")
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):  # what a check line says it compared: check_close translates it
                    found.setdefault(node.args[0].value, f"{path.relative_to(ROOT)}, cell {index}")
                if isinstance(node, ast.keyword) and node.arg in CALLER_TEXT_KEYWORDS:
                    values = getattr(node.value, "elts", [node.value])
                    for value in values:
                        if isinstance(value, ast.Constant) and isinstance(value.value, str):
                            found.setdefault(value.value, f"{path.relative_to(ROOT)}, cell {index}")
    return found


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


def test_every_text_has_a_japanese_translation():
    missing = [
        f"{where}: {text!r}" for text, where in translatable_texts().items() if text not in JA
    ]
    assert not missing, f"{len(missing)} texts have no Japanese translation:\n" + "\n".join(missing)


def test_the_catalogues_hold_only_texts_the_code_uses():
    unused = sorted(set(JA) - set(translatable_texts()))
    assert not unused, f"the catalogues hold texts no tr() call uses: {unused}"


def test_each_text_is_translated_in_one_catalogue_only():
    seen: dict[str, str] = {}
    twice = []
    for path in CATALOGUES:
        with open(path, "rb") as file:
            for message in read_po(file):
                if message.id and message.id in seen:
                    twice.append(f"{message.id!r}: {seen[message.id]} and {path.name}")
                seen.setdefault(message.id, path.name)
    assert not twice, "\n".join(twice)


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
