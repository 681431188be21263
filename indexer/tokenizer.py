"""The tokenizers for BM25 documents and queries: jieba for CJK runs, lower-cased words otherwise.

A variant is named by its parts, for instance `search+stop+stem`:
- `search` (jieba's `cut_for_search`: words plus their sub-words) or `lcut`
  (jieba's precise mode: each word once) for CJK runs;
- `stop`: drop English and Chinese stop words (`indexer.stopwords`);
- `stem`: Snowball English (Porter 2) stemming of Latin words.

The index records the variant it was built with (`Tokenizer.version`) and a
reader always uses that one, because stored token counts only match queries
cut the same way; a writer given another variant re-tokenises the stored text.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import cached_property

from memvault.vault.cjk import CJK_RUN
from memvault.vault.errors import UsageError

_WORD = re.compile(r"[^\W_]+")
_LATIN = re.compile(r"[a-z]+")
_lock = threading.Lock()
_jieba = None

CJK_MODES = ("search", "lcut")
VARIANTS = tuple(
    f"{cjk}{'+stop' if stop else ''}{'+stem' if stem else ''}"
    for cjk in CJK_MODES
    for stop in (False, True)
    for stem in (False, True)
)


def _load_jieba():
    """jieba's cutter, made once per process (`indexer.cjkwords`: milliseconds, not the dictionary's 0.7 s)."""
    global _jieba
    with _lock:
        if _jieba is None:
            from memvault.indexer.cjkwords import load_tokenizer

            _jieba = load_tokenizer()
    return _jieba


@dataclass(frozen=True)
class Tokenizer:
    """One tokenizer variant; the same instance cuts documents and queries."""

    cjk: str = "search"
    stop: bool = False
    stem: bool = False

    @classmethod
    def named(cls, name: str) -> Tokenizer:
        parts = name.split("+")
        if parts[0] not in CJK_MODES or not set(parts[1:]) <= {"stop", "stem"} or len(set(parts)) != len(parts):
            raise UsageError(f"{name!r}: unknown tokenizer; use one of {', '.join(VARIANTS)}")
        return cls(parts[0], "stop" in parts, "stem" in parts)

    @classmethod
    def from_version(cls, version: str | None) -> Tokenizer | None:
        """The variant an index recorded, or None when it predates variants or is not one we know."""
        if not version or not version.startswith("t2:"):
            return None
        try:
            return cls.named(version.removeprefix("t2:"))
        except UsageError:
            return None

    @property
    def name(self) -> str:
        return f"{self.cjk}{'+stop' if self.stop else ''}{'+stem' if self.stem else ''}"

    @property
    def version(self) -> str:
        return f"t2:{self.name}"

    @cached_property
    def _stemmer(self):
        from py_rust_stemmers import SnowballStemmer

        return SnowballStemmer("english")

    def __call__(self, text: str) -> list[str]:
        """Tokens in text order."""
        tokens: list[str] = []
        for i, part in enumerate([text] if text.isascii() else CJK_RUN.split(text)):  # ASCII holds no CJK run
            if not part:
                continue
            if i % 2:  # a CJK run
                jieba = _load_jieba()
                words = jieba.cut_for_search(part) if self.cjk == "search" else jieba.lcut(part)
                tokens.extend(t for t in words if t.strip())
            else:
                tokens.extend(_WORD.findall(part.lower()))
        if self.stop:
            from memvault.indexer.stopwords import STOP_WORDS

            tokens = [t for t in tokens if t not in STOP_WORDS]
        if self.stem:
            latin = [i for i, t in enumerate(tokens) if _LATIN.fullmatch(t)]
            for i, stemmed in zip(latin, self._stemmer.stem_words([tokens[i] for i in latin]), strict=True):
                tokens[i] = stemmed
        return tokens


PLAIN = Tokenizer()
# chosen by `python -m bench matrix`: stop words and stemming gained on all three sets, search mode beat
# lcut on CMRC (nDCG@10 0.983 against 0.982; see bench/results/README.md)
DEFAULT = Tokenizer("search", stop=True, stem=True)


def dictionary_count(word: str) -> int:
    """How often jieba's dictionary counts a Chinese word: 0 for one it does not know (a name, a new term),
    which it cuts by its HMM."""
    return int(_load_jieba().FREQ.get(word) or 0)


def tokenize(text: str) -> list[str]:
    """The plain variant (jieba search mode, every word, unstemmed): what snippets and the substring fallback match."""
    return PLAIN(text)
