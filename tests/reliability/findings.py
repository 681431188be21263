"""The failures this suite found in memvault and that were fixed, each with the test that failed before
its fix (checked by running the suite against the code before the fixes). The report counts them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    category: str
    where: str
    symptom: str
    test: str


FINDINGS: tuple[Finding, ...] = (
    Finding(
        "corrupt", "indexer/index.py, indexer/vectors.py",
        "vector store deleted: the next open made an empty store and kept the manifest, so vector search "
        "silently found nothing for ever (a search even created the empty store)",
        "test_corrupt.py::test_damaged_offline_is_detected_reported_and_rebuilt[vector store deleted]",
    ),
    Finding(
        "corrupt", "indexer/manifest.py, search/engine.py",
        "manifest pages garbled: `index` reported nothing and changed nothing; `search` died with an internal "
        "error instead of falling back",
        "test_corrupt.py::test_damaged_offline_is_detected_reported_and_rebuilt[manifest pages garbled]",
    ),
    Finding(
        "corrupt", "indexer/manifest.py",
        "BM25 token counts garbled in the manifest: `search` and the daemon's start died with JSONDecodeError",
        "test_corrupt.py::test_damaged_offline_is_detected_reported_and_rebuilt[BM25 token counts garbled]",
    ),
    Finding(
        "corrupt", "indexer/index.py",
        "manifest deleted: silently rebuilt, with no line saying why everything was re-read",
        "test_corrupt.py::test_damaged_offline_is_detected_reported_and_rebuilt[manifest deleted]",
    ),
    Finding(
        "corrupt", "indexer/reconcile.py, indexer/index.py, indexer/daemon.py",
        "store or manifest deleted while the daemon runs: every later write failed with an internal error (or "
        "went to the unlinked file) until a restart, and `daemon stop` left stale files",
        "test_corrupt.py::test_damaged_while_the_daemon_runs[vector store deleted], [manifest deleted]",
    ),
    Finding(
        "corrupt", "indexer/index.py",
        "vector store made unreadable: `index` failed with exit 7 every time instead of rebuilding it",
        "test_corrupt.py::test_unreadable_derived_data_is_rebuilt[vectors]",
    ),
    Finding(
        "hostile", "vault/chunking.py",
        "a long line with no sentence end was chunked in quadratic time: 1 MB took 31 s, a 10 MB note "
        "(inside the size limit) about an hour, holding the daemon's lock",
        "test_hostile.py::test_huge_line_is_chunked_in_linear_time",
    ),
    Finding(
        "hostile", "vault/model.py",
        "YAML aliases in frontmatter `tags` (a 600-byte 'billion laughs' note) grew the index to 681 MB",
        "test_hostile.py::test_alias_bomb_frontmatter_keeps_tags_small, test_hand_made_hostile_notes_through_the_cli",
    ),
    Finding(
        "hostile", "vault/scan.py",
        "a folder (or link to one) named `*.md` was a failed note when the watcher saw it and no note when the "
        "scan did: the daemon's index and the files disagreed",
        "test_hostile.py::test_hostile_notes_arriving_while_the_daemon_runs",
    ),
    Finding(
        "hostile", "vault/paths.py",
        "`rewrite` replaced any file in the vault: `.memvault/index.lock`, `.trash/…`, `notes.txt`",
        "test_hostile.py::test_path_traversal_in_every_argument",
    ),
    Finding(
        "hostile", "search/engine.py",
        "`search --path ../` and `--path /etc` were silently turned into no filter / another filter "
        "(the `..` check ran after stripping dots and slashes)",
        "test_hostile.py::test_path_traversal_in_every_argument",
    ),
    Finding(
        "hostile", "indexer/daemon.py",
        "socket `reindex` took any path: it indexed `.memvault/daemon.log` into search, and a string was "
        "iterated letter by letter (recording `.` as a failed note)",
        "test_hostile.py::test_path_traversal_in_every_argument",
    ),
    Finding(
        "socket", "indexer/daemon.py",
        "fields of the wrong type (`date: 5`, `section: [..]`, `paths: [1]`) gave internal errors with "
        "tracebacks in the log",
        "test_socket.py::test_malformed_requests_are_refused_one_by_one",
    ),
    Finding(
        "socket", "indexer/daemon.py",
        "JSON nested 100,000 deep: RecursionError as an internal error with a traceback",
        "test_socket.py::test_malformed_requests_are_refused_one_by_one",
    ),
    Finding(
        "socket", "search/engine.py, search/batch.py",
        "`rrf_k: -1` (ZeroDivisionError), `limit: 1e400` and `limit: 10**29` (OverflowError) were internal "
        "errors, also on the CLI",
        "test_socket.py::test_malformed_requests_are_refused_one_by_one",
    ),
    Finding(
        "socket", "indexer/daemon.py",
        "no bound on connections: 1,000 stalled clients took 1,000 threads and +218 MB, never given back",
        "test_socket.py::test_flood_quick",
    ),
    Finding(
        "socket", "indexer/daemon.py, search/client.py",
        "listen backlog of 5, and a client that gave up at once on a full backlog: in a burst, CLI calls "
        "decided no daemon was running and fell back",
        "test_socket.py::test_flood_quick",
    ),
    Finding(
        "socket", "indexer/daemon.py",
        "a client that sent half a line and stopped was dropped after 30 s without any error reply",
        "test_socket.py::test_slow_client_is_cut_off_with_an_error_and_others_are_served",
    ),
    Finding(
        "crash", "memvault/api.py, memvault/daemon/server.py",
        "a daemon killed after a verb's writes and before its reply made the CLI run the verb again in its "
        "own process: `forget MEMORY.md:5` removed two entries, `extract` counted its proposals seen twice, "
        "`restore`, `correct` and `approve` exited 2 although their effect had happened (issue 25, case 4)",
        "test_exactly_once.py::test_a_daemon_killed_before_its_reply_does_not_make_the_cli_run_the_verb_again",
    ),
    Finding(
        "crash", "vault/forget.py, memvault/verbs/entries.py",
        "a purge killed while it purged the index left the secret in the manifest, and `forget --purge` "
        "asked again said 'no entry' (issue 25, case 11)",
        "tests/test_purge.py::test_a_purge_killed_midway_is_finished_by_the_next[mid-manifest]",
    ),
    Finding(
        "concurrency", "vault/fileio.py, vault/swap.py",
        "an editor saving in place (truncate, then write) while memvault wrote: memvault read the empty note, "
        "swapped in 'nothing + its change' and the editor's bytes went into the displaced inode: 40 entries "
        "became 1 (issue 43)",
        "test_editor_in_place.py::test_an_in_place_save_started_while_memvault_writes_is_kept, "
        "test_a_read_of_the_truncated_note_is_never_trusted",
    ),
    Finding(
        "concurrency", "vault/fileio.py, vault/swap.py",
        "without the atomic exchange (macOS, some network and FUSE file systems) a rename-style save between "
        "memvault's check and its rename was lost (issue 43)",
        "test_editor_in_place.py::test_without_the_exchange_a_rename_save_at_memvaults_rename_is_kept",
    ),
    Finding(
        "concurrency", "vault/forget.py",
        "the editor harness, in place, under load: `correct` chose its entry from a plain read cut before an "
        "older version's [superseded:: ...], pointed its correction at it, and the key had two current versions",
        "test_correct.py::test_a_correct_during_an_in_place_save_names_the_current_version",
    ),
    Finding(
        "concurrency", "vault/whole.py, vault/entries.py",
        "the same: read mid-save, MEMORY.md ended before a key's entry and `forget` said 'no entry with key'",
        "test_correct.py::test_a_forget_during_an_in_place_save_finds_its_key",
    ),
    Finding(
        "concurrency", "vault/forget.py (mark_or_undo)",
        "the same: `correct` wrote its correction, MEMORY.md kept changing for all 50 tries of the mark, and "
        "the error said 'nothing written' while the key had two current versions",
        "test_correct.py::test_a_correct_whose_mark_cannot_be_made_takes_its_correction_back, "
        "test_a_keyed_save_whose_mark_cannot_be_made_takes_its_entry_back",
    ),
)  # fmt: skip
