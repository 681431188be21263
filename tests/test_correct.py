"""`memvault correct`: the correction is written today with a pointer to the old entry, the old one
is marked superseded (a chunk of its own), search ranks the correction above it, `list` links them."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time

from memvault.vault.chunking import chunk_note
from memvault.vault.entries import entry_id, iter_entries, version_id
from memvault.vault.notes import parse_note
from tests.conftest import start_daemon
from tests.reliability.conftest import HASH_ENV

OLD = "Prefers Vue 3 + TypeScript for front ends"


def test_a_superseded_entry_is_a_chunk_of_its_own_and_nothing_else_moves():
    body = "# M\n\n## Prefs\n\n- one fact\n- {old}\n  more of it\n- three\n\n## Other\n\n- x\n"
    plain = chunk_note(parse_note("MEMORY.md", body.format(old="two")))
    marked = chunk_note(parse_note("MEMORY.md", body.format(old="two [superseded:: 2026-12-01]")))
    assert [(c.start_line, c.end_line, c.superseded) for c in plain] == [(5, 5, None), (6, 7, None), (8, 8, None),
                                                                         (12, 12, None)]  # fmt: skip
    assert [(c.start_line, c.end_line, c.superseded) for c in marked] == [
        (5, 5, None), (6, 7, "2026-12-01"), (8, 8, None), (12, 12, None)
    ]  # fmt: skip
    assert marked[1].text == "- two [superseded:: 2026-12-01]\n  more of it"


def _hits(cli, query, mode):
    result = cli("search", "--json", "--mode", mode, query)
    assert result.returncode == 0, result.stderr
    return [(h["path"], h["start_line"], h["end_line"]) for h in json.loads(result.stdout)["hits"]]


def test_correct_ranks_the_correction_above_the_old_entry_and_list_links_them(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "preference", "Answers in short paragraphs").returncode == 0
    args = ("remember", "--type", "preference", "--key", "frontend-stack", "--tag", "frontend", OLD)
    assert cli(*args).returncode == 0
    memory = layout.root / "MEMORY.md"
    line = next(i for i, t in enumerate(memory.read_text(encoding="utf-8").splitlines(), 1) if "Vue" in t)
    today = f"daily/{dt.date.today().isoformat()}.md"
    past = f"daily/{dt.date.today() - dt.timedelta(days=2)}.md"
    (layout.root / past).write_text("# Past\n\n## Talks\n\n- Lunch at noon with the quokka team [key:: lunch]\n")
    start_daemon(cli, layout.root, env=HASH_ENV)
    try:
        for mode in ("bm25", "hybrid"):
            path, start, end = _hits(cli, OLD, mode)[0]
            assert path == "MEMORY.md" and start <= line <= end
        done = cli("correct", "frontend-stack", "Moved to Svelte 5 for new projects")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"corrected MEMORY.md:{line} (now marked superseded)") and today in done.stdout
        marked = memory.read_text(encoding="utf-8").splitlines()[line - 1]
        day = dt.date.today().isoformat()
        assert marked == f"- {OLD} #frontend [key:: frontend-stack] [superseded:: {day}] <!-- saved {day} -->"
        note = (layout.root / today).read_text(encoding="utf-8")
        was = next(
            e for e in iter_entries(parse_note("MEMORY.md", memory.read_text(encoding="utf-8"))) if "Vue" in e.text
        )
        ptr = f"MEMORY.md#{version_id(was)}"  # the key is the correction's too: the old version is named by its text
        assert ptr.startswith("MEMORY.md#@") and ptr != f"MEMORY.md#{entry_id(was)}"
        assert f"Moved to Svelte 5 for new projects #frontend [key:: frontend-stack] [corrects:: {ptr}]" in note
        for mode in ("bm25", "hybrid", "vector"):  # the old entry's own words: the correction comes first
            hits = _hits(cli, OLD, mode)
            assert hits[0][0] == today and hits[1] == ("MEMORY.md", line, line), (mode, hits)
        entries = json.loads(cli("list", "--json", "--tag", "frontend").stdout)["entries"]
        old = next(e for e in entries if e["path"] == "MEMORY.md")
        new = next(e for e in entries if e["path"] == today)
        assert old["superseded"] == day and old["superseded_by"] == f"{today}:{new['start_line']}"
        assert new["corrects"] == ptr and new["key"] == "frontend-stack"
        human = cli("list", "--tag", "frontend").stdout
        assert f"(superseded {day} by {today}:" in human and f"(corrects {ptr})" in human
        again = cli("correct", ptr, "Something else")
        assert again.returncode == 2 and "correct the correction" in again.stderr
        third = cli("correct", "frontend-stack", "Svelte 5 everywhere")  # the key names the current version
        assert third.returncode == 0 and third.stdout.startswith(f"corrected {today}:{new['start_line']}"), third
        rows = json.loads(cli("list", "--json", "--key", "frontend-stack").stdout)["entries"]
        assert [r["superseded"] is None for r in rows].count(True) == 1 and len(rows) == 3
        # a keyed `remember` supersedes an entry of a past day with a correction in MEMORY.md: ranked the same
        assert "supersedes" in cli("remember", "--type", "preference", "--key", "lunch", "Lunch moved to one").stdout
        hits = _hits(cli, "Lunch at noon with the quokka team", "bm25")
        assert hits[0][0] == "MEMORY.md" and hits[1] == (past, 5, 5), hits
    finally:
        cli("daemon", "stop")


def test_correct_a_past_day_and_an_entry_of_today_below_the_correction(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    past = (dt.date.today() - dt.timedelta(days=10)).isoformat()
    assert cli("note", "--date", past, "The launch is on Friday").returncode == 0
    refused = cli("note", "--date", past, "The launch moved to Monday")
    assert refused.returncode == 2 and "memvault correct" in refused.stderr
    fixed = cli("correct", "--match", "launch is on Friday", "The launch moved to Monday")
    assert fixed.returncode == 0, fixed.stderr
    past_note = (layout.root / "daily" / f"{past}.md").read_text(encoding="utf-8")
    assert f"- The launch is on Friday [superseded:: {dt.date.today().isoformat()}]\n" in past_note
    # today's discovery section sits below its conversation section, where the correction goes:
    # the old entry moves down a line, and the pointer, naming it by id, still names it
    assert cli("note", "--section", "discovery", "The cache holds 10k items").returncode == 0
    today = layout.root / "daily" / f"{dt.date.today().isoformat()}.md"
    text = today.read_text(encoding="utf-8")
    before = next(i for i, t in enumerate(text.splitlines(), 1) if "The cache holds 10k items" in t)
    assert cli("correct", "--match", "cache holds 10k", "The cache holds 20k items").returncode == 0
    lines = today.read_text(encoding="utf-8").splitlines()
    now = next(i for i, t in enumerate(lines, 1) if "The cache holds 10k items" in t)  # not the summary
    assert now == before + 1 and lines[now - 1].endswith(f"[superseded:: {dt.date.today().isoformat()}]")
    old = next(e for e in iter_entries(parse_note(today.name, "\n".join(lines))) if "10k" in e.text)
    assert any(t.endswith(f"[corrects:: {today.relative_to(layout.root)}#{entry_id(old)}]") for t in lines)


def test_correct_notes_the_topic_and_the_new_truth_in_todays_summary(layout, cli):
    """Issue 27, case 4: an old day's summary said "postponed", and a search for the topic ranked it
    first; seed 004 notes the corrected topic and the new truth in today's index."""
    assert cli("init", "--lang", "en").returncode == 0
    past = (dt.date.today() - dt.timedelta(days=12)).isoformat()
    assert cli("note", "--date", past, "The Kafka migration is postponed to Q1").returncode == 0
    assert cli("summary", past, "Kafka migration postponed to Q1; Ana on leave").returncode == 0
    assert cli("summary", "Reviewed the billing dashboards").returncode == 0  # today's own summary stays first
    assert cli("index").returncode == 0
    new = "The Kafka migration goes ahead this quarter"
    assert cli("correct", "--match", "Kafka migration", new).returncode == 0
    today = json.loads(cli("recent", "1", "--json").stdout)["days"][0]
    assert today["summary"] == f"Reviewed the billing dashboards; corrected Kafka migration: {new}"
    for mode in ("bm25", "hybrid"):
        hits = json.loads(cli("search", "--json", "--mode", mode, "Kafka migration").stdout)["hits"]
        assert "goes ahead" in hits[0]["snippet"], (mode, hits[0])
        old = next(n for n, h in enumerate(hits) if "postponed" in h["snippet"])
        assert all("goes ahead" in h["snippet"] or "corrects" in h["text"] for h in hits[:old]), mode


