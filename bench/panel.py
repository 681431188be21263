"""`python -m bench panel [--entries N] [--repeat R] [--embedder NAME]`: the memory panel's pages on a
big vault (issue 46: "a page of 10,000 entries renders in under a second here").

A vault of N entries (default 10,000) is written straight into its notes: a MEMORY.md of eight sections
(a fifth of the entries, some keyed, some tagged, one corrected) and daily notes of 40 entries each for
the rest, two of every five days with a summary, some entries of a conversation. It is indexed once (the
hash embedder by default: no page but the inspector asks the model, and building 10k vectors with it
would only make the run long), the console script's `memvault ui` is started on it, and each page is
asked R times (default 5) with the session's cookie, as a browser would after the first visit. Per
page: the first request (cold: the panel's process imports and reads the notes for the first time)
and the median and worst of the rest, in wall milliseconds, with the HTML's size and the rows shown.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

SECTIONS = ("Preferences", "Architecture decisions", "Configuration", "Solutions", "Discoveries", "Team",
            "Release process", "Notes")  # fmt: skip
WORDS = ("redis", "postgres", "deploy", "billing", "cache", "queue", "review", "release", "backup", "metrics",
         "latency", "schema", "index", "token", "budget", "oncall", "runner", "mirror", "gateway",
         "search")  # fmt: skip
PER_DAY = 40
FIRST_DAY = dt.date(2026, 1, 5)


def _sentence(n: int) -> str:
    a, b, c = WORDS[n % 20], WORDS[(n * 7 + 3) % 20], WORDS[(n * 13 + 5) % 20]
    return f"Entry {n}: the {a} of the {b} service talks to {c} on port {4000 + n % 5000}"


def build(root: Path, entries: int) -> dict[str, int]:
    """The vault's notes, written at once; what it holds."""
    (root / "daily").mkdir(parents=True)
    in_memory = entries // 5
    lines = ["# Long-term Memory", ""]
    per_section = max(1, in_memory // len(SECTIONS))
    for s, title in enumerate(SECTIONS):
        lines += [f"## {title}", ""]
        for i in range(per_section):
            n = s * per_section + i
            key = f" [key:: fact-{n}]" if n % 4 == 0 else ""
            tag = f" #{WORDS[n % 20]}" if n % 3 == 0 else ""
            lines.append(f"- {_sentence(n)}{tag}{key} <!-- saved 2026-11-30 -->")
        lines.append("")
    (root / "MEMORY.md").write_text("\n".join(lines), encoding="utf-8")
    written, day = per_section * len(SECTIONS), 0
    while written < entries:
        date = FIRST_DAY + dt.timedelta(days=day)
        head = f"---\ndate: {date}\nindex: day {day}, about {WORDS[day % 20]}\n---\n" if day % 5 < 2 else ""
        body = [f"{head}# {date}", "", "## Conversations", ""]
        for i in range(min(PER_DAY, entries - written)):
            n = written + i
            said = f" [conversation:: conv-{day}]" if i < 5 else ""
            body.append(f"- {9 + i // 6:02d}:{(i * 7) % 60:02d} {_sentence(n)}{said}")
        written += min(PER_DAY, entries - written)
        (root / "daily" / f"{date}.md").write_text("\n".join(body) + "\n", encoding="utf-8")
        day += 1
    return {"entries": written, "memory_entries": per_section * len(SECTIONS), "days": day}


def _serve(root: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str, str]:
    exe = Path(sys.executable).with_name("memvault")
    server = subprocess.Popen([str(exe), "--vault", str(root), "ui", "--new"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    ready, _, _ = select.select([server.stdout], [], [], 120)
    if not ready:
        server.kill()
        raise RuntimeError("memvault ui printed no address in 120 s")
    url = server.stdout.readline().split("open ", 1)[1].strip()  # type: ignore[union-attr]
    base, token = url.split("/?token=")
    port = base.rsplit(":", 1)[1]
    return server, base, f"memvault_ui_{port}={token}"


def _get(base: str, cookie: str, path: str) -> tuple[float, str]:
    start = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(base + path, headers={"Cookie": cookie}), timeout=120) as r:
        html = r.read().decode("utf-8")
    return 1000 * (time.perf_counter() - start), html


def _rows(html: str) -> int:
    body = re.search(r"<tbody>(.*?)</tbody>", html, re.S)
    return body.group(1).count("<tr") if body else 0


def pages() -> dict[str, str]:
    return {"entries, first page": "/entries", "entries, page 50": "/entries?page=50",
            "entries, text filter": "/entries?q=gateway", "entries, one section": "/entries?section=Configuration",
            "entries, a day range": "/entries?scope=project&from=2026-02-01&to=2026-02-28",
            "entries, a conversation": "/entries?conversation=conv-7", "days": "/days", "health": "/health",
            "what the agent is given": "/context?q=which+port+does+the+billing+gateway+use"}  # fmt: skip


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench panel")
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5, help="requests per page after the first")
    parser.add_argument("--embedder", default="hash-384", help="the index's model (default hash-384: see above)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-panel-") as tmp:
        root = Path(tmp) / "vault"
        held = build(root, args.entries)
        env = {**os.environ, "MEMVAULT_USER_VAULT": str(Path(tmp) / "user"), "MEMVAULT_EMBEDDER": args.embedder}
        exe = Path(sys.executable).with_name("memvault")
        started = time.perf_counter()
        subprocess.run([str(exe), "--vault", str(root), "index"], env=env, check=True, capture_output=True)
        indexed_s = time.perf_counter() - started
        server, base, cookie = _serve(root, env)
        try:
            figures = {}
            for name, path in pages().items():
                cold, html = _get(base, cookie, path)
                warm = [_get(base, cookie, path)[0] for _ in range(args.repeat)]
                median = round(statistics.median(warm), 1)
                figures[name] = {"path": path, "cold_ms": round(cold, 1), "median_ms": median,
                                 "max_ms": round(max(warm), 1), "html_bytes": len(html.encode()),
                                 "rows": _rows(html)}  # fmt: skip
        finally:
            server.terminate()
            server.wait(30)
    return {"vault": held, "embedder": args.embedder, "index_s": round(indexed_s, 1), "repeat": args.repeat,
            "pages": figures}  # fmt: skip


def table(report: dict[str, Any]) -> str:
    v = report["vault"]
    head = (f"panel: {v['entries']:,} entries ({v['memory_entries']:,} in MEMORY.md, the rest in {v['days']} daily "
            f"notes), indexed in {report['index_s']} s ({report['embedder']}); {report['repeat']} requests a page "
            "after the first")  # fmt: skip
    rows = ["| page | first ms | median ms | worst ms | HTML bytes | rows |", "|---|---|---|---|---|---|"]
    for name, f in report["pages"].items():
        rows.append(
            f"| {name} | {f['cold_ms']} | {f['median_ms']} | {f['max_ms']} | {f['html_bytes']:,} | {f['rows']} |"
        )
    return "\n".join([head, "", *rows])
