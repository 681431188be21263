"""Run the reliability suite and print its table: category, trials run, failures found and fixed,
failures left, seeds.

    .venv/bin/python -m tests.reliability.report           # everything: quick and full (about 15 minutes)
    .venv/bin/python -m tests.reliability.report --quick   # only what the default test run includes

Trials are counted by the tests themselves (each SIGKILL, damaged file, hostile note, hypothesis
example, write call and socket request is one); failures left are the tests that failed in this run.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.reliability.findings import FINDINGS
from tests.reliability.test_crash import FULL_SEED, QUICK_SEED
from tests.reliability.test_hostile import HYPOTHESIS_SEEDS

CATEGORIES = {
    "crash": ("Crash consistency", "test_crash"),
    "corrupt": ("Corrupt derived data", "test_corrupt"),
    "hostile": ("Hostile notes", "test_hostile"),
    "concurrency": ("Concurrency", "test_concurrency"),
    "socket": ("Socket", "test_socket"),
}
SEEDS = {
    "crash": f"random.Random({QUICK_SEED}) quick, ({FULL_SEED}) full",
    "hostile": f"hypothesis @seed({HYPOTHESIS_SEEDS['quick']}) quick, @seed({HYPOTHESIS_SEEDS['full']}) full",
}


def run(quick: bool) -> tuple[dict[str, int], dict[str, int], float]:
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        tally_file, junit = Path(tmp) / "tally.jsonl", Path(tmp) / "junit.xml"
        marks = "not reliability_full" if quick else "reliability_full or not reliability_full"
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/reliability", "-m", marks,
             f"--junitxml={junit}"],
            cwd=root, env={**os.environ, "MEMVAULT_RELIABILITY_TALLY": str(tally_file)}, check=False,
        )  # fmt: skip
        seconds = time.monotonic() - started
        trials: dict[str, int] = collections.Counter()
        if tally_file.exists():
            for line in tally_file.read_text().splitlines():
                record = json.loads(line)
                trials[record["category"]] += record["trials"]
        failed: dict[str, int] = collections.Counter()
        for case in ET.parse(junit).getroot().iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                module = case.get("classname", "").rsplit(".", 1)[-1]
                category = next((c for c, (_, m) in CATEGORIES.items() if m == module), "other")
                failed[category] += 1
    return trials, failed, seconds


def table(trials: dict[str, int], failed: dict[str, int]) -> str:
    fixed = collections.Counter(f.category for f in FINDINGS)
    rows = ["| category | trials run | failures found and fixed | failures left | seeds |", "|---|---:|---:|---:|---|"]
    for key, (title, _) in CATEGORIES.items():
        rows.append(
            f"| {title} | {trials.get(key, 0):,} | {fixed[key]} | {failed.get(key, 0)} | {SEEDS.get(key, '–')} |"
        )
    rows.append(f"| **total** | {sum(trials.values()):,} | {sum(fixed.values())} | {sum(failed.values())} | |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the part the default test run includes")
    args = parser.parse_args()
    trials, failed, seconds = run(args.quick)
    print()
    print(table(trials, failed))
    print(f"\n{'quick' if args.quick else 'full'} run: {seconds / 60:.1f} minutes")
    return 1 if sum(failed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