def test_a_correction_keeps_the_key_so_the_next_save_and_forget_name_one_fact(layout, cli):
    """Issue 27, case 2: `correct KEY` dropped the key, so a later keyed save added a second entry and
    `forget KEY` found two."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "config", "--key", "deploy-day", "We deploy on Tuesdays").returncode == 0
    assert cli("correct", "deploy-day", "We deploy on Thursdays").returncode == 0
    again = cli("correct", "deploy-day", "We deploy on Thursdays")  # the same correction twice: written once
    assert again.returncode == 0 and "already" in again.stdout, again
    saved = cli("remember", "--type", "config", "--key", "deploy-day", "We deploy on Fridays")
    assert saved.returncode == 0 and saved.stdout.startswith("updated the entry with key deploy-day"), saved
    rows = json.loads(cli("list", "--json", "--key", "deploy-day").stdout)["entries"]
    current = [r for r in rows if r["superseded"] is None]
    assert len(current) == 1 and "We deploy on Fridays [key:: deploy-day]" in current[0]["text"], rows
    assert len(rows) == 2
    assert all(r["key"] == "deploy-day" for r in rows)
    gone = cli("forget", "deploy-day")
    assert gone.returncode == 0, gone.stderr
    vault_text = "".join(p.read_text(encoding="utf-8") for p in layout.root.rglob("*.md") if ".trash" not in p.parts)
    assert "Fridays" not in vault_text and "Tuesdays" in vault_text  # the current version went, the old one stays


def test_a_correct_during_an_in_place_save_names_the_current_version(layout, cli):
    """Issue 43's in-place editor truncates the note and writes it again in pieces. `correct` chose its
    entry from a plain read: a note cut before an older version's `[superseded:: …]` showed that one
    current (the newer, further down, not there yet), the correction pointed at it, its mark found no
    such entry in the whole note, and the key was left with two current versions (the editor harness
    under load). The choice is made on whole saves only."""
    from memvault.vault.supersede import pointer

    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Facts", "--key", "k", "v1 fact").returncode == 0
    assert cli("correct", "k", "v2 fact").returncode == 0  # today's note: v2, pointing at v1 (marked)
    day = next((layout.root / "daily").glob("*.md"))
    rel = layout.relative(day)
    v2 = next(e for e in iter_entries(parse_note(rel, day.read_text(encoding="utf-8"))) if "v2 fact" in e.text)
    lines = day.read_text(encoding="utf-8").split("\n")
    lines[v2.start_line - 1] += " [superseded:: 2026-12-06]"  # v3, in MEMORY.md, corrects v2
    day.write_text("\n".join(lines), encoding="utf-8")
    whole = layout.memory_md.read_text(encoding="utf-8") + f"- v3 fact [key:: k] [corrects:: {pointer(v2)}]\n"
    cut = whole.encode("utf-8").index(b" [superseded::")  # v1 looks current here, and v3 is not written yet
    fixing = _during_in_place_save(layout, whole, cut, "correct", "k", "v4 fact")
    assert fixing.returncode == 0, fixing.stderr
    listed = json.loads(cli("list", "--key", "k", "--json").stdout)["entries"]
    current = [r["text"] for r in listed if not r.get("superseded")]
    assert len(current) == 1 and "v4 fact" in current[0] and "v3 fact" not in current[0], listed


def _edited_meanwhile(monkeypatch, path, old: str, new: str) -> None:
    """A person's editor saves `path` with `old` changed to `new` in the moment between a verb's two
    writes (its newer version written, the old one not marked yet): a moment no timing hits on purpose,
    so the save is made at the verb's own crash point there."""
    from memvault.vault import faults, saving

    def person_saves(name: str) -> None:
        if name == "before-supersede":
            path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")

    for module in (faults, saving):  # `correct` imports it as it runs, a save when it is loaded
        monkeypatch.setattr(module, "crash_point", person_saves)


