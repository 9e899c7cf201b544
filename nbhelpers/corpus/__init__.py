"""The generated corpus of notebook 08: a Japanese grammar with exact distributions, and its
tokenizer."""

from .grammar import JapaneseGrammar
from .tokenizer import EOS, PAD, SOS, SPECIALS, Tokenizer

__all__ = ["EOS", "PAD", "SOS", "SPECIALS", "JapaneseGrammar", "Tokenizer"]
