"""A note with broken YAML frontmatter is indexed as plain text, and the daemon says so: one warning line in
its log naming the file, and the same among `status`'s errors, as `memvault index` prints it. It used to
be silent when the daemon indexed it."""

from __future__ import annotations

from memvault.daemon.files import log_path
from tests.reliability.conftest import ask, running_daemon, wait_for

BROKEN = "---\ntitle: [never closed\n---\n# Plan\n\n- Zorblat ships in March\n"


def test_the_daemon_reports_broken_frontmatter_in_its_log_and_status(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    with running_daemon(layout):
        wait_for(lambda: (ask(layout, {"op": "status"}) or {}).get("status", {}).get("last_full_reconcile"))
        (layout.root / "plan.md").write_text(BROKEN, encoding="utf-8")  # the watcher's pass indexes it

        def told() -> list[str]:
            errors = ask(layout, {"op": "status"})["status"]["errors"]
            return [e for e in errors if "plan.md" in e and "broken frontmatter" in e]

        (error,) = wait_for(told)
        assert "\n" not in error and "plan.md:3: broken frontmatter" in error
        hits = ask(layout, {"op": "search", "query": "Zorblat", "mode": "bm25"})
        assert hits and hits["ok"] and [h["path"] for h in hits["hits"]] == ["plan.md"]  # still indexed, as text
    logged = [line for line in log_path(layout).read_text().splitlines() if "plan.md" in line]
    assert len(logged) == 1 and "broken frontmatter" in logged[0] and "WARNING" in logged[0].upper()
