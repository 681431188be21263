"""One query's answers from the vaults of a scope, merged into one answer, in their public shape
(`SearchResult.to_json`: what the daemon replies and `search --json` prints).

Two ranked lists are merged by taking turns, rank by rank (the project first on a tie), never by
score: scores from two indexes (different sizes, BM25 statistics, maybe different models) are not
comparable, ranks are. Every hit is labelled with its vault's scope. Plain dicts in and out, so a
search the daemons answer (`memvault.cli.via_daemon`) merges them without importing the library.
"""

from __future__ import annotations

from typing import Any


def merge_answers(answers: list[tuple[str, dict[str, Any]]], limit: int) -> dict[str, Any]:
    """The answers, in the order of the scopes, as one: their hits taking turns, at most `limit`; the
    first vault's query, source, terms, floor and date words; every vault's reason, named when two answered."""
    lists = [[{"scope": name} | {k: v for k, v in h.items() if k != "scope"} for h in a["hits"]] for name, a in answers]
    hits = [each[i] for i in range(max(map(len, lists), default=0)) for each in lists if i < len(each)]
    first = answers[0][1]
    named = len(answers) > 1
    reasons = [f"{name} vault: {a['reason']}" if named else a["reason"] for name, a in answers if a["reason"]]
    reasons += [f"{name} vault answered by {a['source']}" for name, a in answers[1:] if a["source"] != first["source"]]
    return {
        "query": first["query"],
        "source": first["source"],
        "reason": "; ".join(reasons) or None,
        "hits": hits[:limit],
        "terms": first["terms"],
        **{k: first[k] for k in ("floor", "dates") if first.get(k) is not None},
    }
