"""`python -m bench agent [--split dev|test|all] [--quick N] [--in-process] [--judged]`: what an agent is given, turn
by turn, on a bilingual developer's vault of our own (bench/data/agent: facts in English and Chinese,
keyed, seven of them corrected; prompts that need a fact, in each language pair, and prompts that need
none). The vault is built by the real verbs into a temporary folder, its daemon started with the
default model (or `MEMVAULT_EMBEDDER`), and every prompt goes through `memvault hook claude-code` as
Claude Code sends it: `SessionStart` once (the stable block), then `UserPromptSubmit` each.

A fact counts as given when its marker (a number, a name: `facts.jsonl`) is in the stable block or in
the prompt's block; for a corrected fact, the correction's marker. Reported per split:
- `quiet`: the share of prompts that need no memory given nothing in their block;
- `recall` per language pair (question -> fact: en-en, en-zh, zh-zh, zh-en): the share given the fact
  (in the stable block or the prompt's block), and `recall_block` the share the prompt's block gave;
- `precision`: of the items (one line each) the blocks of needing prompts hold, the share that is a fact
  the prompt needs (the rest is noise an agent reads), and `items_quiet` the items given to prompts that
  need none;
- `chars`: characters of the prompt's block, median and p90, for needing prompts and quiet ones;
- `superseded_alone`: blocks holding a corrected fact's old marker without its correction's;
- `latency_ms`: the hook process end to end, median and p95, with the daemon running.
`--in-process` asks `Scopes.context` in this process instead (fast to iterate; not what a host sees).
`--judged` also asks `memvault context --explain` of each needing prompt and reports `judged` per pair:
the share whose needed facts were in the stable block or among the hits recall judged, given or left
out. It is the most any decision on those hits could give: a miss inside it is the relevance decision's,
one outside it the ranking's.
The vault's notes and prompts are ours (no benchmark licence applies); the set is split dev / test, so a
choice tuned on dev is quoted on test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "agent"
SESSION = "bench-agent-session"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def spec() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Facts by id, corrections by the id of the fact they correct, and the prompts."""
    facts = {f["id"]: f for f in _jsonl(DATA / "facts.jsonl")}
    corrections = {c["id"]: c for c in _jsonl(DATA / "corrections.jsonl")}
    return facts, corrections, _jsonl(DATA / "prompts.jsonl")


def _memvault(vault: Path, *args: str, payload: str | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(Path(sys.executable).parent / "memvault"), "--vault", str(vault), *args], input=payload,
                          capture_output=True, text=True, env=env, timeout=600)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"memvault {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def build(vault: Path, env: dict[str, str]) -> None:
    """The vault as the verbs write it: each fact remembered under its type with its id as key, then each
    correction made by `correct` (the old entry kept, marked superseded)."""
    facts, corrections, _ = spec()
    _memvault(vault, "init", "--lang", "en", env=env)
    for fact in facts.values():
        _memvault(vault, "remember", "--type", fact["type"], "--key", fact["id"], fact["text"], env=env)
    for ident, fix in corrections.items():
        _memvault(vault, "correct", ident, fix["text"], env=env)


def _wait_embedded(vault: Path, env: dict[str, str]) -> None:
    for _ in range(1200):
        status = json.loads(_memvault(vault, "status", "--json", env=env))
        if status["vectors"]["waiting"] == 0 and status["vectors"]["total"] > 0:
            return
        time.sleep(0.5)
    raise RuntimeError("the daemon did not embed the vault in 10 minutes")


def _hook(vault: Path, env: dict[str, str], event: str, **fields: str) -> tuple[str, float]:
    payload = {"session_id": SESSION, "transcript_path": str(vault / "transcript.jsonl"), "cwd": str(vault),
               "hook_event_name": event, **fields}  # fmt: skip
    start = time.perf_counter()
    out = _memvault(vault, "hook", "claude-code", payload=json.dumps(payload), env=env)
    took = time.perf_counter() - start
    return (json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""), took


def _marker(fact_id: str) -> str:
    facts, corrections, _ = spec()
    return (corrections.get(fact_id) or facts[fact_id])["marker"]


