"""Writers through the CLI and through the daemon socket at once, with an editor saving its own note by
temp-file-and-rename and a reindex (and a rebuild) running: every line is present exactly once
afterwards and every note parses."""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import os
import threading
import time
from pathlib import Path

import pytest

from memvault.vault.fileio import read_note
from memvault.vault.memory_file import list_sections
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout
from tests.conftest import run_main
from tests.reliability.conftest import HASH_ENV, ask, run_cli, running_daemon, settle, tally


def _entry(writer: int, i: int) -> str:
    """Odd calls remember a fact, even ones note; the last word is unique, so a search can find it."""
    return f"{'fact' if i % 2 else 'note'} w{writer} n{i} k{writer}x{i}"


def _writer(root: str, writer: int, each: int, via: str) -> None:
    """One writer process: `each` calls, alternating note and remember, through `via` (the socket, or
    the CLI's `main` run in this process)."""
    layout = Layout(Path(root))
    conn = None
    if via == "socket":
        from memvault.daemon.client import connect

        conn = connect(layout, timeout=300)
    env = {**os.environ, "MEMVAULT_VAULT": root, **HASH_ENV}
    for i in range(each):
        remember = i % 2 == 1
        text = _entry(writer, i)
        if conn is not None:
            request = {"op": "remember", "text": text, "section": "并发"} if remember else {"op": "note", "text": text}
            reply = conn.call(request, timeout=300)
            assert reply is not None and reply["ok"], (text, reply)
        else:
            args = ["remember", text, "--section", "并发"] if remember else ["note", text]
            done = run_main(args, env, "/", None, 300)  # the CLI's main, in this writer's own process
            assert done.returncode == 0, (text, done.stderr)
    if conn is not None:
        conn.close()


def _editor(path: Path, lines: int, stop: threading.Event) -> None:
    """An editor saving its own note the way editors do: write a temp file, rename it over the note."""
    for k in range(lines):
        current = path.read_text(encoding="utf-8") if path.exists() else "# Editor\n\n"
        tmp = path.with_name(f".{path.name}.swp")
        tmp.write_text(current + f"- editor line {k}\n", encoding="utf-8")
        os.replace(tmp, path)
        time.sleep(0.01)
    stop.set()


def _run(layout: Layout, writers: int, each: int) -> None:
    assert run_cli(layout, "init").returncode == 0
    editor_note = layout.root / "notes" / "editor.md"
    editor_note.parent.mkdir()
    with running_daemon(layout, debounce=0.3):
        ctx = mp.get_context("spawn")
        procs = [
            ctx.Process(target=_writer, args=(str(layout.root), w, each, "socket" if w % 2 else "cli"))
            for w in range(writers)
        ]
        for p in procs:
            p.start()
        done = threading.Event()
        editor = threading.Thread(target=_editor, args=(editor_note, each, done))
        editor.start()
        reindexed = [run_cli(layout, "index", timeout=600), run_cli(layout, "index", "--rebuild", timeout=600)]
        assert all(r.returncode == 0 for r in reindexed), [r.stderr for r in reindexed]
        for p in procs:
            p.join(timeout=1800)
            assert p.exitcode == 0
        editor.join()
        settle(layout)
        assert ask(layout, {"op": "verify"}, timeout=300)["disagreements"] == []
        for w, i in ((0, 0), (writers - 1, each - 2), (writers // 2, each - 1)):
            probe = ask(layout, {"op": "search", "query": f"k{w}x{i}", "mode": "bm25", "limit": 1})
            assert _entry(w, i) in probe["hits"][0]["snippet"], (w, i, probe)
    daily = layout.daily_note(dt.date.today()).read_text(encoding="utf-8")
    memory = layout.memory_md.read_text(encoding="utf-8")
    editor_text = editor_note.read_text(encoding="utf-8")
    for w in range(writers):
        for i in range(each):
            target = memory if i % 2 else daily  # a MEMORY.md entry ends with the day memvault saved it
            ending = f" <!-- saved {dt.date.today().isoformat()} -->\n" if i % 2 else "\n"
            assert target.count(f"{_entry(w, i)}{ending}") == 1, (w, i)
    assert all(editor_text.count(f"- editor line {k}\n") == 1 for k in range(each))
    assert {s.title: s.items for s in list_sections(layout)}["并发"] == writers * (each // 2)
    for path in (layout.daily_note(dt.date.today()), layout.memory_md, editor_note):
        assert parse_note(layout.relative(path), read_note(path).text).problem is None
    assert not list(layout.root.rglob(".*.tmp"))
    tally("concurrency", writers * each + each + 2)


def test_writers_editor_and_reindex_quick(layout):
    _run(layout, 8, 8)


@pytest.mark.reliability_full
def test_writers_editor_and_reindex_full(layout):
    _run(layout, 8, 100)
