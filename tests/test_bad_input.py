"""Broken frontmatter, non-UTF-8, binary and oversized notes: a clear error naming the file,
and the rest of the vault keeps working."""

from __future__ import annotations

import codecs
import hashlib

import pytest

from memvault.vault.errors import NoteReadError
from memvault.vault.fileio import read_note
from memvault.vault.notes import parse_note


def test_broken_frontmatter_is_read_as_text_with_file_and_line(layout, cli):
    note = layout.root / "notes.md"
    note.write_text("---\ntitle: ok\ntags: [unclosed\n---\n# Body\n\nstill here\n", encoding="utf-8")
    parsed = parse_note("notes.md", note.read_text(encoding="utf-8"))
    assert parsed.frontmatter == {}
    assert "still here" in parsed.body and parsed.body_line == 1
    assert parsed.problem is not None and parsed.problem.startswith("notes.md:")
    line = int(parsed.problem.split(":")[1])
    assert 3 <= line <= 4
    result = cli("show", "notes.md")
    assert result.returncode == 0
    assert "still here" in result.stdout
    assert result.stderr.count("broken frontmatter") == 1 and "notes.md" in result.stderr


def test_frontmatter_that_is_not_a_mapping(layout):
    parsed = parse_note("x.md", "---\n- a\n- b\n---\nbody\n")
    assert parsed.problem == "x.md:1: frontmatter is a list, not a mapping; read as plain text"
    assert parsed.body.startswith("---\n- a")


def test_good_frontmatter_sets_date_tags_and_body_line():
    parsed = parse_note("daily/2026-01-02.md", "---\ndate: 2025-05-05\ntags: [a, '#b']\n---\nbody\n")
    assert parsed.problem is None
    assert str(parsed.date) == "2025-05-05" and parsed.tags == ("a", "b")
    assert parsed.body == "body\n" and parsed.body_line == 5


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("中文笔记".encode("gbk"), "not valid UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        (b"\xef\xbb\xbfok then \xff", "not valid UTF-8"),
    ],
)
def test_unreadable_notes_give_one_line_naming_the_file(layout, cli, data, message):
    assert cli("init").returncode == 0
    bad = layout.daily_dir / "2026-01-01.md"
    bad.write_bytes(data)
    result = cli("show", "2026-01-01")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "2026-01-01" in lines[0] and message in lines[0]
    # the rest of the vault keeps working, and writing to the bad note is refused untouched
    assert cli("note", "other day still fine").returncode == 0
    assert cli("remember", "--type", "config", "fine").returncode == 0
    refused = cli("note", "--date", "2026-01-01", "x")
    assert refused.returncode != 0 and message in refused.stderr
    assert bad.read_bytes() == data


def test_oversized_note_is_refused(layout):
    big = layout.root / "big.md"
    big.write_bytes(b"a" * 2048)
    with pytest.raises(NoteReadError, match=r"big\.md: 2,048 bytes is over the 1,024-byte"):
        read_note(big, "big.md", max_bytes=1024)
    # a size the caller already knows is the one checked (and named), without a second stat
    with pytest.raises(NoteReadError, match=r"big\.md: 4,096 bytes is over the 1,024-byte"):
        read_note(big, "big.md", max_bytes=1024, size=4096)


def test_read_note_hashes_the_bytes_it_decoded(layout):
    note = layout.root / "bom.md"
    data = codecs.BOM_UTF8 + "# 标题\r\n\r\ntext\r\n".encode()
    note.write_bytes(data)
    read = read_note(note, "bom.md")
    assert read.sha256 == hashlib.sha256(data).hexdigest() and read.text == "# 标题\r\n\r\ntext\r\n"
    assert (read.bom, read.newline) == (codecs.BOM_UTF8, "\r\n")
    with pytest.raises(NoteReadError, match=r"^gone\.md: vanished before it could be read$"):
        read_note(layout.root / "gone.md", "gone.md", missing="vanished before it could be read")


def test_directory_and_missing_note(layout, cli):
    (layout.root / "dir.md").mkdir()
    for ref, message in (("dir.md", "is a directory"), ("nope.md", "no such note")):
        result = cli("show", ref)
        assert result.returncode != 0 and message in result.stderr and ref in result.stderr
