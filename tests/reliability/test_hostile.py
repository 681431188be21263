"""Hostile notes, hand-made and hypothesis-generated: each is indexed, skipped with a reason naming it,
or refused; the daemon never dies; every other note stays searchable; no note is rewritten."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from memvault.indexer.config import IndexConfig
from memvault.indexer.opening import open_index
from memvault.indexer.reconcile import Reconciler, reconcile
from memvault.indexer.verify import disagreements as index_disagreements
from memvault.search.engine import Searcher
from memvault.search.options import build_options
from memvault.vault.fileio import MAX_NOTE_BYTES
from memvault.vault.notes import parse_note
from memvault.vault.paths import Layout
from memvault.vault.scan import stat_entry
from tests.reliability.conftest import (
    ask,
    disagreements,
    one_line,
    run_cli,
    running_daemon,
    settle,
    snapshot,
    tally,
    wait_for,
)

HYPOTHESIS_SEEDS = {"quick": 20261129, "full": 8128}
SENTINEL = ("sentinel.md", "# Sentinel\n\nthe lighthouse keeper counts seventeen gulls\n")


def _alias_bomb() -> bytes:
    lines = ["---", "a: &a [x, x, x, x, x, x, x, x, x]"]
    for prev, name in zip("abcdef", "bcdefg", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    lines += ["tags: [" + ", ".join(["*g"] * 9) + "]", "---", "billion laughs body", ""]
    return "\n".join(lines).encode()


# name -> (bytes, expected: "indexed" or a substring of the failure reason)
HAND_MADE: dict[str, tuple[bytes, str]] = {
    "emoji.md": ("# 表情 😀\n\n混合 CJK 文本 and emoji 🎉🚀 \u200b\u202e z̸̢a̶l\n".encode(), "indexed"),
    "bom8.md": (codecs.BOM_UTF8 + b"# bom\r\n\r\nwindows line\r\nmixed\n\rold mac\r", "indexed"),
    "utf16le.md": (codecs.BOM_UTF16_LE + "# utf16\n\nsixteen bits\n".encode("utf-16-le"), "indexed"),
    "utf16be.md": (codecs.BOM_UTF16_BE + "# utf16be\n\nbig endian\n".encode("utf-16-be"), "indexed"),
    "utf32.md": (codecs.BOM_UTF32_LE + "# utf32\n".encode("utf-32-le"), "binary file"),
    "gbk.md": ("中文笔记".encode("gbk"), "not valid UTF-8"),
    "latin1.md": ("café".encode("latin-1"), "not valid UTF-8"),
    "binary.md": (bytes(range(256)) * 16, "binary file"),
    "nul.md": (b"# nul\n\nhello\x00world\n", "binary file"),
    "empty.md": (b"", "indexed"),
    "blank.md": (b"   \n\n\t\n", "indexed"),
    "cr-only.md": (b"# only cr\rline two\rline three\r", "indexed"),
    "keys.md": (
        ("---\n" + "".join(f"k{i}: {i}\n" for i in range(10_000)) + "---\nten thousand keys\n").encode(),
        "indexed",
    ),
    "fm-list.md": (b"---\n- a\n- b\n---\nlist frontmatter\n", "indexed"),
    "fm-scalar.md": (b"---\njust a string\n---\nscalar frontmatter\n", "indexed"),
    "fm-broken.md": (b"---\n: : :\n  - [\n---\nbroken frontmatter\n", "indexed"),
    "fm-unclosed.md": (b"---\ntitle: never closed\n\nbody\n", "indexed"),
    "fm-deep.md": (b"---\ntags: " + b"[" * 5000 + b"]" * 5000 + b"\n---\ndeep nesting\n", "indexed"),
    "fm-tags-odd.md": (b"---\ntags: {a: 1}\ndate: [1, 2]\n---\nodd tags and date\n", "indexed"),
    "fm-python-tag.md": (b"---\nx: !!python/object/apply:os.system ['echo hi']\n---\nunsafe yaml\n", "indexed"),
    "fm-dates.md": (b"---\ndate: 0001-01-01\n---\nancient\n", "indexed"),
    "fm-alias-bomb.md": (_alias_bomb(), "indexed"),
    "headings.md": (("".join("#" * i + f" h{i}\n\ntext{i}\n\n" for i in range(1, 12))).encode(), "indexed"),
    "long-line.md": (("# long\n\n" + " ".join(f"w{i}" for i in range(30_000)) + "\n").encode(), "indexed"),
    "too-big.md": (b"a" * (MAX_NOTE_BYTES + 1), "over the 10,485,760-byte note limit"),
    "daily/2026-13-45.md": (b"# impossible date\n", "indexed"),
    "deep/a/b/c/d/e/f/g/h/i/j/k/note.md": (b"# deep folders\n", "indexed"),
    "name with spaces & 中文 ünïcode.md": (b"# odd name\n", "indexed"),
    "UPPER.MD": (b"# upper case suffix\n", "indexed"),
}
LINKS = {  # name -> (target relative to the vault root, or absolute; expected)
    "link-inside.md": ("emoji.md", "indexed"),
    "link-outside.md": ("/etc/hostname", "symlink points outside the vault"),
    "loop-a.md": ("loop-b.md", "cannot stat"),
    "loop-b.md": ("loop-a.md", "cannot stat"),
    "broken.md": ("nowhere.md", "broken symlink"),
    "dirlink.md": ("deep", "ignored"),  # a folder, whatever its name: not walked into, not a note
}


def _plant(layout: Layout) -> None:
    for rel, (data, _) in HAND_MADE.items():
        path = layout.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for rel, (target, _) in LINKS.items():
        os.symlink(target if target.startswith("/") else layout.root / target, layout.root / rel)
    os.mkfifo(layout.root / "fifo.md")
    (layout.root / SENTINEL[0]).write_text(SENTINEL[1], encoding="utf-8")


def _expected() -> dict[str, str]:
    return {
        **{k: v[1] for k, v in HAND_MADE.items()},
        **{k: v[1] for k, v in LINKS.items()},
        "fifo.md": "not a regular",
    }


def _check_status(status: dict) -> None:
    failures = {f["path"]: f["reason"] for f in status["failures"]}
    for rel, outcome in _expected().items():
        if outcome in ("indexed", "ignored"):
            assert rel not in failures, (rel, failures.get(rel))
        else:
            assert rel in failures and outcome in failures[rel] and failures[rel].startswith(rel), (rel, failures)
    assert status["files_pending"] == 0


def test_hand_made_hostile_notes_through_the_cli(layout):
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    _plant(layout)
    before = snapshot(layout)
    started = time.monotonic()
    result = run_cli(layout, "index")
    assert result.returncode == 0 and one_line(result.stderr), result.stderr
    assert time.monotonic() - started < 60
    _check_status(json.loads(run_cli(layout, "status", "--json").stdout))
    assert disagreements(layout) == []
    status = json.loads(run_cli(layout, "status", "--json").stdout)
    assert status["index_bytes"] < 64 * 1024 * 1024, status["index_bytes"]  # the alias bomb stays small
    found = json.loads(run_cli(layout, "search", "--json", "lighthouse keeper gulls").stdout)
    assert found["source"] == "hybrid" and found["hits"][0]["path"] == SENTINEL[0]
    for rel in ("emoji.md", "utf16be.md", "keys.md", "fm-alias-bomb.md"):
        shown = run_cli(layout, "show", rel)
        assert shown.returncode == 0 and one_line(shown.stderr), (rel, shown.stderr)
    for rel in ("gbk.md", "binary.md", "too-big.md", "link-outside.md", "loop-a.md"):
        shown = run_cli(layout, "show", rel)
        assert shown.returncode != 0 and one_line(shown.stderr) and rel in shown.stderr, (rel, shown.stderr)
    assert snapshot(layout) == before
    tally("hostile", len(_expected()))


def test_hostile_notes_arriving_while_the_daemon_runs(layout):
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    with running_daemon(layout, debounce=0.2) as pid:
        _plant(layout)
        before = snapshot(layout)
        churn = layout.root / "churn"
        churn.mkdir()
        for i in range(200):  # files that vanish between the event and the read
            path = churn / f"v{i}.md"
            path.write_text(f"# gone {i}\n")
            if i % 3:
                path.unlink()
            else:
                os.replace(path, churn / f"kept{i}.md")
        settle(layout)
        assert ask(layout, {"op": "ping"})["pid"] == pid
        _check_status(json.loads(run_cli(layout, "status", "--json").stdout))
        assert ask(layout, {"op": "verify"}, timeout=120)["disagreements"] == []
        found = json.loads(run_cli(layout, "search", "--json", "lighthouse keeper gulls").stdout)
        assert found["source"] == "hybrid" and found["hits"][0]["path"] == SENTINEL[0]
        assert {k: v for k, v in snapshot(layout).items() if not k.startswith("churn/")} == before
    assert "Traceback" not in (layout.state_dir / "daemon.log").read_text()
    tally("hostile", len(_expected()) + 200)


def test_a_note_that_vanishes_after_its_stat(layout):
    (layout.root / "a.md").write_text("# A\n\nhere a moment\n")
    with open_index(layout, IndexConfig(embedder="hash-384")) as index:
        entry = stat_entry(layout, "a.md")
        (layout.root / "a.md").unlink()
        assert Reconciler(index)._check(entry, None) is None
        assert index.manifest.files()["a.md"].error == "a.md: vanished before it could be read"
        reconcile(index)
        assert index_disagreements(index) == [] and index.manifest.files() == {}
    tally("hostile", 1)


def test_permission_denied_note(world_layout):
    layout, user = world_layout
    assert run_cli(layout, "init", "--lang", "en", user=user).returncode == 0
    secret = layout.root / "locked.md"
    secret.write_text("# Locked\n\nno one may read this\n")
    secret.chmod(0o000 if user is None else 0o600)  # root-owned 0600: unreadable for nobody
    (layout.root / SENTINEL[0]).write_text(SENTINEL[1])
    if user is not None:
        os.chown(layout.root / SENTINEL[0], user, user)
    result = run_cli(layout, "index", user=user)
    assert result.returncode == 0 and one_line(result.stderr), result.stderr
    assert "locked.md: cannot read (Permission denied)" in result.stderr
    shown = run_cli(layout, "show", "locked.md", user=user)
    assert shown.returncode == 4 and one_line(shown.stderr) and "locked.md" in shown.stderr
    found = json.loads(run_cli(layout, "search", "--json", "lighthouse gulls", user=user).stdout)
    assert found["hits"][0]["path"] == SENTINEL[0]
    tally("hostile", 1)


def test_huge_line_is_chunked_in_linear_time(tmp_path):
    """A 2 MB line with no sentence end: was quadratic (1 MB took 31 s, so 2 MB over 2 minutes)."""
    probe = (
        "from memvault.vault.chunking import chunk_note\nfrom memvault.vault.notes import parse_note\n"
        "text = '# h\\n\\n' + ' '.join(f'w{i}' for i in range(280_000)) + '\\n'\n"
        "print(len(chunk_note(parse_note('x.md', text))))\n"
    )
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and int(result.stdout) > 1000
    assert time.monotonic() - started < 30
    tally("hostile", 1)


def test_alias_bomb_frontmatter_keeps_tags_small():
    note = parse_note("bomb.md", _alias_bomb().decode())
    assert sum(len(t) for t in note.tags) < 10_000
    assert parse_note("t.md", "---\ntags: [a, '#b', 3, [x], {k: v}, '" + "z" * 500 + "']\n---\n").tags == (
        "a",
        "b",
        "3",
    )
    tally("hostile", 1)


@pytest.mark.reliability_full
def test_a_50_mb_note_is_skipped_with_a_reason(layout):
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    with open(layout.root / "huge.md", "wb") as fh:
        for i in range(50 * 1024):
            fh.write((f"line {i} " * 200)[:1023].encode() + b"\n")  # 1 KiB a line, 50 MiB in all
    (layout.root / "nine.md").write_bytes(b"".join(f"para {i} about pears\n\n".encode() for i in range(400_000)))
    (layout.root / SENTINEL[0]).write_text(SENTINEL[1])
    result = run_cli(layout, "index", timeout=600)
    assert result.returncode == 0 and one_line(result.stderr), result.stderr
    assert "huge.md: 52,428,800 bytes is over the 10,485,760-byte note limit" in result.stderr
    assert disagreements(layout) == []
    found = json.loads(run_cli(layout, "search", "--json", "lighthouse gulls").stdout)
    assert found["hits"][0]["path"] == SENTINEL[0]
    assert run_cli(layout, "note", "still writable").returncode == 0
    tally("hostile", 2)


# --- hypothesis --------------------------------------------------------------------------------

_BOMS = [
    (b"", "utf-8"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
]
_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30))
_yaml_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@st.composite
def _note_bytes(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["bytes", "text", "text", "frontmatter"]))
    if kind == "bytes":
        return draw(st.binary(max_size=3000))
    text = draw(st.text(st.characters(exclude_categories=("Cs",)), max_size=1500))
    if kind == "frontmatter":
        meta = draw(st.one_of(st.dictionaries(st.text(max_size=10), _yaml_value, max_size=6), _yaml_value))
        block = yaml.safe_dump(meta, allow_unicode=True) if draw(st.booleans()) else draw(st.text(max_size=200))
        text = f"---\n{block}\n---\n{text}"
    endings = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=3))
    parts = text.split("\n")
    text = "".join(p + endings[i % len(endings)] for i, p in enumerate(parts[:-1])) + parts[-1]
    bom, encoding = draw(st.sampled_from(_BOMS))
    return bom + text.encode(encoding, errors="surrogatepass")


def _hypothesis_notes(layout: Layout, examples: int, seed_value: int) -> int:
    (layout.root / SENTINEL[0]).write_text(SENTINEL[1], encoding="utf-8")
    runs = [0]
    with open_index(layout, IndexConfig(embedder="hash-384")) as index:
        reconcile(index)

        @seed(seed_value)
        @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(data=_note_bytes(), name=st.sampled_from(["h.md", "daily/2026-01-02.md", "MEMORY.md", "d/x.md"]))
        def check(data: bytes, name: str) -> None:
            runs[0] += 1
            path = layout.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            reconcile(index, [name])
            row = index.manifest.files()[name]
            assert row.status == "indexed" or (row.error or "").startswith(name), row
            for chunk in index.manifest.get_chunks(index.manifest.chunk_ids(name)).values():
                assert 1 <= chunk.start_line <= chunk.end_line
            assert index_disagreements(index) == []
            hits = Searcher(layout, index).search("lighthouse keeper gulls", build_options(mode="bm25")).hits
            assert hits and hits[0].path == SENTINEL[0]
            assert path.read_bytes() == data
            path.unlink()
            reconcile(index, [name])

        check()
    return runs[0]


def test_hypothesis_notes_quick(layout):
    tally("hostile", _hypothesis_notes(layout, 60, HYPOTHESIS_SEEDS["quick"]))


@pytest.mark.reliability_full
def test_hypothesis_notes_full(layout):
    tally("hostile", _hypothesis_notes(layout, 600, HYPOTHESIS_SEEDS["full"]))


# --- path traversal in every argument that names a file or section -------------------------------


def test_path_traversal_in_every_argument(layout, tmp_path):
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    outside = layout.root.parent / "outside.md"
    outside.write_text("# outside\n\nnot yours\n")
    os.symlink(outside, layout.root / "escape.md")
    (layout.root / "notes.txt").write_text("not a note\n")
    new_content = tmp_path / "new.md"
    new_content.write_text("replacement\n")
    before = snapshot(layout)
    state_before = {p: p.read_bytes() for p in layout.state_dir.rglob("*") if p.is_file()}
    new = str(new_content)
    refused = [
        ("show", "../outside.md"), ("show", str(outside)), ("show", "escape.md"), ("show", "daily/../../outside.md"),
        ("show", ".memvault/index.lock"), ("show", "notes.txt"),
        ("rewrite", "../outside.md", "--file", new), ("rewrite", str(outside), "--file", new),
        ("rewrite", "escape.md", "--file", new), ("rewrite", ".memvault/write.lock", "--file", new),
        ("rewrite", ".trash/x.md", "--file", new), ("rewrite", "notes.txt", "--file", new),
        ("rewrite", "../../../../tmp/evil.md", "--file", new),
        ("note", "--date", "../../etc/passwd", "x"), ("note", "--date", "2026-01-01/../../x", "x"),
        ("search", "--json", "x", "--path", "../"), ("search", "--json", "x", "--path", "/etc"),
        ("search", "--json", "x", "--from", "../../"),
        ("remember", "x", "--section", "a\n## injected"), ("remember", "x", "--section", "# top"),
    ]  # fmt: skip
    for args in refused:
        result = run_cli(layout, *args)
        assert result.returncode in (2, 3, 4), (args, result.returncode, result.stderr)
        assert one_line(result.stderr) and len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)
    # a section named like a path is only a heading inside MEMORY.md
    assert run_cli(layout, "remember", "fine", "--section", "../../etc").returncode == 0
    assert outside.read_text() == "# outside\n\nnot yours\n"
    assert not (Path("/tmp") / "evil.md").exists() and not (layout.root / ".trash").exists()
    after = snapshot(layout)
    assert {k: v for k, v in after.items() if k != "MEMORY.md"} == {k: v for k, v in before.items() if k != "MEMORY.md"}
    assert all(p.read_bytes() == data for p, data in state_before.items() if p.name.endswith(".lock"))
    with running_daemon(layout):
        for request in (
            {"op": "reindex", "paths": ["../outside.md"]},
            {"op": "reindex", "paths": ["/etc/passwd"]},
            {"op": "reindex", "paths": [".memvault/daemon.log"]},
            {"op": "reindex", "paths": ["notes.txt"]},
            {"op": "reindex", "paths": "MEMORY.md"},
            {"op": "note", "text": "x", "date": "../../x"},
            {"op": "search", "query": "x", "path": "../"},
        ):
            reply = ask(layout, request)
            assert reply["ok"] is False and not reply["error"].startswith("internal error"), (request, reply)
        status = ask(layout, {"op": "status"})["status"]
        assert {f["path"] for f in status["failures"]} == {"escape.md"}
        assert status["files_indexed"] == status["files_on_disk"] - 1
        wait_for(lambda: ask(layout, {"op": "ping"}), 5)
    tally("hostile", len(refused) + 8)


HOSTILE_NAMES = ("a\nb", "a::b", "k" * 10_000, "../x", "a/b", "x]y", "#", "", "\x00")


def test_hostile_keys_tags_and_ids_are_refused_in_one_line_on_the_cli_and_the_socket(layout):
    """Keys, tags and trash ids with newlines, `::`, 10,000 characters or path separators, through
    every entry verb: refused in one line (an error reply on the socket), no note or trash changed."""
    assert run_cli(layout, "init", "--lang", "en").returncode == 0
    assert run_cli(layout, "remember", "--type", "config", "--key", "door", "The door sticks").returncode == 0
    before = snapshot(layout)
    trials = 0
    for name in (*HOSTILE_NAMES[:4], ""):  # the CLI: the four the issue names and the empty one; the socket: all
        for args in (
            ("remember", "--type", "config", "--key", name, "x"), ("remember", "--type", "config", "--tag", name, "x"),
            ("note", "--key", name, "x"), ("note", "--tag", name, "x"), ("correct", "--tag", name, "door", "x"),
            ("forget", name), ("correct", name, "x"), ("restore", name),
        ):  # fmt: skip
            result = run_cli(layout, *args)
            assert result.returncode == 2, (args[:2], name[:20], result.returncode, result.stderr)
            assert one_line(result.stderr) and len(result.stderr.strip().splitlines()) == 1, (args[:2], result.stderr)
            trials += 1
    with running_daemon(layout):
        for name in HOSTILE_NAMES:
            for request in (
                {"op": "remember", "text": "x", "type": "config", "key": name},
                {"op": "remember", "text": "x", "type": "config", "tags": [name]},
                {"op": "note", "text": "x", "key": name}, {"op": "note", "text": "x", "tags": [name]},
                {"op": "forget", "key": name}, {"op": "correct", "key": name, "text": "x"},
                {"op": "correct", "key": "door", "text": "x", "tags": [name]}, {"op": "restore", "id": name},
                {"op": "clear", "section": name, "yes": True},
            ):  # fmt: skip
                reply = ask(layout, request)
                assert reply["ok"] is False and not reply["error"].startswith("internal error"), (request, reply)
                assert "\n" not in reply["error"] and reply["exit_code"] == 2, reply
                trials += 1
    assert snapshot(layout) == before
    assert not (layout.root / ".trash").exists()
    tally("hostile", trials)
