from __future__ import annotations

import datetime as dt
import json

import pytest

from memvault.vault.memory_file import SAVE_TYPES, init_vault, list_sections, remember, rewrite
from memvault.vault.templates import MEMORY_SECTIONS


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_save_type_goes_to_its_place(layout, lang):
    init_vault(layout, lang)
    for kind in SAVE_TYPES:
        saved = remember(layout, f"entry of type {kind}", kind=kind)
        if kind in MEMORY_SECTIONS:
            assert saved.section == MEMORY_SECTIONS[kind][lang]
            assert saved.path == layout.memory_md
        else:
            assert saved.path == layout.daily_note(dt.date.today())
    counts = {s.title: s.items for s in list_sections(layout)}
    assert counts == {titles[lang]: 1 for titles in MEMORY_SECTIONS.values()}
    daily = layout.daily_note(dt.date.today()).read_text(encoding="utf-8")
    assert "entry of type conversation" in daily and "entry of type daily" in daily


def test_remember_appends_at_end_of_named_section(layout):
    init_vault(layout)
    remember(layout, "一", section="用户偏好")
    remember(layout, "二", section="用户偏好")
    remember(layout, "三", section="系统配置")
    text = layout.memory_md.read_text(encoding="utf-8")
    day = f" <!-- saved {dt.date.today().isoformat()} -->"  # the day memvault wrote it
    assert f"## 用户偏好\n\n- 一{day}\n- 二{day}\n\n## 架构决策" in text
    assert text.endswith(f"## 系统配置\n\n- 三{day}\n")


def test_missing_section_is_created_and_said(layout, cli):
    assert cli("init").returncode == 0
    result = cli("remember", "--section", "Reading list", "Designing Data-Intensive Applications")
    assert result.returncode == 0, result.stderr
    assert "did not exist" in result.stderr and "Reading list" in result.stderr
    counts = cli("sections")
    assert counts.returncode == 0
    assert counts.stdout.splitlines()[-1].split() == ["Reading", "list", "1"]


def test_sections_counts_top_level_items_only(layout, cli):
    layout.memory_md.write_text(
        "# M\n\n## A\n\n- one\n  - nested\n* two\n1. three\n\n```\n- in code\n## not a section\n```\n\n## B\n\ntext\n",
        encoding="utf-8",
    )
    result = cli("sections")
    assert result.returncode == 0
    assert [line.split() for line in result.stdout.splitlines()] == [["A", "3"], ["B", "0"]]
    as_json = json.loads(cli("sections", "--json").stdout)
    assert as_json == {"sections": [{"title": "A", "items": 3, "line": 3}, {"title": "B", "items": 0, "line": 15}]}


def test_remember_with_no_section_or_type_appends_at_the_end_of_memory_md(layout, cli):
    """Seed 003's appendToMemory: an entry given no place goes to the end of the note, its last `##`
    section (before, the save was refused); a note with no section gets one."""
    init_vault(layout, "en")
    last = list_sections(layout)[-1].title
    assert cli("remember", "The printer on floor 3 needs a PIN").returncode == 0
    text = layout.memory_md.read_text(encoding="utf-8")
    assert text.rstrip().splitlines()[-1].startswith("- The printer on floor 3 needs a PIN")
    assert {s.title: s.items for s in list_sections(layout)}[last] == 1
    layout.memory_md.write_text("# Memory\n\nsome prose, no sections\n", encoding="utf-8")
    saved = remember(layout, "Badges are renewed in March")
    assert saved.section == "Notes" and saved.created_section
    assert layout.memory_md.read_text(encoding="utf-8").startswith("# Memory\n\nsome prose, no sections\n")


def test_rewrite_keeps_a_backup_in_trash(layout, cli):
    init_vault(layout)
    remember(layout, "old fact", section="用户偏好")
    before = layout.memory_md.read_bytes()
    result = cli("rewrite", "memory", input="# 新的\n\n## 用户偏好\n\n- new fact\n")
    assert result.returncode == 0, result.stderr
    assert "new fact" in layout.memory_md.read_text(encoding="utf-8")
    backups = list(layout.trash_dir.rglob("MEMORY.md.*.bak"))
    assert len(backups) == 1 and backups[0].read_bytes() == before


def test_rewrite_of_missing_note_makes_no_backup(layout):
    kept = rewrite(layout, layout.root / "notes" / "new.md", "# fresh\n")
    assert kept is None
    assert (layout.root / "notes" / "new.md").read_text(encoding="utf-8") == "# fresh\n"
