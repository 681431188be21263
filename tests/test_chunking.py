from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.vault.chunking import MAX_TOKENS, chunk_note, content_hash, estimate_tokens
from memvault.vault.model import dense_context
from memvault.vault.notes import parse_note

ZH_SENTENCE = "我们在周二的会议上决定把向量存储换成嵌入式引擎，因为它启动快、占用内存少，而且不需要单独的服务进程。"
EN_PARAGRAPH = " ".join(["The daemon watches the vault and indexes changed chunks incrementally."] * 6)


def _chunks(text: str, path: str = "notes/a.md"):
    return chunk_note(parse_note(path, text))


def _file_lines(text: str) -> list[str]:
    return text.split("\n")


def test_sections_follow_headings_with_paths_and_line_ranges():
    text = (
        "---\ndate: 2026-01-01\n---\n# Top\n\nintro\n\n## 中文\n\n"
        + ZH_SENTENCE
        + "\n\n### Deeper\n\ntext\n## Back\nend\n"
    )
    chunks = _chunks(text)
    assert [c.heading for c in chunks] == [("Top",), ("Top", "中文"), ("Top", "中文", "Deeper"), ("Top", "Back")]
    assert [(c.start_line, c.end_line) for c in chunks] == [(4, 6), (8, 10), (12, 14), (15, 16)]
    lines = _file_lines(text)
    for chunk in chunks:  # whole-line chunks are exactly the file's lines, blank edges trimmed
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line]).strip()


def test_heading_inside_code_fence_and_seven_hashes_are_not_headings():
    text = "# A\n```sh\n# comment\n```\n####### seven\n"
    assert [c.heading for c in _chunks(text)] == [("A",)]


def test_cjk_is_sized_by_characters():
    paragraph = (ZH_SENTENCE * 7)[:300]
    assert 270 <= estimate_tokens(paragraph) <= 310  # about 280 model tokens
    assert estimate_tokens(EN_PARAGRAPH) < len(EN_PARAGRAPH) / 3


def test_long_chinese_line_splits_at_sentences_within_budget():
    text = "# 会议\n\n" + ZH_SENTENCE * 12 + "\n"
    chunks = _chunks(text)
    assert len(chunks) >= 3
    assert all(estimate_tokens(c.text) <= MAX_TOKENS for c in chunks)
    assert all(c.start_line <= 3 <= c.end_line for c in chunks)
    body = "".join(c.text.removeprefix("# 会议\n\n") for c in chunks)
    assert body.count(ZH_SENTENCE) >= 12  # nothing lost (overlap may repeat a sentence)
    assert all(c.text.endswith("。") for c in chunks)  # cut at sentence ends


def test_long_english_section_splits_at_paragraphs_with_overlap():
    paragraphs = [p for i in range(8) for p in (f"Paragraph {i}. " + EN_PARAGRAPH, f"short line {i}")]
    text = "## Notes\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = _chunks(text)
    assert len(chunks) > 2
    lines = _file_lines(text)
    for chunk in chunks:
        assert estimate_tokens(chunk.text) <= MAX_TOKENS
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line]).strip()
    overlaps = [a.end_line >= b.start_line for a, b in itertools.pairwise(chunks)]
    assert any(overlaps)  # a small last paragraph is repeated at the start of the next chunk
    covered = set()
    for c in chunks:
        covered.update(range(c.start_line, c.end_line + 1))
    assert all(i + 1 in covered for i, line in enumerate(lines) if line.strip())


def test_chunk_ids_are_stable_when_a_line_is_inserted_above():
    text = "# Title\n\nintro\n\n## A\n\n" + EN_PARAGRAPH + "\n\n## B\n\n" + ZH_SENTENCE * 10 + "\n"
    before = _chunks(text)
    after = _chunks("a new first line\n\n" + text)
    assert len(after) == len(before) + 1  # the new preamble chunk
    by_id = {c.id: c for c in after}
    for old in before:
        new = by_id[old.id]
        assert new.content_hash == old.content_hash and new.text == old.text
        assert (new.start_line, new.end_line) == (old.start_line + 2, old.end_line + 2)


def test_chunk_ids_differ_by_path_and_are_uuids():
    a, b = _chunks("# x\ny\n", "a.md"), _chunks("# x\ny\n", "b.md")
    assert a[0].id != b[0].id and a[0].content_hash == b[0].content_hash
    assert len(a[0].id) == 36 and a[0].id.count("-") == 4


