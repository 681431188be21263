"""The `edit` verb (the memory panel's edit in place): the entry named by its version id is replaced
only while it is the exact version the caller read; its stamp, nesting and provenance stay, its old
lines go to the trash, a past day is refused (correct it), a key another entry holds is refused."""

from __future__ import annotations

import datetime as dt

import pytest

from memvault.api import Vault
from memvault.vault.edit import editable
from memvault.vault.entries import vault_entries, version_id
from memvault.vault.errors import MemvaultError
from memvault.vault.forget import entry_version
from memvault.verbs.edit import Edit
from tests.conftest import write_notes

TODAY = dt.date.today()
PAST = TODAY - dt.timedelta(days=3)


def _named(layout, text):
    (e,) = [e for e in vault_entries(layout) if text in e.text]
    return e, f"{e.path}#{version_id(e)}", entry_version(e.text)


@pytest.fixture
def vault(layout):
    write_notes(layout, {
        "MEMORY.md": "# Memory\n\n## Preferences\n\n- Prefers Vue 3 #frontend [key:: fe] <!-- saved 2026-01-02 -->\n"
                     "- Short answers\n  - nested detail [conversation:: c1]\n",
        f"daily/{TODAY}.md": f"# {TODAY}\n\n## Conversations\n\n- 09:15 talked about the release\n",
        f"daily/{PAST}.md": f"# {PAST}\n\n## Conversations\n\n- 10:00 an old day's fact\n",
    })  # fmt: skip
    with Vault(layout.root) as v:
        yield v


def test_edit_replaces_the_entry_in_place_and_keeps_the_old_one_in_the_trash(layout, vault):
    _, ident, version = _named(layout, "Vue")
    done = vault.run(Edit(ident, version, "Prefers Svelte", "fe", ["frontend", "ui"]))
    assert (done.path, done.line, done.status) == ("MEMORY.md", 5, "edited")
    lines = (layout.root / "MEMORY.md").read_text().splitlines()
    assert lines[4] == f"- Prefers Svelte #frontend #ui [key:: fe] <!-- saved {TODAY} -->"
    assert lines[5:] == ["- Short answers", "  - nested detail [conversation:: c1]"]
    assert "Prefers Vue 3" in (layout.trash_dir / "entries" / f"{done.trashed}.md").read_text()


def test_a_daily_entry_keeps_its_stamp_and_a_nested_one_its_place_and_fields(layout, vault):
    _, ident, version = _named(layout, "release")
    vault.run(Edit(ident, version, "talked about the <b>release</b> date", None, ["rel"]))
    daily = (layout.root / f"daily/{TODAY}.md").read_text()
    assert daily.endswith("- 09:15 talked about the <b>release</b> date #rel\n")
    _, ident, version = _named(layout, "nested")
    vault.run(Edit(ident, version, "nested, edited"))
    assert "  - nested, edited [conversation:: c1] <!-- saved" in (layout.root / "MEMORY.md").read_text()


def test_an_entry_changed_since_it_was_read_is_refused_and_nothing_is_written(layout, vault):
    _, ident, version = _named(layout, "Vue")
    path = layout.root / "MEMORY.md"
    path.write_text(path.read_text().replace("[key:: fe]", "[key:: f2]"))  # a key alone changed: the id is the same
    by_editor = path.read_text()
    with pytest.raises(MemvaultError, match="changed"):
        vault.run(Edit(ident, version, "Prefers Svelte", "fe"))
    assert path.read_text() == by_editor
    path.write_text(path.read_text().replace("Prefers Vue 3", "Prefers Vue 2"))
    with pytest.raises(MemvaultError, match="changed or is gone"):
        vault.run(Edit(ident, version, "Prefers Svelte"))


def test_a_past_day_and_a_key_held_elsewhere_are_refused(layout, vault):
    _, ident, version = _named(layout, "old day")
    with pytest.raises(MemvaultError, match="past day"):
        vault.run(Edit(ident, version, "rewritten history"))
    _, ident, version = _named(layout, "Short answers")
    with pytest.raises(MemvaultError, match="key fe names another entry"):
        vault.run(Edit(ident, version, "Short answers", "fe"))


