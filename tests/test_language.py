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


def translatable_texts() -> dict[str, str]:
    """{English text: where it is first used} for every `tr("...")` call in nbhelpers."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr"):
                continue
            where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
            first = node.args[0] if node.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                raise AssertionError(f"{where}: tr() needs a string literal, so it can be listed")
            found.setdefault(first.value, where)
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


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


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
    empty = [en for en, ja in JA.items() if not ja.strip()]
    assert not empty, f"empty translations (they would fall back to English): {empty}"


def test_translations_keep_the_placeholders():
    wrong = [
        f"{en!r}: {sorted(fields(en))} vs {sorted(fields(ja))}"
        for en, ja in JA.items()
        if fields(en) != fields(ja)
    ]
    assert not wrong, "\n".join(wrong)


def test_translations_keep_the_error_figure_marker():
    # tests/nbval.cfg finds a check's machine-dependent digits by this marker, in any language.
    from nbhelpers.support.checks import ERROR_FIGURE

    wrong = [en for en, ja in JA.items() if ERROR_FIGURE in en and ERROR_FIGURE not in ja]
    assert not wrong, f"translations that lost {ERROR_FIGURE!r}: {wrong}"


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
