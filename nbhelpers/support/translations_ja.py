"""The Japanese for the course's own words, keyed by the English text the code passes to
`tr` (support/language.py). Terms follow notebooks/ja/GLOSSARY.md; {placeholders} stay as
they are and may move. tests/test_language.py lists any text missing here."""

JA: dict[str, str] = {
    "{what}: max |error| = {error:.1e} (tolerance {atol:.0e}, shape {shape})": "{what}: 最大誤差 |error| = {error:.1e}（許容誤差 {atol:.0e}、形状 {shape}）",
    "temperature": "温度",
    "attention weight": "注意の重み",
    "key j (attended to)": "キー j（注意を向けられる側）",
    "query i": "クエリ i",
    "head {k}": "ヘッド {k}",
    "bytes (log scale)": "バイト数（対数目盛）",
}
