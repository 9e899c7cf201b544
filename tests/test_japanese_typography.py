"""The Japanese edition's typography, as notebooks/ja/GLOSSARY.md sets it out: in the markdown
of the Japanese notebooks and solutions, README.ja.md, the glossary and the notation page, and
in every translation of the catalogues (what outputs, figures and widgets show):
- no half-width 「,」「;」「:」 after Japanese (「、」「：」, 「／」 between names);
- one range mark, 「〜」, with no spaces (not ～, –, or .. outside code);
- no space between two Japanese characters: a token or a token sequence is quoted,
  「犬 が 河岸 を」, rather than left bare in the sentence (歩く の o);
- no line break inside a Japanese paragraph (it shows as a stray space);
- the long-vowel forms the glossary chose (デコーダー, パラメーター, ...).
Code spans, math, HTML tags, URLs and quoted 「…」 text are left out of each check."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from nbhelpers.support import language as lang

ROOT = Path(__file__).resolve().parent.parent
JAPANESE_NOTEBOOKS = sorted(
    [*(ROOT / "notebooks" / "ja").glob("*.ipynb"), *(ROOT / "solutions" / "ja").glob("*.ipynb")]
)
JAPANESE_PAGES = [
    ROOT / "README.ja.md",
    ROOT / "notebooks" / "ja" / "GLOSSARY.md",
    ROOT / "notebooks" / "ja" / "NOTATION.md",
]
JA = r"[ぁ-んァ-ヶ一-龠々ー]"  # a Japanese character (kana, kanji, the long-vowel mark)
JA_TEXT = r"[ぁ-んァ-ヶ一-龠々ー、。「」（）：！？]"  # and the punctuation a sentence holds
# What a rule does not read: code spans and blocks, math, HTML tags, links' targets, URLs,
# {placeholders}, and quoted text (a token sequence keeps its spaces inside 「」).
LEFT_OUT = re.compile(
    r"```.*?```|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|<[^>]+>|\]\([^)]*\)|https?://\S+|\{[^{}]*\}"
    r"|「[^「」]*」|『[^『』]*』|'[^']*'"
    r"|\([^()（）\n]*,[^()（）\n]*\)",  # a tuple: (供, が), (..., 長さ, 特徴量)
    re.S,
)
RULES = {
    "half-width punctuation after Japanese": re.compile(JA + r"[,;:](?=\s|$)"),
    "a range mark other than 〜": re.compile(r"\d\s*[～–]\s*\d|\d\.\.\d"),
    "a spaced 〜": re.compile(r"\d\s+〜|〜\s+\d"),
    "a space between Japanese characters (quote the tokens: 「犬 が」)": re.compile(
        JA + r" +" + JA
    ),
    # two sentences run together: a polite ending followed at once by the next sentence
    "a missing 。 after です or ます": re.compile(r"(です|ます)(?=[\u4e00-\u9fff\u30a0-\u30ff])"),
    "a long-vowel form the glossary does not use": re.compile(
        r"(デコーダ|エンコーダ|トークナイザ|オプティマイザ|パラメータ|ポインタ|ブラウザ|フィルタ"
        r"|コンピュータ)(?!ー)"
    ),
}
# A line that starts a block of its own: a heading, a list item, a table row, a quote, a
# code fence, a blank line, or a line of HTML.
BLOCK_START = re.compile(r"\s*($|#|[-*+] |\d+\. |\||>|```|<|\$\$)")
# A line that no text goes on from: a heading, a table row, a fence, a blank line, HTML (a
# list item's text does go on, on an indented line).
CLOSED = re.compile(r"\s*($|#|\||```|<|\$\$)")


def prose(text: str) -> str:
    return LEFT_OUT.sub("§", text)  # a mark that is neither Japanese nor a space


def broken_paragraphs(markdown: str) -> list[str]:
    """Lines that go on a Japanese sentence begun on the line before."""
    found = []
    lines = markdown.splitlines()
    fenced = False
    for before, line in zip(lines, lines[1:], strict=False):
        if before.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or BLOCK_START.match(line) or CLOSED.match(before):
            continue
        if re.search(JA_TEXT + r"$", before.rstrip()) and re.match(r"\s*" + JA_TEXT, line):
            found.append(f"{before.strip()[-20:]}⏎{line.strip()[:20]}")
    return found


def breaches(text: str, *, markdown: bool) -> list[str]:
    found = []
    shown = prose(text)
    for name, rule in RULES.items():
        for match in rule.finditer(shown):
            start = max(match.start() - 12, 0)
            found.append(f"{name}: …{shown[start : match.end() + 12].strip()}…")
    if markdown:
        found += [f"a line break inside a paragraph: {b}" for b in broken_paragraphs(text)]
    return found


@cache
def cells(path: Path) -> list[dict]:
    """A notebook's cells, read as JSON (nbformat's validation is ten times slower)."""
    return [
        dict(cell, source="".join(cell["source"]))
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
    ]


def japanese_markdown() -> list[tuple[str, str]]:
    texts = [
        (p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in JAPANESE_PAGES
    ]
    for path in JAPANESE_NOTEBOOKS:
        for cell in cells(path):
            if cell["cell_type"] == "markdown":
                where = f"{path.relative_to(ROOT).as_posix()} [{cell.get('id')}]"
                texts.append((where, cell["source"]))
    return texts


def test_the_japanese_markdown_follows_the_glossary_typography():
    found = [
        f"{where}: {b}"
        for where, text in japanese_markdown()
        for b in breaches(text, markdown=True)
    ]
    assert not found, f"{len(found)} breaches:\n" + "\n".join(found[:40])


def test_the_catalogues_follow_the_glossary_typography():
    found = []
    for english, translation in lang.catalogue("ja").items():
        forms = translation if isinstance(translation, tuple) else (translation,)
        for form in forms:
            found += [f"{english!r}: {b}" for b in breaches(form, markdown=False)]
    assert not found, f"{len(found)} breaches:\n" + "\n".join(found[:40])


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("歩く の o", "a space between"),
        ("河岸: 0.25", "half-width punctuation"),
        ("0.570～0.677", "a range mark"),
        ("出力 0..4", "a range mark"),
        ("0.01 〜 100", "a spaced 〜"),
        ("デコーダのみ", "a long-vowel form"),
        ("選び切れるのです無効化は", "a missing 。"),
    ],
)
def test_each_rule_finds_what_it_names(text, rule):
    assert any(b.startswith(rule) for b in breaches(text, markdown=False)), text


def test_quoted_tokens_code_and_math_pass():
    text = "「犬 が 河岸 を」の次は `W_e[ids]: x` と $a_{ij}: 0..4$（0.54〜0.66）。デコーダーのみ"
    assert breaches(text, markdown=False) == []


def test_a_line_break_inside_a_japanese_paragraph_is_found():
    assert broken_paragraphs("注意の重みは\n行ごとに 1 になります。") != []
    assert broken_paragraphs("注意の重み。\n\n- 行ごとに 1") == []


def test_the_japanese_comments_use_the_glossary_long_vowels():
    from english_in_japanese import code_words

    rule = RULES["a long-vowel form the glossary does not use"]
    found = [
        f"{path.relative_to(ROOT).as_posix()} [{cell.get('id')}]: {text[:60]}"
        for path in JAPANESE_NOTEBOOKS
        for cell in cells(path)
        if cell["cell_type"] == "code"
        for text in code_words(cell["source"])
        if rule.search(text)
    ]
    assert not found, "\n".join(found)


def test_no_special_token_is_left_to_the_markdown_renderer():
    # <EXTRACT> outside a code span is an HTML tag to JupyterLab and GitHub: the reader sees
    # nothing where the token should be. Both editions.
    token = re.compile(r"<(?:EXTRACT|SOS|EOS|DELIM|START|PAD)>")
    code = re.compile(r"```.*?```|`[^`]*`|\$[^$]*\$", re.S)
    notebooks = [*JAPANESE_NOTEBOOKS, *(p.parent.parent / p.name for p in JAPANESE_NOTEBOOKS)]
    found = [
        f"{path.relative_to(ROOT).as_posix()} [{cell.get('id')}]"
        for path in notebooks
        for cell in cells(path)
        if cell["cell_type"] == "markdown" and token.search(code.sub("", cell["source"]))
    ]
    assert not found, f"special tokens outside code spans in: {found}"
