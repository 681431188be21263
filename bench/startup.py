"""`python -m bench startup`: what a person or an agent calling the CLI pays per command, side by side.

On one generated vault of mixed English and Chinese daily notes with known answers planted in
them (a copy for each tool), each command is run as a whole process, the tools in turn (A B C, A B C, ...), so a ratio
compares runs made moments apart on the same loaded machine:

- no-change re-index (`memvault index`; qmd: `qmd update`);
- cold search, no daemon, BM25, JSON, top 5, for English, Chinese and general questions
  (`memvault search Q --mode bm25 --json --limit 5`; qmd: `qmd search Q --json -n 5`);
- append one line to a note, then re-index.

Each tool is a label and a program: `--memvault LABEL=PATH` (repeat it to compare builds, the first
is the one the ratios divide by) and `--qmd PATH` (qmd 2.8.3: `npm install @tobilu/qmd@2.8.3` with
Node 22; its state goes in the work folder, never the user's). The known-answer questions also give
each tool's count of the right note first. memvault's index is built with `--embedder` (default the
stand-in `hash-384`: BM25 and the walk are the same code whatever the model, and an edit then costs
no model load); the processes run with Python's bytecode cache, as an installed package does.
"""

from __future__ import annotations

import argparse
import datetime as dt
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

# (fact, kind, question): planted in the generated vault, each in a note of its own (`planted`)
FACTS = [
    ("The staging database password rotates every Tuesday at noon.", "en",
     "when does the staging database password rotate"),
    ("Ana moved the quarterly budget review to the Lisbon office.", "en",
     "where is the quarterly budget review"),
    ("We chose Caddy over nginx for the reverse proxy because of automatic TLS.", "en",
     "why did we pick caddy for the reverse proxy"),
    ("The flaky socket test was fixed by waiting on the daemon's pid file.", "en",
     "how was the flaky socket test fixed"),
    ("Marco prefers green tea and dislikes meetings before ten.", "en",
     "what does marco drink"),
    ("The invoice export runs as a cron job at 02:00 UTC on the billing host.", "en",
     "when does the invoice export cron job run"),
    ("向量数据库的备份每周五晚上自动执行。", "zh", "向量数据库什么时候备份"),
    ("小李负责新版本的灰度发布和回滚方案。", "zh", "谁负责灰度发布"),
    ("我们决定把日志保留期限从三十天改成九十天。", "zh", "日志保留多少天"),
    ("客户希望在下个月之前完成移动端的支付功能。", "zh", "移动端支付功能什么时候完成"),
    ("服务器机房的空调在周三下午维修。", "zh", "机房空调哪天维修"),
    ("新同事王芳下周一入职，负责前端测试。", "zh", "王芳负责什么工作"),
    ("The kayak trip to Lake Bled is booked for the second weekend of October.", "general",
     "kayak trip"),
    ("Renewed the passport; the appointment number was 4471.", "general",
     "passport appointment"),
    ("Bought a sourdough starter from the market on Rua Augusta.", "general",
     "sourdough starter"),
    ("Dentist moved the check-up to the ninth of December.", "general", "dentist check-up"),
    ("Lent the blue tent to Tomás for his camping weekend.", "general", "who has the blue tent"),
]  # fmt: skip
FILLER_EN = ("meeting", "notes", "follow", "email", "review", "draft", "call", "plan", "lunch", "walk",
             "reading", "errand", "sync", "update", "weekly", "ticket", "cleanup", "idea")  # fmt: skip
FILLER_ZH = ("会议", "记录", "跟进", "邮件", "整理", "讨论", "计划", "午饭", "散步", "阅读", "周报", "同步")


def _day(i: int) -> str:
    return (dt.date(2025, 1, 1) + dt.timedelta(days=i)).isoformat()


def planted(files: int) -> list[tuple[str, str, str, str]]:
    """(note, fact, kind, question) for each fact, spread evenly over the vault's days."""
    return [(f"daily/{_day((j + 1) * files // (len(FACTS) + 1))}.md", *fact) for j, fact in enumerate(FACTS)]


