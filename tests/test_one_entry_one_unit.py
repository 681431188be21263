"""Issue 47: one notion of an entry. What `list` reads as one entry (a list item, its paragraphs past a
blank line, a fenced block inside it) is one unit to the index, with the same first and last line, its
key found on it; only the text between entries is text."""

from __future__ import annotations

from memvault.vault.chunking import chunk_note
from memvault.vault.entries import iter_entries
from memvault.vault.notes import parse_note
from memvault.vault.sections import entry_lines

NOTE = """# Memory

## Decisions

- We use Postgres.

  Because of the JSON support. [key:: db]
- Second entry #infra
- Third, with code:

  ```
  x = 1

  - not an item
  ```

  And a last paragraph.
- After the fence

Some free text.

More free text.

## Preferences

- Prefers short answers
"""


def _check(note_text: str, path: str = "MEMORY.md") -> None:
    note = parse_note(path, note_text)
    entries = list(iter_entries(note))
    units = chunk_note(note)
    entry_units = [u for u in units if u.unit == "entry"]
    assert [(u.start_line, u.end_line) for u in entry_units] == [(e.start_line, e.end_line) for e in entries]
    assert [u.key for u in entry_units] == [e.key for e in entries]
    covered = {n for e in entries for n in range(e.start_line, e.end_line + 1)}
    for u in units:  # no text unit holds a line of an entry
        if u.unit == "text":
            assert not covered & set(range(u.start_line, u.end_line + 1)), (u.start_line, u.end_line, u.text)


def test_an_entry_with_blank_lines_is_one_unit_as_list_reads_it():
    _check(NOTE)
    decisions = [u for u in chunk_note(parse_note("MEMORY.md", NOTE)) if u.unit == "entry"]
    assert "Because of the JSON support" in decisions[0].text and decisions[0].key == "db"
    assert "And a last paragraph" in decisions[2].text and "- not an item" in decisions[2].text


def test_a_saved_text_with_blank_lines_is_one_unit():
    """As the save path writes it (`entry_lines`), into MEMORY.md and a daily note."""
    said = "First paragraph of the fact.\n\nSecond paragraph, after a blank line.\n\n\nA third, after two."
    body = "\n".join(entry_lines(said))
    _check(f"# Memory\n\n## Notes\n\n{body}\n- Another fact\n")
    _check(f"---\ndate: 2026-01-02\n---\n# 2026-01-02\n\n## Conversation\n\n{body}\n", "daily/2026-01-02.md")
