"""Which characters are CJK, written once: for the tokenizer's CJK runs, chunking's token estimate
and search's "is this a Chinese query" test.

Two sets of ranges, as regex class fragments:
- `LETTERS`: the scripts jieba cuts and a query's language is judged by (kana, CJK ideographs,
  Hangul syllables);
- `WIDE_EXTRAS`: the other wide characters chunking counts as about one model token each
  (radicals, CJK punctuation such as 。「」, Bopomofo and jamo, full-width forms such as ！，).

Changing either changes BM25 tokens or chunk boundaries, and with them every index and
benchmark figure: bump `vault.chunking.VERSION` (and re-run the benchmark) if you must.
"""

from __future__ import annotations

import re
from typing import Any

LETTERS = (
    r"\u3040-\u30ff"  # Hiragana, Katakana
    r"\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    r"\u4e00-\u9fff"  # CJK Unified Ideographs
    r"\uac00-\ud7af"  # Hangul Syllables
    r"\uf900-\ufaff"  # CJK Compatibility Ideographs
    r"\U00020000-\U0002fa1f"  # Extensions B-F and the Compatibility Ideographs Supplement
)
WIDE_EXTRAS = (
    r"\u2e80-\u2fff"  # CJK and Kangxi radicals, ideographic description characters
    r"\u3000-\u303f"  # CJK Symbols and Punctuation (ideographic space, 。「」、)
    r"\u3100-\u31ff"  # Bopomofo, Hangul Compatibility Jamo, Kanbun, CJK Strokes, Katakana extensions
    r"\uff00-\uffef"  # Halfwidth and Fullwidth Forms (！，：)
)


class _OnFirstUse:
    """A pattern compiled when first used: each of these classes takes 6 ms to compile (re fills a
    65,536-entry map), and most processes (an English search through the daemon) never use one."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(self._source)
        return getattr(self._compiled, name)


def on_first_use(source: str) -> re.Pattern[str]:
    """`re.compile(source)`, done when the pattern is first used: for any class of CJK ranges."""
    return _OnFirstUse(source)  # type: ignore[return-value]


LETTER_CLASS = f"[{LETTERS}]"
CJK_LETTER = on_first_use(LETTER_CLASS)  # one CJK letter
CJK_RUN = on_first_use(f"({LETTER_CLASS}+)")  # a run of them, captured so that `split` keeps the runs
CJK_WIDE = on_first_use(f"[{LETTERS}{WIDE_EXTRAS}]")  # one character chunking counts as a token of its own


def cjk_share(text: str) -> float:
    """The share of a text's letters that are CJK: how search tells a Chinese query from an English one."""
    if text.isascii():
        return 0.0
    cjk = sum(len(run) for run in CJK_RUN.findall(text))
    letters = sum(map(str.isalpha, text))
    return cjk / letters if letters else 0.0


SCRIPTS = ("latin", "cjk")
_OTHER_WORD = on_first_use(r"[^\W\d_]+")  # a run of letters (with the CJK runs taken out first)


def script_of(text: str) -> str:
    """`cjk` when most of a text's letters are CJK, else `latin`: the halves of a vault that a
    multilingual dense retriever is asked about separately (an English question ranks a Chinese
    note below English near-misses, whatever it says)."""
    return "cjk" if cjk_share(text) >= 0.5 else "latin"


def written_in(text: str) -> str:
    """The script a note's sentence is written in: its CJK characters against its other words, a
    character to a word, so a Chinese sentence that names `npm.internal.example` stays Chinese (by
    letters, its 21 Latin ones outweigh its 7 characters) and an English one that names 王伟 stays
    English. Its markup is for the caller to take out first (`vault.entries.one_line`)."""
    if text.isascii():
        return "latin"
    cjk = sum(len(run) for run in CJK_RUN.findall(text))
    words = len(_OTHER_WORD.findall(CJK_RUN.sub(" ", text)))
    return "cjk" if cjk and cjk >= words else "latin"


def other_script(script: str) -> str:
    """The script a vault's notes are written in that `script` is not."""
    return next(s for s in SCRIPTS if s != script)
