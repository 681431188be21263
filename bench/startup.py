"""`python -m bench startup`: what a person or an agent calling the CLI pays per command, side by side.

On one generated vault of mixed English and Chinese daily notes with known answers planted in
them, each command is run as a whole process, the tools in turn (A B C, A B C, ...), so a ratio
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

# (question, the note that answers it, kind): facts planted in the generated vault, one note each
FACTS = [
    ("daily/2025-03-04.md", "The staging database password rotates every Tuesday at noon.", "en",
     "when does the staging database password rotate"),
    ("daily/2025-03-19.md", "Ana moved the quarterly budget review to the Lisbon office.", "en",
     "where is the quarterly budget review"),
    ("daily/2025-04-02.md", "We chose Caddy over nginx for the reverse proxy because of automatic TLS.", "en",
     "why did we pick caddy for the reverse proxy"),
    ("daily/2025-04-21.md", "The flaky socket test was fixed by waiting on the daemon's pid file.", "en",
     "how was the flaky socket test fixed"),
    ("daily/2025-05-08.md", "Marco prefers green tea and dislikes meetings before ten.", "en",
     "what does marco drink"),
    ("daily/2025-05-30.md", "The invoice export runs as a cron job at 02:00 UTC on the billing host.", "en",
     "when does the invoice export cron job run"),
    ("daily/2025-06-11.md", "向量数据库的备份每周五晚上自动执行。", "zh", "向量数据库什么时候备份"),
    ("daily/2025-06-27.md", "小李负责新版本的灰度发布和回滚方案。", "zh", "谁负责灰度发布"),
    ("daily/2025-07-09.md", "我们决定把日志保留期限从三十天改成九十天。", "zh", "日志保留多少天"),
    ("daily/2025-07-23.md", "客户希望在下个月之前完成移动端的支付功能。", "zh", "移动端支付功能什么时候完成"),
    ("daily/2025-08-14.md", "服务器机房的空调在周三下午维修。", "zh", "机房空调哪天维修"),
    ("daily/2025-08-29.md", "新同事王芳下周一入职，负责前端测试。", "zh", "王芳负责什么工作"),
    ("daily/2025-09-10.md", "The kayak trip to Lake Bled is booked for the second weekend of October.", "general",
     "kayak trip"),
    ("daily/2025-09-24.md", "Renewed the passport; the appointment number was 4471.", "general",
     "passport appointment"),
    ("daily/2025-10-07.md", "Bought a sourdough starter from the market on Rua Augusta.", "general",
     "sourdough starter"),
    ("daily/2025-10-22.md", "Dentist moved the check-up to the ninth of December.", "general", "dentist check-up"),
    ("daily/2025-11-05.md", "Lent the blue tent to Tomás for his camping weekend.", "general", "who has the blue tent"),
]  # fmt: skip
FILLER_EN = ("meeting", "notes", "follow", "email", "review", "draft", "call", "plan", "lunch", "walk",
             "reading", "errand", "sync", "update", "weekly", "ticket", "cleanup", "idea")  # fmt: skip
FILLER_ZH = ("会议", "记录", "跟进", "邮件", "整理", "讨论", "计划", "午饭", "散步", "阅读", "周报", "同步")


def generate(root: Path, files: int, seed: int = 11) -> None:
    """`files` daily notes from 2025-01-01 on, a few filler entries each (a third of them Chinese),
    the planted facts in their notes, and a MEMORY.md."""
    rnd = random.Random(seed)
    planted = {path: text for path, text, _, _ in FACTS}
    (root / "daily").mkdir(parents=True, exist_ok=True)
    day = time.strptime("2025-01-01", "%Y-%m-%d")
    start = time.mktime(day)
    for i in range(files):
        name = time.strftime("%Y-%m-%d", time.localtime(start + (i * 86400) + 43200))
        lines = [f"# {name}", "", "## Conversations", ""]
        for _ in range(rnd.randint(3, 7)):
            if rnd.random() < 0.33:
                lines.append("- " + "".join(rnd.choice(FILLER_ZH) for _ in range(rnd.randint(4, 9))) + "。")
            else:
                lines.append("- " + " ".join(rnd.choice(FILLER_EN) for _ in range(rnd.randint(5, 12))).capitalize())
        if f"daily/{name}.md" in planted:
            lines.append("- " + planted[f"daily/{name}.md"])
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
    shutil.rmtree(work / "vault", ignore_errors=True)
    vault = work / "vault" / "memory"
    generate(vault, args.files)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "MEMVAULT_VAULT")}
    env["MEMVAULT_CACHE"] = env.get("MEMVAULT_CACHE") or str(work / "cache")
    programs = [m.split("=", 1) for m in (args.memvault or [f"memvault={Path(sys.executable).parent / 'memvault'}"])]
    tools = [Tool(label, "memvault", program, vault, env) for label, program in programs]
    if args.qmd:
        qmd_env = {**env, "XDG_CACHE_HOME": str(work / "qmd-cache"), "XDG_CONFIG_HOME": str(work / "qmd-config")}
        shutil.rmtree(work / "qmd-cache", ignore_errors=True)
        shutil.rmtree(work / "qmd-config", ignore_errors=True)
        subprocess.run([args.qmd, "collection", "add", str(vault), "--name", "bench"], env=qmd_env, check=True,
                       capture_output=True, timeout=300)  # fmt: skip
        tools.append(Tool("qmd", "qmd", args.qmd, vault, qmd_env))
    built = subprocess.run([tools[0].program, "--vault", str(vault), "index", "--embedder", args.embedder],
                           env=env, capture_output=True, text=True, timeout=1200)  # fmt: skip
    if built.returncode != 0:
        raise SystemExit(f"memvault index failed: {built.stderr.strip()}")
    for tool in tools:  # warm: bytecode written, jieba's words copied, page cache filled
        tool.run("index")
        tool.run("search", FACTS[0][3])
        tool.run("search", FACTS[6][3])

    figures: dict[str, dict[str, list[float]]] = {t.label: {} for t in tools}
    found: dict[str, dict[str, int]] = {t.label: {"en": 0, "zh": 0, "general": 0} for t in tools}
    questions = {kind: [f for f in FACTS if f[2] == kind] for kind in ("en", "zh", "general")}
    edited = vault / FACTS[-1][0]
    for r in range(args.runs):
        for tool in tools:
            walls = figures[tool.label]
            walls.setdefault("no-change re-index", []).append(tool.run("index")[0])
            for kind, facts in questions.items():
                query = facts[r % len(facts)][3]
                wall = tool.run("search", query)[0]
                walls.setdefault(f"cold search, {kind}", []).append(wall)
            with open(edited, "a", encoding="utf-8") as fh:
                fh.write(f"- appended line {r} by the benchmark for {tool.label}\n")
            wall, cpu, _ = tool.run("index")
            walls.setdefault("append one line, then re-index", []).append(wall)
            walls.setdefault("append one line, then re-index (CPU)", []).append(cpu)
    for tool in tools:  # every known answer once, outside the timing
        for path, _, kind, query in FACTS:
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
