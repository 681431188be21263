"""A superseded entry a person edits by hand (a typo fixed) keeps its correction (issue 48): its pointer
names the old text's version id, which the edit changed, so the correction is found again among the
pointers into its note that name no entry there any more, by key, else by the words they share."""

from __future__ import annotations

import datetime as dt

import pytest

from memvault.api import Vault
from tests.conftest import write_notes

TODAY = dt.date.today()


@pytest.fixture
def vault(layout):
    write_notes(layout, {
        "MEMORY.md": "# Memory\n\n## Preferences\n\n- Prefers Vue 3 for front ends [key:: fe]\n"
                     "- Deploys on Fridays after lunch\n- Reviews pull requests in the morning\n",
    })  # fmt: skip
    with Vault(layout.root) as v:
        v.correct("Prefers Svelte for front ends", key="fe")
        v.correct("Deploys on Thursdays after lunch", match="Deploys on Fridays")
        v.correct("Reviews pull requests after standup", match="Reviews pull requests in")
        v.index()
        yield v


def _edit(layout, old, new):
    path = layout.root / "MEMORY.md"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _linked(vault):
    return {e["text"].split(" [")[0]: e["superseded_by"] for e in vault.entries().entries if e["superseded"]}


@pytest.mark.parametrize(("old", "new"), [("Vue 3 for front ends", "Vue 3 for frontends"),  # keyed
                                          ("Deploys on Fridays", "Deploys to prod on Fridays")])  # fmt: skip
def test_a_superseded_entry_edited_by_hand_keeps_its_correction(layout, vault, old, new):
    before = _linked(vault)
    assert all(before.values())
    _edit(layout, old, new)
    vault.index()
    after = _linked(vault)
    assert sorted(after.values()) == sorted(before.values())  # each still points at its own correction
    edited = next(text for text in after if new in text)
    hits = vault.search(edited.removeprefix("- "), limit=10)
    lines = [(h.path, h.start_line) for h in hits]
    where = after[edited].rpartition(":")
    fix = (where[0], int(where[2]))
    superseded = next(i for i, h in enumerate(hits) if new in h.text)
    assert fix in lines and lines.index(fix) < superseded  # the newer fact ranks above the old one