def judge(prompt: dict[str, Any], stable: str, block: str) -> dict[str, Any]:
    """What one turn gave: the needed facts found, whether it was quiet, a corrected fact given alone."""
    facts, corrections, _ = spec()
    given = stable + "\n" + block
    old_alone = [i for i, c in corrections.items() if facts[i]["marker"] in block and c["marker"] not in given]
    items = [line for line in block.split("\n") if line.startswith("[")]  # one line an item: `[path#Lx-Ly] text`
    needed = sum(any(_marker(i) in line for i in prompt["needs"]) for line in items)
    return {"prompt": prompt["prompt"], "pair": prompt["pair"], "split": prompt["split"], "chars": len(block),
            "items": len(items), "items_needed": needed,
            "found": all(_marker(i) in given for i in prompt["needs"]) if prompt["needs"] else None,
            "in_block": all(_marker(i) in block for i in prompt["needs"]) if prompt["needs"] else None,
            "quiet": not block.strip(), "superseded_alone": old_alone}  # fmt: skip


def judged(vault: Path, env: dict[str, str], prompt: dict[str, Any]) -> bool | None:
    """Whether the stable block or the hits recall judged for `prompt` (given or left out, as `context
    --explain` lists them) hold every fact it needs; None for a prompt that needs none."""
    if not prompt["needs"]:
        return None
    said = json.loads(_memvault(vault, "context", "--json", "--explain", prompt["prompt"], env=env))
    seen = "\n".join([said["text"], *(i["text"] for i in said["left_out"])])  # (text: both blocks as given)
    return all(_marker(i) in seen for i in prompt["needs"])


def _quantile(values: list[float], q: float) -> float | None:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


def _spread(values: list[float]) -> dict[str, float | None]:
    return {"median": _quantile(values, 0.5), "p90": _quantile(values, 0.9)}


def _by_pair(turns: list[dict[str, Any]], key: str) -> dict[str, float]:
    """The share of `turns` whose `key` holds, per language pair."""
    pairs = sorted({t["pair"] for t in turns})
    return {p: round(statistics.mean(bool(t.get(key)) for t in turns if t["pair"] == p), 3) for p in pairs}


def summarise(turns: list[dict[str, Any]]) -> dict[str, Any]:
    needing = [t for t in turns if t["found"] is not None]
    quiet = [t for t in turns if t["found"] is None]
    latency = [t["ms"] for t in turns if "ms" in t]
    return {
        "prompts": len(turns),
        "quiet": round(sum(t["quiet"] for t in quiet) / len(quiet), 3) if quiet else None,
        "recall": _by_pair(needing, "found"),
        # what the prompt's own block gave, the stable block aside: the per-prompt decision's share
        "recall_block": _by_pair(needing, "in_block"),
        # of the items a needing prompt's block holds, the share that is a fact it needs: the rest is noise
        "precision": round(sum(t["items_needed"] for t in needing) / max(1, sum(t["items"] for t in needing)), 3),
        "items_quiet": sum(t["items"] for t in quiet),
        "chars_needing": _spread([t["chars"] for t in needing]),
        "chars_quiet": _spread([t["chars"] for t in quiet]),
        "superseded_alone": sum(bool(t["superseded_alone"]) for t in turns),
        "latency_ms": {"median": _quantile(latency, 0.5), "p95": _quantile(latency, 0.95)} if latency else None,
        # (`--judged`) the most a decision on the hits recall judged could give
        **({"judged": _by_pair(needing, "judged")} if needing and "judged" in needing[0] else {}),
    }


