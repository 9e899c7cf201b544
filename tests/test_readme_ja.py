"""README.ja.md covers every section of README.md that a learner or teacher needs: each
English heading is mapped here to its Japanese one, which must exist. A new section in
README.md fails this test until it is given a place in README.ja.md (or, for a maintainers'
section, the pointer to the English one)."""

from __future__ import annotations

import re

from notebook_tools import ROOT

# English heading -> the Japanese heading that covers it
SECTIONS = {
    "Attention and the GPT-1 decoder, hands on": (
        "手を動かして学ぶ注意機構と GPT-1 デコーダー（日本語版）"
    ),
    "Two commands": "二つのコマンド",
    "What `make test` needs": "`make test` に必要なもの",
    "Which torch gets installed": "インストールされる torch",
    "The notebooks": "ノートブック",
    "Where each part lives": "各部分の置き場所",
    "The Japanese edition (日本語版)": "翻訳を最新に保つ（メンテナー向け）",
    "Exercises": "演習",
    "Explorers: drawn by the kernel, or in the browser": (
        "カーネルが描くエクスプローラーと、ブラウザーが描くヒートマップ"
    ),
    "Devices": "デバイス",
    "Offline": "オフライン",
    "Binder and JupyterHub": "Binder と JupyterHub",
    # for maintainers, in English: README.ja points to them
    "For maintainers": "メンテナー向けの情報と性能",
    "Performance": "メンテナー向けの情報と性能",
    "Running the benchmarks": "メンテナー向けの情報と性能",
    "`make gpu-check`": "メンテナー向けの情報と性能",
}


def headings(name: str) -> list[str]:
    text = (ROOT / name).read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # a shell comment is not a heading
    return [m.group(1).strip() for m in re.finditer(r"^#{1,3} (.+)$", text, flags=re.M)]


def test_every_english_section_has_its_japanese_place():
    english, japanese = headings("README.md"), set(headings("README.ja.md"))
    unmapped = [h for h in english if h not in SECTIONS]
    assert not unmapped, f"README.md sections with no place in README.ja.md: {unmapped}"
    missing = sorted({SECTIONS[h] for h in english} - japanese)
    assert not missing, f"README.ja.md lacks the sections {missing}"


def test_the_japanese_readme_points_to_the_maintainers_sections_it_leaves_in_english():
    text = (ROOT / "README.ja.md").read_text(encoding="utf-8")
    for heading in ("For maintainers", "Performance", "Running the benchmarks"):
        assert f"「{heading}」" in text
