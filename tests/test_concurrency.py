"""8 processes appending 100 entries each, at once, through the real write path: nothing lost."""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
from pathlib import Path

from memvault.vault.daily import append_daily
from memvault.vault.memory_file import init_vault, list_sections, remember
from memvault.vault.paths import Layout

WRITERS, EACH = 8, 100


def _writer(root: str, writer: int) -> None:
    layout = Layout(Path(root))
    for i in range(EACH):
        if i % 2:
            remember(layout, f"fact w{writer} n{i}", section="并发")
        else:
            append_daily(layout, f"note w{writer} n{i}")


def test_concurrent_writers_lose_nothing(layout, cli):
    init_vault(layout)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(layout.root), w)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    daily = layout.daily_note(dt.date.today()).read_text(encoding="utf-8")
    memory = layout.memory_md.read_text(encoding="utf-8")
    for w in range(WRITERS):
        for i in range(EACH):
            target, word = (memory, "fact") if i % 2 else (daily, "note")
            ending = f" <!-- saved {dt.date.today().isoformat()} -->\n" if i % 2 else "\n"  # MEMORY.md's day
            assert target.count(f"{word} w{w} n{i}{ending}") == 1
    assert {s.title: s.items for s in list_sections(layout)}["并发"] == WRITERS * EACH // 2
    counter = f"- 对话：{WRITERS * EACH // 2}\n"
    assert counter in daily
    assert not list(layout.root.rglob(".*.tmp"))


def test_concurrent_cli_writers(layout, cli, cli_process):
    """The same through the console script: real subprocesses racing on one note."""
    import concurrent.futures as cf

    assert cli("init").returncode == 0
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda n: cli_process("note", f"cli entry {n}"), range(24)))
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results if r.returncode]
    daily = layout.daily_note(dt.date.today()).read_text(encoding="utf-8")
    assert all(daily.count(f"cli entry {n}\n") == 1 for n in range(24))