def generate(root: Path, files: int, seed: int = 11) -> None:
    """`files` daily notes from 2025-01-01 on, a few filler entries each (a third of them Chinese),
    the planted facts in their notes, and a MEMORY.md."""
    rnd = random.Random(seed)
    facts = {path: text for path, text, _, _ in planted(files)}
    (root / "daily").mkdir(parents=True, exist_ok=True)
    for i in range(files):
        name = _day(i)
        lines = [f"# {name}", "", "## Conversations", ""]
        for _ in range(rnd.randint(3, 7)):
            if rnd.random() < 0.33:
                lines.append("- " + "".join(rnd.choice(FILLER_ZH) for _ in range(rnd.randint(4, 9))) + "。")
            else:
                lines.append("- " + " ".join(rnd.choice(FILLER_EN) for _ in range(rnd.randint(5, 12))).capitalize())
        if f"daily/{name}.md" in facts:
            lines.append("- " + facts[f"daily/{name}.md"])
        (root / "daily" / f"{name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "MEMORY.md").write_text("# Memory\n\n## Preferences\n\n- Terse answers, no emoji\n", encoding="utf-8")


class Tool:
    """One program's commands; `run` times a whole process (wall and CPU of the children)."""

    def __init__(self, label: str, kind: str, program: str, vault: Path, env: dict[str, str]) -> None:
        self.label, self.kind, self.program, self.vault, self.env = label, kind, program, vault, env

    def argv(self, what: str, query: str = "") -> list[str]:
        if self.kind == "qmd":
            return {"index": [self.program, "update"],
                    "search": [self.program, "search", query, "--json", "-n", "5"]}[what]  # fmt: skip
        vault = ["--vault", str(self.vault)]
        if what == "index":
            return [self.program, *vault, "index"]
        return [self.program, *vault, "search", query, "--mode", "bm25", "--json", "--limit", "5"]

    def run(self, what: str, query: str = "") -> tuple[float, float, str]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(self.argv(what, query), env=self.env, cwd=self.vault.parent, capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"{self.label}: {' '.join(self.argv(what, query))} failed: {done.stderr.strip()[-400:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, done.stdout

    def first_file(self, stdout: str) -> str | None:
        """The note the tool ranked first, vault-relative."""
        try:
            data = json.loads(stdout)
        except json.JSONDecodeError:
            return None
        hits = data if self.kind == "qmd" else data.get("hits", [])
        if not hits:
            return None
        path = hits[0]["file"] if self.kind == "qmd" else hits[0]["path"]
        return path.split("://", 1)[-1].split("/", 1)[-1] if self.kind == "qmd" else path


def _spread(values: list[float]) -> dict[str, float]:
    return {"runs": len(values), "median": statistics.median(values), "min": min(values), "max": max(values)}


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench startup")
    parser.add_argument("--memvault", action="append", metavar="LABEL=PATH",
                        help="a memvault program (repeat to compare builds; default: this one's)")  # fmt: skip
    parser.add_argument("--qmd", metavar="PATH", help="qmd's program, to measure beside it")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--runs", type=int, default=9, help="runs of each command per tool (in turns)")
    parser.add_argument("--embedder", default="hash-384", help="what memvault's index is built with")
    parser.add_argument("--workdir", type=Path, help="keep the vault and qmd's state here")
    args = parser.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="memvault-startup-"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "MEMVAULT_VAULT")}
    env["MEMVAULT_CACHE"] = env.get("MEMVAULT_CACHE") or str(work / "cache")
    programs = [m.split("=", 1) for m in (args.memvault or [f"memvault={Path(sys.executable).parent / 'memvault'}"])]
    labels = [label for label, _ in programs] + (["qmd"] if args.qmd else [])
    for label in labels:  # each tool its own copy of the same notes, so no index sees another's writes
        shutil.rmtree(work / label, ignore_errors=True)
        generate(work / label / "memory", args.files)
    tools = [Tool(label, "memvault", program, work / label / "memory", env) for label, program in programs]
    for tool in tools:
        built = subprocess.run([tool.program, "--vault", str(tool.vault), "index", "--embedder", args.embedder],
                               env=env, capture_output=True, text=True, timeout=1200)  # fmt: skip
        if built.returncode != 0:
            raise SystemExit(f"{tool.label}: memvault index failed: {built.stderr.strip()}")
    if args.qmd:
        state = work / "qmd" / "state"
        qmd_env = {**env, "XDG_CACHE_HOME": str(state / "cache"), "XDG_CONFIG_HOME": str(state / "config")}
        tools.append(Tool("qmd", "qmd", args.qmd, work / "qmd" / "memory", qmd_env))
        subprocess.run([args.qmd, "collection", "add", str(tools[-1].vault), "--name", "bench"], env=qmd_env,
                       check=True, capture_output=True, timeout=300)  # fmt: skip
    facts = planted(args.files)
    for tool in tools:  # warm: bytecode written, jieba's words copied, page cache filled
        tool.run("index")
        tool.run("search", facts[0][3])
        tool.run("search", facts[6][3])

    figures: dict[str, dict[str, list[float]]] = {t.label: {} for t in tools}
    found: dict[str, dict[str, int]] = {t.label: {"en": 0, "zh": 0, "general": 0} for t in tools}
    questions = {kind: [f for f in facts if f[2] == kind] for kind in ("en", "zh", "general")}
    for r in range(args.runs):
        for tool in tools:
            walls = figures[tool.label]
            walls.setdefault("no-change re-index", []).append(tool.run("index")[0])
            for kind, asked in questions.items():
                query = asked[r % len(asked)][3]
                wall = tool.run("search", query)[0]
                walls.setdefault(f"cold search, {kind}", []).append(wall)
            with open(tool.vault / facts[-1][0], "a", encoding="utf-8") as fh:
                fh.write(f"- appended line {r} by the benchmark for {tool.label}\n")
            wall, cpu, _ = tool.run("index")
            walls.setdefault("append one line, then re-index", []).append(wall)
            walls.setdefault("append one line, then re-index (CPU)", []).append(cpu)
    for tool in tools:  # every known answer once, outside the timing
        for path, _, kind, query in facts:
            found[tool.label][kind] += tool.first_file(tool.run("search", query)[2]) == path
    rows = {label: {what: _spread(v) for what, v in walls.items()} for label, walls in figures.items()}
    return {"files": args.files, "runs": args.runs, "embedder": args.embedder, "tools": [t.label for t in tools],
            "figures": rows, "right_first": found, "questions": {k: len(v) for k, v in questions.items()}}  # fmt: skip


def table(report: dict[str, Any]) -> str:
    """Each figure's median per tool; then each memvault over qmd, and the last memvault over the first."""
    tools = report["tools"]
    mine = [t for t in tools if t != "qmd"]
    pairs = [(t, "qmd") for t in mine if "qmd" in tools] + ([(mine[-1], mine[0])] if len(mine) > 1 else [])
    head = " | ".join(f"{t} (median s)" for t in tools) + "".join(f" | {a} / {b}" for a, b in pairs)
    lines = [f"| figure | {head} |", "|---|" + "---|" * (len(tools) + len(pairs))]
    for what in report["figures"][tools[0]]:
        median = {t: report["figures"][t][what]["median"] for t in tools}
        cells = " | ".join(f"{median[t]:.3f}" for t in tools) + "".join(
            f" | {median[a] / median[b]:.2f}" for a, b in pairs
        )
        lines.append(f"| {what} | {cells} |")
    q = report["questions"]
    for t in tools:
        f = report["right_first"][t]
        lines.append(f"\n{t}: the right note first for {f['en']}/{q['en']} English, {f['zh']}/{q['zh']} Chinese "
                     f"and {f['general']}/{q['general']} general questions")  # fmt: skip
    return "\n".join(lines)