def test_editable_splits_the_appended_tags_from_the_words():
    stored = "09:15 ship #v2 today #rel #ops [key:: k] <!-- saved 2026-01-01 -->"
    assert editable(stored) == ("ship #v2 today", ["rel", "ops"])
    assert editable("#only-tags") == ("#only-tags", [])
    assert editable("first #a\nsecond line [source:: review]") == ("first\nsecond line", ["a"])


def test_forget_with_the_version_read_refuses_an_entry_changed_since(layout, vault, monkeypatch):
    """The panel's forget carries the text it showed: a change by an editor, found before the lock or
    under it (between the read and the write), is refused with the note untouched."""
    import memvault.vault.forget as forgetting
    from memvault.verbs.entries import Forget

    _, ident, version = _named(layout, "Vue")
    path = layout.root / "MEMORY.md"
    path.write_text(path.read_text().replace("[key:: fe]", "[key:: f2]"))  # the key alone: the id is the same
    by_editor = path.read_text()
    with pytest.raises(MemvaultError, match="changed"):
        vault.run(Forget(ident, version=version))
    assert path.read_text() == by_editor
    _, ident, version = _named(layout, "Vue")
    real = forgetting.select

    def then_an_editor_saves(*args):
        found = real(*args)
        path.write_text(path.read_text().replace("Prefers Vue", "PREFERS Vue"))  # its ids stay: case alone
        return found

    monkeypatch.setattr(forgetting, "select", then_an_editor_saves)
    with pytest.raises(MemvaultError, match="changed"):
        vault.run(Forget(ident, version=version))
    assert "PREFERS Vue" in path.read_text() and not list(layout.trash_dir.glob("entries/*.md"))
    monkeypatch.undo()
    _, ident, version = _named(layout, "Vue")
    assert vault.run(Forget(ident, version=version)).line == 5 and "Vue" not in path.read_text()
    with pytest.raises(MemvaultError, match="purge takes no version"):
        vault.run(Forget("Short answers", purge=True, version=version))


def test_correct_with_the_version_read_refuses_an_entry_changed_since(layout, vault):
    """The panel's correct carries the text it showed: an entry an editor changed since is refused
    before anything is written (no correction in today's note, the old entry not marked)."""
    from memvault.verbs.entries import Correct

    _, ident, version = _named(layout, "Vue")
    path = layout.root / "MEMORY.md"
    path.write_text(path.read_text().replace("[key:: fe]", "[key:: f2]"))  # the key alone: the id is the same
    by_editor = path.read_text()
    with pytest.raises(MemvaultError, match="changed since it was read"):
        vault.run(Correct("Prefers Svelte for front ends", ident, version=version))
    today = layout.daily_note(dt.date.today())
    assert path.read_text() == by_editor and not (today.exists() and "Svelte" in today.read_text())
    _, ident, version = _named(layout, "Vue")
    assert vault.run(Correct("Prefers Svelte for front ends", ident, version=version)).status
    assert "superseded::" in path.read_text() and "Svelte" in today.read_text()


def test_an_edit_sets_or_clears_the_importance_and_keeps_it_otherwise(layout, vault):
    path = layout.root / "MEMORY.md"
    _, ident, version = _named(layout, "Vue")
    vault.run(Edit(ident, version, "Prefers Vue 3 for front ends", "fe", importance=5))
    assert "Prefers Vue 3 for front ends [key:: fe] [importance:: 5]" in path.read_text()
    _, ident, version = _named(layout, "Vue")
    vault.run(Edit(ident, version, "Prefers Vue 3.5 for front ends", "fe"))  # left out: kept as it was
    assert "Prefers Vue 3.5 for front ends [key:: fe] [importance:: 5]" in path.read_text()
    _, ident, version = _named(layout, "Vue")
    vault.run(Edit(ident, version, "Prefers Vue 3.5 for front ends", "fe", importance=0))  # 0: none
    assert "[importance::" not in path.read_text()
    with pytest.raises(MemvaultError, match="importance is 1 to 5"):
        Edit(ident, version, "x", importance=7)
