"""The CJK character classes, written once: pinned, because chunk boundaries, BM25 tokens and every
benchmark figure depend on them."""

from __future__ import annotations

from memvault.vault.cjk import CJK_LETTER, CJK_RUN, CJK_WIDE, cjk_share


def test_the_classes_are_pinned():
    chars = [chr(c) for c in range(0x2000, 0x30000) if not 0xD800 <= c <= 0xDFFF]
    assert sum(1 for ch in chars if CJK_LETTER.fullmatch(ch)) == 103504
    assert sum(1 for ch in chars if CJK_WIDE.fullmatch(ch)) == 104448
    assert all(CJK_WIDE.fullmatch(ch) for ch in chars if CJK_LETTER.fullmatch(ch))
    for ch in "向ぁカ한豈𠀀":
        assert CJK_LETTER.fullmatch(ch) and CJK_WIDE.fullmatch(ch), ch
    for ch in "。「」、！，：\u3000ㄅ⺀":  # punctuation, ideographic space, bopomofo, radicals: wide, not letters
        assert CJK_WIDE.fullmatch(ch) and not CJK_LETTER.fullmatch(ch), ch
    for ch in "aé1 .,;ä":
        assert not CJK_WIDE.fullmatch(ch), ch


def test_runs_split_and_share():
    assert CJK_RUN.split("abc向量 数据库。カタカナx") == ["abc", "向量", " ", "数据库", "。", "カタカナ", "x"]
    assert cjk_share("向量数据库 cat") == 5 / 8 and cjk_share("vector db") == 0.0 and cjk_share("2026!") == 0.0
