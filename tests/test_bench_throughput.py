"""`python -m bench throughput`: the quick run end to end (with the stand-in embedder, so it takes
seconds), and the rule that calls a setting clearly faster."""

from __future__ import annotations

from bench import throughput


def test_quick_run_pairs_every_setting_with_today():
    report = throughput.main(["--quick", "--embedder", "hash-384"])
    labels = [run["label"] for run in report["runs"]]
    assert labels == ["today", "batch 8", "today", "unsorted", "today"]
    for label in ("batch 8", "unsorted"):
        row = report["settings"][label]
        assert len(row["ratios"]) == 2 and all(r > 0 for r in row["ratios"])
        assert row["min_cosine"] > 0.99999 and row["max_abs_diff"] < 1e-6  # same model, same vectors
    table = throughput.table(report)
    assert "| batch 8 |" in table and "| unsorted |" in table


def _run(label: str, rate: float, cosine: float = 1.0) -> dict:
    return {"label": label, "chunks_per_s": rate, "cpu_ms_per_chunk": 1.0, "peak_rss_mib": 1.0,
            "min_cosine": cosine, "max_abs_diff": 0.0}  # fmt: skip


def test_clearly_faster_needs_every_pair_and_the_same_vectors():
    runs = [_run("today", 10), _run("a", 12), _run("today", 10), _run("b", 12), _run("today", 11.5),
            _run("c", 20, cosine=0.999), _run("today", 10)]  # fmt: skip
    settings = throughput.summarise(runs)
    assert settings["a"]["ratios"] == [1.2, 1.2] and settings["a"]["clearly_faster"]
    assert not settings["b"]["clearly_faster"]  # 12 / 11.5 is under 1.10
    assert not settings["c"]["clearly_faster"]  # faster, but other vectors
    assert settings["today"]["ratios"] == [] and not settings["today"]["clearly_faster"]
