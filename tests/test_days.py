"""Days: summaries (frontmatter `index`) indexed and gathered into the yearly catalog, the catalog
repaired when edited by hand, `recent` with the notes' figures, and opt-in retention."""

from __future__ import annotations

import datetime as dt
import json

from memvault.daemon.client import ask
from memvault.vault.entries import iter_entries, version_id
from memvault.vault.notes import parse_note
from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV, wait_for

TODAY = dt.date.today()
OLD = [TODAY - dt.timedelta(days=n) for n in (40, 35, 3)]


def _day(layout, day: dt.date, summary: str | None, body: str) -> None:
    head = f"---\ndate: {day.isoformat()}\n" + (f"index: '{summary}'\n" if summary else "") + "---\n"
    path = layout.daily_note(day)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + f"# {day.isoformat()} Daily Log\n\n## Conversations\n\n{body}", encoding="utf-8")


def _catalog(layout, year: int) -> str:
    return (layout.root / "catalog" / f"{year}.tsv").read_text(encoding="utf-8")


def test_a_summary_written_in_an_editor_is_found_and_catalogued(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    _day(layout, OLD[2], "Zorblat project kickoff with Mira; budget 40k", "- talked about the plan\n")
    assert cli("note", "first entry of today").returncode == 0
    today_text = layout.daily_note(TODAY).read_text(encoding="utf-8")
    assert today_text.startswith(f"---\ndate: {TODAY.isoformat()}\n---\n")  # memvault writes the date
    # the daemon runs retention by itself; its first run fails (the trash cannot be made) and is retried
    _day(layout, OLD[0], "Forty days ago", "- old a\n")
    (layout.root / "memvault.toml").write_text("retention_days = 30\n")
    (layout.root / ".trash").write_text("not a folder")
    start_daemon(cli, layout.root, "--rescan", "1", env=HASH_ENV)
    try:
        status = lambda: ask(layout, {"op": "status"})["status"]  # noqa: E731
        wait_for(lambda: any("retention failed" in e for e in status()["errors"]))
        assert layout.daily_note(OLD[0]).exists()
        (layout.root / ".trash").unlink()
        (kept,) = wait_for(lambda: list((layout.root / ".trash" / "daily").glob(f"{OLD[0].isoformat()}.md.*.bak")))
        assert "Forty days ago" in kept.read_text(encoding="utf-8") and not layout.daily_note(OLD[0]).exists()
        hits = json.loads(cli("search", "--json", "--mode", "bm25", "Zorblat").stdout)["hits"]
        assert hits[0]["path"] == f"daily/{OLD[2].isoformat()}.md" and hits[0]["heading"] == ["index"]
        assert hits[0]["start_line"] == 1 and "Zorblat project kickoff" in hits[0]["snippet"]
        set_today = cli("summary", "Shipped the catalog; 3 bugs open")
        assert set_today.returncode == 0 and "indexed by the daemon" in set_today.stdout
        assert cli("summary", OLD[2].isoformat(), "Zorblat kickoff, budget 45k").returncode == 0  # past day: explicit
        text = layout.daily_note(TODAY).read_text(encoding="utf-8")
        assert text.startswith(f'---\ndate: {TODAY.isoformat()}\nindex: "Shipped the catalog; 3 bugs open"\n---\n')
        catalog = _catalog(layout, OLD[2].year) if OLD[2].year == TODAY.year else _catalog(layout, TODAY.year)
        assert f"{TODAY.isoformat()}\tShipped the catalog; 3 bugs open\n" in catalog
        printed = cli("catalog", str(OLD[2].year)).stdout
        assert f"{OLD[2].isoformat()}\tZorblat kickoff, budget 45k\n" in printed
        assert json.loads(cli("search", "--json", "--mode", "bm25", "45k").stdout)["hits"]
    finally:
        cli("daemon", "stop")
    for bad in ("two\nlines", "a\ttab", "x" * 301, " "):
        refused = cli("summary", bad)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, bad
    _day(layout, OLD[1], "has\ta tab", "- x\n")
    indexed = cli("index", env=HASH_ENV)
    assert indexed.returncode == 0 and "without tabs; it is not indexed" in indexed.stderr


def test_a_catalog_edited_by_hand_is_regenerated_and_said(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    summarised, bare = dt.date(2025, 3, 6), dt.date(2025, 3, 1)  # one year, whatever today is
    _day(layout, summarised, "Kept in the notes", "- a\n")
    _day(layout, bare, None, "- b\n")  # no summary: a line with nothing after the tab
    assert cli("index", env=HASH_ENV).returncode == 0
    year = summarised.year
    expected = _catalog(layout, year)
    assert expected == f"{bare.isoformat()}\t\n{summarised.isoformat()}\tKept in the notes\n"
    (layout.root / "catalog" / f"{year}.tsv").write_text("2099-01-01\tinvented\n", encoding="utf-8")
    shown = cli("catalog", str(year))
    assert shown.returncode == 0 and "edited by hand" in shown.stderr and "invented" not in shown.stdout
    assert _catalog(layout, year) == expected
    (layout.root / "catalog" / f"{year}.tsv").unlink()  # derived, safe to delete: the next index brings it back
    assert cli("index", env=HASH_ENV).returncode == 0
    assert _catalog(layout, year) == expected


def test_an_edit_rewrites_only_its_days_lines_and_the_catalog_is_what_the_notes_say(layout, cli, monkeypatch):
    """An index after one note changed reads that day again, not the year's notes; what it writes is
    what a rebuild from every note writes, through edits, new days, a deleted day and a broken file."""
    from memvault.vault import catalog

    assert cli("init", "--lang", "en").returncode == 0
    days = [dt.date(2025, 1, 1) + dt.timedelta(days=7 * i) for i in range(12)]
    for i, day in enumerate(days):
        _day(layout, day, f"week {i}" if i % 3 else None, f"- entry {i}\n")
    assert cli("index", env=HASH_ENV).returncode == 0
    read: list[dt.date] = []
    summary_in = catalog._summary_in
    monkeypatch.setattr(catalog, "_summary_in", lambda lay, path, day: read.append(day) or summary_in(lay, path, day))
    steps = [
        (lambda: _day(layout, days[4], "week 4, edited", "- entry 4\n"), [days[4]]),
        (lambda: _day(layout, dt.date(2025, 6, 1), "a new day", "- new\n"), [dt.date(2025, 6, 1)]),
        (lambda: layout.daily_note(days[7]).unlink(), []),
        (lambda: _day(layout, days[0], None, "- entry 0, no summary now\n"), [days[0]]),
    ]
    for step, changed in steps:
        read.clear()
        step()
        assert cli("index", env=HASH_ENV).returncode == 0
        assert read == changed  # only the changed day's note is read again
        assert _catalog(layout, 2025) == catalog.expected(layout, 2025)
    (layout.root / "catalog" / "2025.tsv").write_text("not a catalog\n", encoding="utf-8")
    _day(layout, days[2], "week 2, edited", "- entry 2\n")
    assert cli("index", env=HASH_ENV).returncode == 0  # a file not as memvault wrote it: rebuilt from every note
    assert _catalog(layout, 2025) == catalog.expected(layout, 2025) and "week 2, edited" in _catalog(layout, 2025)


def test_recent_and_status_give_the_figures_in_the_notes(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    _day(layout, OLD[2], "An old day", "- one\n- two\n")
    assert cli("note", "talked with Sam").returncode == 0
    assert cli("note", "--section", "todo", "write the docs").returncode == 0
    assert cli("note", "--section", "discovery", "the cache holds 10k items").returncode == 0
    for done in ("shipped the catalog", "fixed the tab bug"):
        assert cli("note", "--section", "task", done).returncode == 0
    days = json.loads(cli("recent", "--json").stdout)["days"]
    assert [d["date"] for d in days] == [TODAY.isoformat(), OLD[2].isoformat()]
    assert (days[0]["conversations"], days[0]["todos"], days[0]["discoveries"], days[0]["tasks_done"]) == (1, 1, 1, 2)
    assert days[1]["conversations"] == 2 and days[1]["summary"] == "An old day" and days[1]["words"] > 5
    assert json.loads(cli("recent", "1", "--json").stdout)["days"] == days[:1]
    today = json.loads(cli("status", "--json").stdout)["today"]
    assert today["conversations"] == 1 and today["todos"] == 1 and today["tasks_done"] == 2
    assert "1 conversations, 2 tasks done, 1 todos" in cli("recent").stdout


def test_retention_moves_old_summarised_days_to_the_trash_and_the_catalog_keeps_them(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    at, past = TODAY - dt.timedelta(days=30), TODAY - dt.timedelta(days=31)  # at the limit, one day past it
    _day(layout, OLD[0], "Forty days ago", "- old a\n")
    _day(layout, OLD[1], None, "- old b, no summary\n")
    _day(layout, OLD[2], "Three days ago", "- recent\n")
    _day(layout, past, "Thirty-one days ago", "- just old\n")
    _day(layout, at, "Thirty days ago", "- not older than 30 days\n")
    assert cli("retention", "--dry-run").returncode == 2  # off by default
    (layout.root / "memvault.toml").write_text("retention_days = 30\n")
    before = {p: p.read_bytes() for p in layout.daily_dir.iterdir()}
    dry = cli("retention", "--dry-run")
    assert dry.returncode == 0 and "would move 2 daily notes older than 30 days" in dry.stdout
    assert f"daily/{OLD[0].isoformat()}.md" in dry.stdout and f"daily/{past.isoformat()}.md" in dry.stdout
    assert f"daily/{at.isoformat()}.md" not in dry.stdout and "kept 1 old days without a summary" in dry.stdout
    assert {p: p.read_bytes() for p in layout.daily_dir.iterdir()} == before
    applied = cli("retention", "--apply")
    assert applied.returncode == 0 and applied.stdout.startswith("moved 2 daily notes")
    gone = layout.daily_note(OLD[0])
    assert not gone.exists() and not layout.daily_note(past).exists()
    assert all(layout.daily_note(d).exists() for d in (OLD[1], OLD[2], at))
    (kept,) = (layout.root / ".trash" / "daily").glob(f"{OLD[0].isoformat()}.md.*.bak")
    assert kept.read_bytes() == before[gone]
    lines = "".join(_catalog(layout, y) for y in {d.year for d in OLD})
    assert f"{OLD[0].isoformat()}\tForty days ago\n" in lines  # the catalog keeps the retired day
    shown = cli("show", OLD[0].isoformat())  # and `show` reads it where retention put it (issue 48)
    assert shown.returncode == 0 and shown.stdout == before[gone].decode("utf-8"), shown.stderr
    assert "retired by retention" in shown.stderr and shown.stderr.count("\n") == 1
    assert cli("show", "2001-01-01").returncode != 0  # a day that never had a note is still an error


def test_retention_keeps_an_old_day_holding_the_current_version_of_a_fact(layout, cli):
    """Issue 27, case 3: retention moved the day holding the correction of a live MEMORY.md fact into
    the trash, and the fact was gone from `context`."""
    assert cli("init", "--lang", "en").returncode == 0
    day = OLD[0].isoformat()
    memory = layout.root / "MEMORY.md"
    text = memory.read_text(encoding="utf-8").replace(
        "## Architecture Decisions\n", f"## Architecture Decisions\n\n- Postgres for billing [key:: billing-db] "
        f"[superseded:: {day}]\n", 1)  # fmt: skip
    memory.write_text(text, encoding="utf-8")
    old = next(e for e in iter_entries(parse_note("MEMORY.md", text)) if e.key == "billing-db")
    ptr = f"MEMORY.md#{version_id(old)}"
    _day(layout, OLD[0], "Forty days ago", f"- Billing moved to CockroachDB [key:: billing-db] [corrects:: {ptr}]\n")
    _day(layout, OLD[1], "Thirty-five days ago", "- Lunch with Sam\n")
    (layout.root / "memvault.toml").write_text("retention_days = 30\n")
    applied = cli("retention", "--apply")
    assert applied.returncode == 0 and applied.stdout.startswith("moved 1 daily notes"), applied
    assert "kept 1 old days holding the current version of a fact" in applied.stdout
    assert f"daily/{day}.md" in applied.stdout.split("holding")[1]
    assert layout.daily_note(OLD[0]).exists() and not layout.daily_note(OLD[1]).exists()
    stable = json.loads(cli("context", "--json").stdout)["stable"]
    assert [e["text"] for e in stable if "illing" in e["text"]] == ["Billing moved to CockroachDB"], stable


def test_a_summary_replaced_is_kept_in_the_trash(layout, cli):
    """Issue 48 (seed 004): `summary DATE` over a day's summary kept no copy of the old one; the note as
    it was now goes to `.trash/` first, as `rewrite` keeps a note (the same summary again copies nothing)."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("summary", "2026-11-02", "Met Ana about the Q4 budget").returncode == 0
    assert not list(layout.root.glob(".trash/**/*.bak"))  # a first summary replaces nothing
    assert cli("summary", "2026-11-02", "Met Ana and Bo about the Q4 budget; travel cut").returncode == 0
    kept = list(layout.trash_dir.rglob("2026-11-02.md.*.bak"))
    assert len(kept) == 1 and "Met Ana about the Q4 budget" in kept[0].read_text(encoding="utf-8")
    assert cli("summary", "2026-11-02", "Met Ana and Bo about the Q4 budget; travel cut").returncode == 0
    assert len(list(layout.trash_dir.rglob("*.bak"))) == 1
