"""The generated corpus of notebook 08: a Japanese grammar with exact distributions, and its
tokenizer; BPE learned from its sentences (`bpe`, notebook 06); and labelled tasks built
from it (`tasks`, notebook 11)."""

from .grammar import JapaneseGrammar
from .tokenizer import EOS, PAD, SOS, SPECIALS, Tokenizer

__all__ = ["EOS", "PAD", "SOS", "SPECIALS", "JapaneseGrammar", "Tokenizer"]
