"""The Japanese for the course's own words, keyed by the English text the code passes to
`tr` (support/language.py). Terms follow notebooks/ja/GLOSSARY.md; {placeholders} stay as
they are and may move. tests/test_language.py lists any text missing here."""

JA: dict[str, str] = {}