def _current(cli, key: str) -> list[str]:
    listed = json.loads(cli("list", "--key", key, "--json").stdout)["entries"]
    return [r["text"] for r in listed if not r.get("superseded")]


def test_a_correct_whose_mark_cannot_be_made_takes_its_correction_back(layout, cli, monkeypatch):
    """The correction is written, then the old entry marked. An in-place editor's save in between (the
    editor harness under load: MEMORY.md kept changing for all 50 tries) left the correction written,
    the old entry current and the key with two current versions, while the error said "nothing
    written". Now the correction is taken out again (to the trash), and the error says so truly."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Facts", "--key", "k", "v1 fact").returncode == 0
    _edited_meanwhile(monkeypatch, layout.memory_md, "v1 fact", "v1 fact, typo fixed")
    done = cli("correct", "k", "v2 fact")
    assert done.returncode != 0
    assert "MEMORY.md changed while correcting" in done.stderr and "nothing written" in done.stderr, done.stderr
    assert _current(cli, "k") == ["v1 fact, typo fixed [key:: k]"]
    day = next((layout.root / "daily").glob("*.md")).read_text(encoding="utf-8")
    assert "v2 fact" not in day and "corrected k" not in day  # neither the entry nor the day's summary says it
    trashed = json.loads(cli("trash", "--json").stdout)
    assert [(i["reason"], "v2 fact" in i["text"]) for i in trashed["items"]] == [("not applied", True)], trashed


def test_a_keyed_save_whose_mark_cannot_be_made_takes_its_entry_back(layout, cli, monkeypatch):
    """The same for a keyed `remember` whose key is on a past day (frozen): the new entry goes to
    MEMORY.md, then the old one is marked in its day's note."""
    assert cli("init", "--lang", "en").returncode == 0
    past = layout.root / "daily" / "2026-11-02.md"
    past.write_text("# 2026-11-02\n\n## Conversations\n\n- 10:00 the cache is redis 6 [key:: cache]\n", "utf-8")
    _edited_meanwhile(monkeypatch, past, "redis 6", "redis 6.2")
    done = cli("remember", "--section", "Facts", "--key", "cache", "the cache is redis 7")
    assert done.returncode != 0 and "nothing written" in done.stderr, done.stderr
    assert _current(cli, "cache") == ["10:00 the cache is redis 6.2 [key:: cache]"]
    assert "redis 7" not in layout.memory_md.read_text(encoding="utf-8")


