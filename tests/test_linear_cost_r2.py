"""Cost that grows with a note's entries, checked by counters, never by a clock: chunking a section of
many entries, clearing them and restoring their batch each do work in proportion to the entries (and
the note's bytes), not to their square. A quadratic loop shows as a counter that grows 16-fold when the
entries grow 4-fold."""

from __future__ import annotations

import hashlib
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memvault.vault import chunking
from memvault.vault.effects import watch
from memvault.vault.notes import parse_note

WORDS = ["alpha", "beta", "gamma", "delta", "kayak", "river", "mountain", "ledger", "invoice", "orbit", "comet", "记忆"]


def _section(entries: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    lines = [f"- entry {i} " + " ".join(rng.choice(WORDS) for _ in range(12)) + f" #t{i % 5}" for i in range(entries)]
    return "# Big\n\n## Facts\n\n" + "\n".join(lines) + "\n"


def _lines_run(call: Callable[[], Any], *modules: Any) -> int:
    """How many lines of these modules' code the interpreter ran during `call()` (each pass of a loop,
    a comprehension's included, counts): the work done, whatever the machine's speed."""
    files = {m.__file__ for m in modules}
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return local

    def calls(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename in files else None

    sys.settrace(calls)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def test_chunking_a_section_costs_in_proportion_to_its_entries():
    small, large = (parse_note("big.md", _section(n)) for n in (300, 1200))
    assert len(chunking.chunk_note(large)) == 1200  # one unit an entry: the count below is the chunker's own
    work = [_lines_run(lambda note=note: chunking.chunk_note(note), chunking) for note in (small, large)]
    assert work[1] < 4.6 * work[0], work  # 4x the entries: 4x the lines (it was 13x: each entry scanned all before it)


@pytest.mark.long
def test_chunking_many_unclosed_comments_scales_with_the_note():
    """`<!--` with no `-->` after it hides nothing, and is looked at once, not searched to the note's end
    again for each (32,000 of them in a 480 KB note took 77 s). A size-scaling check, so behind `long`."""
    import time

    took = []
    for n in (4000, 16000):
        note = parse_note("c.md", "# C\n\n" + "text <!-- open\n" * n)
        started = time.perf_counter()
        chunks = chunking.chunk_note(note)
        took.append(time.perf_counter() - started)
        assert "<!-- open" in chunks[0].text
    assert took[1] < 8 * took[0] + 0.05, took  # 4x the note: about 4x the time (it was 20x)
    mixed = parse_note("c.md", "# C\n\na <!-- x\ny --> b <!-- z\n\nc <!---->d <!-- -->e <!-- f\n")
    # `<!-- z` closes at `<!---->` (its two newlines kept); `<!-- f` never closes and stays
    assert [c.text for c in chunking.chunk_note(mixed)] == ["# C\n\na\n b\n\nd e <!-- f"]


class _Hashed:
    """Counts the bytes given to `hashlib.sha256` (a note hashed once per entry is a quadratic cost)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bytes = 0
        real = hashlib.sha256

        def sha256(data: bytes = b"", **kwargs: Any) -> Any:
            self.bytes += len(data)
            return real(data, **kwargs)

        monkeypatch.setattr(hashlib, "sha256", sha256)


def _vault_with_entries(layout, cli, entries: int) -> Path:
    assert cli("init", "--lang", "en").returncode == 0
    memory = layout.root / "MEMORY.md"
    text = memory.read_text(encoding="utf-8")
    at = text.index("\n", text.index("## Configuration")) + 1
    block = "".join(f"- setting number {i} is value {i * 7} for the lab\n" for i in range(entries))
    memory.write_text(text[:at] + "\n" + block + text[at:], encoding="utf-8")
    return memory


@pytest.mark.parametrize("entries", [400])
def test_clear_and_restore_of_a_batch_hash_and_write_each_note_a_few_times_not_once_per_entry(
    layout, cli, monkeypatch, entries
):
    memory = _vault_with_entries(layout, cli, entries)
    before = memory.read_bytes()
    hashed = _Hashed(monkeypatch)
    cleared = cli("clear", "--all", "--yes")
    assert cleared.returncode == 0, cleared.stderr
    assert f"moved {entries} entries" in cleared.stdout
    clear_hashed, hashed.bytes = hashed.bytes, 0
    # each trash item is hashed as it is written (a few hundred bytes each); the note a handful of times
    assert clear_hashed < 10 * len(before) + 2_000 * entries, clear_hashed
    batch = cleared.stdout.split("memvault restore ")[1].rstrip(")\n")
    writes: list[Path] = []
    with watch(lambda path, now, new: writes.append(path)):
        restored = cli("restore", batch)
    assert restored.returncode == 0 and f"restored {entries} entries" in restored.stdout, restored.stderr
    assert "each where it was" in restored.stdout and memory.read_bytes() == before
    assert writes.count(memory) == 1, writes.count(memory)  # the note written once, not once per entry
    assert hashed.bytes < 10 * len(before) + 2_000 * entries, hashed.bytes


def test_entries_cleared_in_the_same_second_never_share_a_trash_item(layout, cli, monkeypatch):
    """A trash id is the second and six random hex digits: 10,000 entries cleared in one second drew the
    same digits three times, and each repeat wrote over an item (three entries lost for good). The draw
    is made to repeat here (the fault injected: a birthday collision cannot be timed)."""
    from memvault.vault import trash

    memory = _vault_with_entries(layout, cli, 3)
    before = memory.read_bytes()
    draws = iter(["aaaaaa", "000000", "000000", "111111", "111111", "222222"])  # the batch id, then the items
    monkeypatch.setattr(trash.secrets, "token_hex", lambda n: next(draws))
    monkeypatch.setattr(trash.dt, "datetime", _FrozenClock)
    cleared = cli("clear", "--all", "--yes")
    assert cleared.returncode == 0 and "moved 3 entries" in cleared.stdout, cleared.stderr
    assert len(list((layout.root / ".trash" / "entries").glob("*.md"))) == 3
    batch = cleared.stdout.split("memvault restore ")[1].rstrip(")\n")
    assert cli("restore", batch).returncode == 0
    assert memory.read_bytes() == before


class _FrozenClock(__import__("datetime").datetime):
    """Every id drawn in the same second."""

    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return cls(2026, 12, 4, 23, 0, 0)
