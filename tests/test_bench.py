"""The benchmark's quick runs: both commands work end to end and report sane figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.datasets import DATA

ROOT = Path(__file__).resolve().parents[1]


def _bench(*args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True, cwd=ROOT,
                            timeout=300, env={**os.environ})  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


pytestmark = pytest.mark.long  # benchmark runs: `pytest -m long`


@pytest.mark.skipif(not (DATA / "locomo").is_dir(), reason="../shared/bench is not present")
def test_quality_quick_reports_every_mode():
    out = _bench("quality", "--quick", "8", "--sets", "locomo,scifact")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ") and "---" not in line][1:]
    seen = {(r[0].strip(), r[1].strip()) for r in rows}
    for mode in ("bm25", "vector", "hybrid", "substring"):
        assert ("scifact", mode) in seen and ("locomo cat1-4", mode) in seen
    for row in rows:
        assert all(0.0 <= float(v) <= 1.0 for v in row[2:6]), row
    best = {r[1].strip(): float(r[2]) for r in rows if r[0].strip() == "scifact"}
    assert best["hybrid"] > 0.3 and best["bm25"] > 0.3  # the right documents are found at all


def test_speed_quick_reports_spreads_and_ratios():
    out = _bench("speed", "--quick", "--server")
    results = sorted((ROOT / "bench" / "results").glob("speed-*.json"))
    report = json.loads(results[-1].read_text())
    real = report["runs"]["real_model"]
    assert real["index"]["no_change_files_changed"] == 0
    assert real["index"]["pipeline_over_embedder"] > 0
    edit = real["daemon"]["edit_to_searchable_s"]
    assert edit["runs"] == 3 and edit["min"] <= edit["median"] <= edit["p95"] <= edit["max"]
    assert real["daemon"]["cold_over_daemon_median"] > 0
    assert "stand-in" in json.dumps(report) and "| real_model |" in out
    fresh = report["runs"]["fresh_40_files"]["after_write"]  # no daemon: what was just written is found
    assert (fresh["found_after_save"], fresh["found_after_edit"], fresh["search_after_edit_s"]["runs"]) == (3, 3, 3)
    served = report["runs"]["stand_in_300_chunks"]["server"]  # the same vault through a local-mode collection
    assert served["chunks_embedded"] == served["embedded_chunks"] and served["no_change_files_changed"] == 0
    for mode in ("bm25", "hybrid"):
        assert served[f"{mode}_cold_embedded_s"]["runs"] == served[f"{mode}_cold_server_s"]["runs"] == 2
        assert served[f"{mode}_server_over_embedded_median"] > 0 and served[f"{mode}_server_queries_with_hits"] == 2
    assert served["local_mode_folder_bytes"] > 0 and "| stand_in_300_chunks | server.full_index_s |" in out


def test_startup_times_each_command_and_finds_the_planted_facts(tmp_path):
    """`bench startup` with this build alone (qmd is not installed here): every figure timed as often as
    asked, and the planted facts found first, in English and Chinese."""
    _bench("startup", "--files", "40", "--runs", "2", "--workdir", str(tmp_path))
    report = json.loads(sorted((ROOT / "bench" / "results").glob("startup-*.json"))[-1].read_text())
    figures = report["figures"]["memvault"]
    assert {f["runs"] for f in figures.values()} == {2} and len(figures) == 6
    assert report["right_first"]["memvault"] == report["questions"]