def test_empty_and_blank_notes_have_no_chunks():
    assert _chunks("") == [] and _chunks("\n\n  \n") == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["# H", "## 子标题", "", "plain words here", ZH_SENTENCE, EN_PARAGRAPH, "```", "- item", ZH_SENTENCE * 5]
        ),
        max_size=40,
    ),
    st.randoms(),
)
def test_every_chunk_points_at_lines_that_hold_its_text(lines, rnd: random.Random):
    text = "\n".join(lines)
    file_lines = text.split("\n")
    for chunk in _chunks(text):
        assert 1 <= chunk.start_line <= chunk.end_line <= len(file_lines)
        assert estimate_tokens(chunk.text) <= MAX_TOKENS
        span = "\n".join(file_lines[chunk.start_line - 1 : chunk.end_line])
        for part in chunk.text.split("\n"):
            assert part.strip() in span


def test_html_comments_are_dropped_and_lines_kept():
    text = "# T\n\n- turn one <!-- dia:D1:1 -->\n<!-- a\nmulti-line comment -->\n- turn two\n"
    one, two = _chunks(text)
    assert [(c.text, c.start_line, c.end_line) for c in (one, two)] == [("- turn one", 3, 3), ("- turn two", 6, 6)]


def test_each_entry_is_a_unit_ranked_with_its_heading_path_and_free_text_is_packed():
    """The entry is the unit (issue 26): a list item with its continuation and the items nested under
    it, its heading path as the context it is ranked with; paragraphs, tables and code between the
    entries are packed as before, and a heading line alone is left to its entries' context."""
    text = ("# Log\n\n## Trips\n\n- Booked the kayak [key:: kayak] #trip\n  for June\n  - paddles included\n"
            "- Bought a tent\n\nA paragraph of free text.\n\n```\n- not an entry\n```\n")  # fmt: skip
    units = _chunks(text)
    assert [(c.unit, c.start_line, c.end_line) for c in units] == [("entry", 5, 7), ("entry", 8, 8), ("text", 10, 14)]
    kayak = units[0]
    assert kayak.text == "- Booked the kayak [key:: kayak] #trip\n  for June\n  - paddles included"
    assert (kayak.context, kayak.key, kayak.tags) == ("Log > Trips", "kayak", ("trip",))
    assert kayak.vector_text == "Log > Trips\n" + kayak.text
    assert kayak.bm25_text == f"Log > Trips\n{kayak.text}\n{kayak.text}"  # its own words count twice
    tent = units[1]
    assert tent.vector_text == "Log > Trips\n- Bought a tent"
    assert tent.bm25_text == f"Log > Trips\n{kayak.text}\n- Bought a tent\n- Bought a tent"  # and the one before
    assert units[2].vector_text == units[2].bm25_text == units[2].text
    assert len({c.content_hash for c in units}) == 3


def test_a_daily_entry_is_embedded_without_the_days_date_and_ranked_by_bm25_with_it():
    """The dense model reads an entry's heading path less its dates (`vault.model.dense_context`): every
    entry of a day shares them, and the note's date answers date questions. BM25 still reads them."""
    note = parse_note("daily/2023-05-08.md", "# 2023-05-08 工作日志\n\n## Session 1: Ada and Bo, 13:56\n\n"
                      "- **Ada**: I went to the support group yesterday.\n")  # fmt: skip
    (turn,) = chunk_note(note)
    assert turn.context == "2023-05-08 工作日志 > Session 1: Ada and Bo, 13:56"
    assert turn.vector_text == "工作日志 > Session 1: Ada and Bo, 13:56\n" + turn.text  # the time of day stays
    assert turn.bm25_text.startswith("2023-05-08 工作日志 > Session 1")
    assert dense_context("2023-05-08") == ""
    assert dense_context("Release 2023-05-08: notes > Risks") == "Release notes > Risks"
    assert content_hash(turn.vector_text) == turn.content_hash  # what the embedding cache is keyed by


def test_a_daily_notes_overview_counters_are_not_chunked():
    """ "- Completed tasks: 0" came back as a hit and in `context` (issue 26); what a person wrote under
    the overview still is found, and a counter-like line elsewhere is text like any other."""
    import datetime as dt

    from memvault.vault.templates import daily_template

    for lang in ("en", "zh"):
        last = "- Discoveries: 0\n" if lang == "en" else "- 发现：0\n"
        text = daily_template(dt.date(2026, 1, 2), lang).replace(last, last + "- a quiet day overall\n")
        text += "- Todos: 3\n"
        chunks = chunk_note(parse_note("daily/2026-01-02.md", text))
        texts = "\n".join(c.text for c in chunks)
        assert "a quiet day overall" in texts and texts.count(": 0") + texts.count("：0") == 0, lang
        assert chunks[-1].text.endswith("- Todos: 3"), lang
        first = chunks[0]
        assert first.heading[-1] in ("Overview", "概览") and "a quiet day overall" in first.text, lang
        assert "a quiet day overall" in "\n".join(text.splitlines()[first.start_line - 1 : first.end_line])
    memory = parse_note("notes/tasks.md", "# Tasks\n\n## Overview\n\n- Todos: 0\n")
    assert [c.text for c in chunk_note(memory)] == ["- Todos: 0"]  # not a daily note