def test_a_forget_during_an_in_place_save_finds_its_key(layout, cli):
    """Read mid in-place save, MEMORY.md ended before the key's entry: `forget` said "no entry with key"
    of a key the note holds (the editor harness, in place, under load)."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Facts", "--key", "k", "the fact to forget").returncode == 0
    whole = layout.memory_md.read_text(encoding="utf-8")
    gone = _during_in_place_save(layout, whole, whole.encode("utf-8").index(b"- the fact"), "forget", "k")
    assert gone.returncode == 0, gone.stderr
    assert _current(cli, "k") == [] and "the fact to forget" not in layout.memory_md.read_text(encoding="utf-8")


def _during_in_place_save(layout, whole: str, cut: int, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run `memvault ARGV` while an editor saves MEMORY.md in place as `whole`: truncated, its first
    `cut` bytes written, a pause of 3 s (the verb reads the note meanwhile), then the rest."""
    data = whole.encode("utf-8")
    fd = os.open(layout.memory_md, os.O_RDWR)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, data[:cut])
        memvault = os.path.join(os.path.dirname(sys.executable), "memvault")
        env = {**os.environ, "MEMVAULT_VAULT": str(layout.root)}
        verb = subprocess.Popen([memvault, *argv], env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(3)  # the editor's pause between two pieces
        os.write(fd, data[cut:])
    finally:
        os.close(fd)
    out, err = verb.communicate(timeout=120)
    return subprocess.CompletedProcess(verb.args, verb.returncode, out, err)


def test_the_line_correct_reports_is_where_the_old_entry_is_once_the_summary_is_set(layout, cli):
    """The day's summary is written after the mark (a correction taken back must not have told it), and in
    a note with no summary yet it adds a line above an entry of that day: the line reported is where the
    marked entry is then, not where it was."""
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("note", "--key", "cache", "the cache is redis 6").returncode == 0
    done = cli("correct", "cache", "the cache is redis 7")
    assert done.returncode == 0, done.stderr
    day = next((layout.root / "daily").glob("*.md"))
    rel = layout.relative(day)
    old = next(e for e in iter_entries(parse_note(rel, day.read_text(encoding="utf-8"))) if e.superseded)
    assert f"corrected {rel}:{old.start_line} " in done.stdout, done.stdout


def test_a_correct_after_a_run_killed_before_its_mark_leaves_one_current_version(layout, cli):
    """Killed between its two writes, a `correct` leaves its correction and the entry it corrects both
    current, the one pointing at the other. Run again with the same text it only marks; with another
    text it corrected the correction and left the first entry current beside the new one: the key held
    two current versions, and the next keyed save was refused. The unfinished mark is made first."""
    from memvault.vault.supersede import pointer

    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--section", "Facts", "--key", "k", "v1 fact").returncode == 0
    rel = layout.relative(layout.memory_md)
    v1 = next(e for e in iter_entries(parse_note(rel, layout.memory_md.read_text(encoding="utf-8"))) if e.key == "k")
    assert cli("note", "--key", "other", "an unrelated note").returncode == 0  # today's note, written as a run would
    day = next((layout.root / "daily").glob("*.md"))
    day.write_text(day.read_text(encoding="utf-8") + f"- 09:00 v2 fact [key:: k] [corrects:: {pointer(v1)}]\n", "utf-8")
    assert len(_current(cli, "k")) == 2  # the state a run killed between its two writes leaves
    done = cli("correct", "k", "v3 fact")
    assert done.returncode == 0, done.stderr
    assert len(_current(cli, "k")) == 1 and "v3 fact" in _current(cli, "k")[0], _current(cli, "k")
    assert cli("remember", "--section", "Facts", "--key", "k", "v4 fact").returncode == 0
