"""`search --batch FILE.jsonl --json`: many queries, one loaded model and index, answers in input order.

Each input line is `{"id": ..., "query": ..., optional options}`; the option
keys are the CLI's long flags with `-` as `_` (`from`, `to`, `kind`,
`section`, `tag`, `path`, `mode`, `limit`, `per_doc`, `threshold`, ...).
A bad line gets an `error` line of its own; the batch goes on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TextIO

from search.render import result_json
from vault.errors import MemvaultError, UsageError

if TYPE_CHECKING:
    from search.engine import Searcher, SearchOptions

Answer = Callable[[dict[str, Any]], dict[str, Any]]
_KEYS = {
    "mode": "mode", "limit": "limit", "per_doc": "per_doc", "threshold": "threshold", "depth": "depth",
    "rrf_k": "rrf_k", "w_vector": "w_vector", "w_bm25": "w_bm25", "from": "date_from", "to": "date_to",
    "kind": "kind", "section": "section", "tag": "tag", "path": "path",
}  # fmt: skip


def options_from(item: dict[str, Any]) -> SearchOptions:
    """Search options from public keys (a batch line, a socket request, the CLI's flags); others are refused."""
    from search.engine import build_options  # the engine loads the index stack: not needed by daemon clients

    unknown = set(item) - set(_KEYS) - {"id", "query", "op"}
    if unknown:
        raise UsageError(f"unknown key {sorted(unknown)[0]!r}")
    try:
        return build_options(**{_KEYS[k]: v for k, v in item.items() if k in _KEYS and v is not None})
    except (TypeError, OverflowError) as exc:  # a list for a limit, an infinite number: the caller's mistake
        raise UsageError(f"bad search option: {exc}") from None


def local_answer(searcher: Searcher) -> Answer:
    """Answer batch lines in this process from an opened `Searcher`."""

    def answer(item: dict[str, Any]) -> dict[str, Any]:
        result = searcher.search(item["query"], options_from(item))
        return result_json(result, {"id": item.get("id")})

    return answer


def run_batch(lines: Iterable[str], defaults: dict[str, Any], answer: Answer, out: TextIO) -> int:
    """Answer every line with `answer` (local or through the daemon); returns how many lines failed."""
    failed = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        qid: Any = None
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or not isinstance(item.get("query"), str):
                raise ValueError('each line must be an object with a string "query"')
            qid = item.get("id")
            reply = answer({**{k: v for k, v in defaults.items() if v is not None}, **item})
            out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        except (ValueError, TypeError, MemvaultError) as exc:
            failed += 1
            out.write(json.dumps({"id": qid, "line": number, "error": str(exc)}, ensure_ascii=False) + "\n")
        out.flush()
    return failed
