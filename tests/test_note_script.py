"""The script a note is written in (issue 44): a Chinese entry memvault saved with a key and its
`saved` comment had more Latin letters in its markup than Chinese characters in its sentence, so it
was indexed as English: a Chinese question then found it only across scripts, and an English one
counted it in its own half. The script is now read from the sentence, a CJK character to a word."""

from __future__ import annotations

import re

import pytest

from memvault.api import Vault
from memvault.indexer.config import IndexConfig
from memvault.indexer.filters import FilterSpec
from memvault.search.engine import Searcher
from memvault.vault.cjk import written_in
from tests.conftest import write_notes

KEY = re.compile(r"\[key:: ([\w-]+)\]")
CHINESE = [
    "- 代码注释一律用英文写 [key:: zh-comments] <!-- saved 2026-12-05 -->",
    "- 内部 npm 镜像地址是 npm.internal.example [key:: zh-npm] <!-- saved 2026-12-05 -->",
    "- 远程办公要先连公司的 WireGuard VPN [key:: zh-vpn] <!-- saved 2026-12-05 -->",
]
ENGLISH = [
    "- Met 王伟 at the conference about the budget [key:: budget-meeting] <!-- saved 2026-12-05 -->",
    "- The staging database listens on port 5433 [key:: staging-db] <!-- saved 2026-12-05 -->",
]


@pytest.mark.parametrize(("text", "script"), [
    ("代码注释一律用英文写", "cjk"), ("内部 npm 镜像地址是 npm.internal.example", "cjk"),
    ("Met 王伟 at the conference about the budget", "latin"), ("CI 用的是什么？", "cjk"),
    ("Uses Vue 3 和 Pinia", "latin"), ("port 5433", "latin"),
])  # fmt: skip
def test_a_sentence_is_in_the_script_of_most_of_its_words(text, script):
    assert written_in(text) == script


def test_keyed_chinese_entries_are_indexed_in_the_chinese_half(layout):
    write_notes(layout, {"MEMORY.md": "# Memory\n\n## Facts\n\n" + "\n".join(CHINESE + ENGLISH) + "\n"})
    with Vault(layout.root) as vault:
        vault.index()
    with Searcher.open(layout, IndexConfig()) as searcher:  # the index the searches read
        index = searcher.index
        assert index is not None
        query = index.embedder.embed_query("远程办公")
        halves = {s: index.chunk_rows([c for c, _ in index.vector_top(query, 20, FilterSpec(script=s))])
                  for s in ("cjk", "latin")}  # fmt: skip
        for script, entries in (("cjk", CHINESE), ("latin", ENGLISH)):
            keys = sorted(KEY.search(r.text).group(1) for r in halves[script].values())  # type: ignore[union-attr]
            assert keys == sorted(KEY.search(e).group(1) for e in entries), script  # type: ignore[union-attr]