def _in_process(vault: Path, prompts: list[dict[str, Any]]) -> tuple[str, list[tuple[str, float]]]:
    from memvault import Vault
    from memvault.hooks.claude_code import prompt_submit
    from memvault.scopes import Scopes

    # each Vault closed before the next opens: an open one holds the index's lock, and the next would
    # answer from the notes' text (substring), not the index
    with Vault(vault) as opened, Scopes(opened) as scopes:
        stable = scopes.context(None, 4000)["text"]
    answers = []
    for p in prompts:
        start = time.perf_counter()
        with Vault(vault) as opened:
            out = prompt_submit(opened, {"prompt": p["prompt"], "session_id": SESSION}, 4000)
        took = time.perf_counter() - start
        answers.append(((out or {}).get("hookSpecificOutput", {}).get("additionalContext", ""), took))
    return stable, answers


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench agent")
    parser.add_argument("--split", choices=("dev", "test", "all"), default="all")
    parser.add_argument("--quick", type=int, default=0, help="the first N prompts of the split")
    parser.add_argument("--in-process", action="store_true", help="ask Scopes.context here, not the hook")
    parser.add_argument("--judged", action="store_true", help="also count the needed facts among the hits judged")
    args = parser.parse_args(argv)
    _, _, prompts = spec()
    prompts = [p for p in prompts if args.split == "all" or p["split"] == args.split]
    prompts = prompts[: args.quick] if args.quick else prompts
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as tmp:
        vault = Path(tmp) / "vault"
        env = {**os.environ, "MEMVAULT_USER_VAULT": str(Path(tmp) / "user-vault")}
        # as a user's host runs the hook: Python keeps its compiled modules (a shell that sets
        # PYTHONDONTWRITEBYTECODE would have each hook compile them again, about 20 ms here)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        build(vault, env)
        if args.in_process:
            os.environ["MEMVAULT_USER_VAULT"] = env["MEMVAULT_USER_VAULT"]
            _memvault(vault, "index", env=env)
            stable, answers = _in_process(vault, prompts)
            seen = [judged(vault, env, p) for p in prompts] if args.judged else []
        else:
            _memvault(vault, "daemon", "start", env=env)
            try:
                _wait_embedded(vault, env)
                stable, _ = _hook(vault, env, "SessionStart", source="startup")
                answers = [_hook(vault, env, "UserPromptSubmit", prompt=p["prompt"]) for p in prompts]
                seen = [judged(vault, env, p) for p in prompts] if args.judged else []
            finally:
                _memvault(vault, "daemon", "stop", env=env)
    given = zip(prompts, answers, strict=True)
    turns = [{**judge(p, stable, block), "ms": round(1000 * took, 1)} for p, (block, took) in given]
    for turn, among in zip(turns, seen, strict=True) if seen else ():
        turn["judged"] = among
    splits = {s: summarise([t for t in turns if t["split"] == s]) for s in ("dev", "test")}
    return {"mode": "in-process" if args.in_process else "hook", "embedder": os.environ.get("MEMVAULT_EMBEDDER"),
            "stable_chars": len(stable), "all": summarise(turns), **{k: v for k, v in splits.items() if v["prompts"]},
            "turns": turns}  # fmt: skip


def table(report: dict[str, Any]) -> str:
    pairs = ("en-en", "en-zh", "zh-zh", "zh-en")
    head = ["split", "prompts", "quiet", *pairs, "in the prompt's block", "items a needed fact", "chars (median / p90)",
            "superseded alone", "hook ms (median / p95)"]  # fmt: skip
    rows = [f"agent ({report['mode']}), stable block {report['stable_chars']} chars", "",
            "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]  # fmt: skip
    for split in ("all", "dev", "test"):
        s = report.get(split)
        if not s:
            continue
        recall = " | ".join(f"{s['recall'].get(p, float('nan')):.3f}" for p in pairs)
        recall += " | " + " / ".join(f"{s['recall_block'].get(p, float('nan')):.2f}" for p in pairs)
        lat = s["latency_ms"] or {}
        chars = f"{s['chars_needing']['median']} / {s['chars_needing']['p90']}"
        rows.append(f"| {split} | {s['prompts']} | {s['quiet']} | {recall} | {s['precision']} | {chars} | "
                    f"{s['superseded_alone']} | {lat.get('median')} / {lat.get('p95')} |")  # fmt: skip
    for split in ("all", "dev", "test"):
        if "judged" in report.get(split, {}):
            shares = " | ".join(f"{report[split]['judged'][p]:.3f}" for p in pairs)
            rows.append(f"| {split}, among the hits judged | | | {shares} | |")
    noisy = [t["prompt"] for t in report["turns"] if t["found"] is None and not t["quiet"]]
    missed = [t["prompt"] for t in report["turns"] if t["found"] is False]
    return "\n".join([*rows, "", f"given memory though none was needed: {noisy}", f"missed: {missed}"])
