from __future__ import annotations

import codecs
import datetime as dt

from memvault.vault.daily import append_daily
from memvault.vault.memory_file import init_vault

NOON = dt.datetime(2026, 3, 4, 12, 30)


def test_first_note_creates_template_then_appends(layout):
    init_vault(layout)
    path = append_daily(layout, "第一条", now=NOON).path
    append_daily(layout, "second entry\nwith two lines", now=NOON)
    text = path.read_text(encoding="utf-8")
    assert path == layout.root / "daily" / "2026-03-04.md"
    assert text.startswith("---\ndate: 2026-03-04\n---\n# 2026-03-04 工作日志\n")  # frontmatter: its date
    assert "- 对话：2\n" in text
    conv = text.split("## 对话记录\n", 1)[1].split("## ", 1)[0]
    assert conv == "\n- 12:30 第一条\n- 12:30 second entry\n  with two lines\n\n"


def test_english_vault_gets_english_daily_template(layout):
    init_vault(layout, "en")
    path = append_daily(layout, "todo item", section="todo", now=NOON).path
    text = path.read_text(encoding="utf-8")
    assert "# 2026-03-04 Daily Log" in text
    assert "- Todos: 1\n" in text
    assert text.split("## Todos\n", 1)[1].startswith("\n- 12:30 todo item\n")


def test_note_cli_today_stdin_and_date(layout, cli):
    assert cli("init").returncode == 0
    assert cli("note", "from argv").returncode == 0
    assert cli("note", input="from stdin\n").returncode == 0
    result = cli("note", "--date", "2025-12-31", "back-dated")
    assert result.returncode == 0, result.stderr
    today = layout.daily_note(dt.date.today()).read_text(encoding="utf-8")
    assert "from argv" in today and "from stdin" in today
    old = layout.daily_note(dt.date(2025, 12, 31)).read_text(encoding="utf-8")
    assert "\n- back-dated\n" in old  # no time stamp on another day's note
    shown = cli("show", "2025-12-31")
    assert shown.returncode == 0 and "back-dated" in shown.stdout


def test_existing_past_day_is_frozen(layout, cli):
    """A missing past day may be created (a backfill); once it exists, saves are refused, naming `correct`."""
    past = layout.daily_note(dt.date.today() - dt.timedelta(days=3))
    day = past.stem
    assert cli("note", "--date", day, "backfilled").returncode == 0
    before = past.read_bytes()
    for args in (("note", "--date", day, "later"), ("note", "--date", day, "--key", "k", "keyed")):
        refused = cli(*args)
        assert refused.returncode == 2, refused.stderr
        line = refused.stderr.strip()
        assert "\n" not in line and "frozen" in line and "memvault correct" in line and day in line
    assert past.read_bytes() == before
    assert cli("note", "today is open").returncode == 0
    assert cli("note", "today is open, twice").returncode == 0


def test_append_keeps_crlf_endings_and_every_existing_byte(layout):
    path = layout.daily_note(NOON.date())
    path.parent.mkdir(parents=True)
    original = "# day\r\n\r\n## 对话记录\r\n\r\n- old\r\n\r\n## 待办事项\r\n\r\n- x\n"
    path.write_bytes(original.encode())
    append_daily(layout, "new", now=NOON)
    data = path.read_bytes()
    assert data == original.replace("- old\r\n", "- old\r\n- 12:30 new\r\n").encode()


def test_append_keeps_utf8_bom_and_utf16(layout):
    path = layout.daily_note(NOON.date())
    path.parent.mkdir(parents=True)
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        path.write_bytes(bom + "# 日志\n\n## 对话记录\n".encode(encoding))
        append_daily(layout, "笔记", now=NOON)
        data = path.read_bytes()
        assert data.startswith(bom)
        assert data[len(bom) :].decode(encoding) == "# 日志\n\n## 对话记录\n\n- 12:30 笔记\n"
