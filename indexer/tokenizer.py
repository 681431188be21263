"""The one tokenizer for BM25 documents and queries: jieba for CJK runs, lower-cased words otherwise.

Its `VERSION` is recorded in the manifest; when it changes, stored token
counts no longer match what a query would produce, so BM25 is rebuilt.
"""

from __future__ import annotations

import logging
import re
import threading

VERSION = "t1:jieba-search+lower-words"

_CJK_RUN = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]+)")
_WORD = re.compile(r"[^\W_]+")
_lock = threading.Lock()
_jieba = None


def _load_jieba():
    """Load jieba once per process (about half a second of dictionary loading), quietly."""
    global _jieba
    with _lock:
        if _jieba is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            _jieba = jieba
    return _jieba


def tokenize(text: str) -> list[str]:
    """Tokens in text order; CJK runs go through jieba's search mode (words plus their sub-words)."""
    tokens: list[str] = []
    for i, part in enumerate(_CJK_RUN.split(text)):
        if not part:
            continue
        if i % 2:  # a CJK run
            tokens.extend(t for t in _load_jieba().cut_for_search(part) if t.strip())
        else:
            tokens.extend(_WORD.findall(part.lower()))
    return tokens
