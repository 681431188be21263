"""`search --batch FILE.jsonl --json`: one query object per line in, one answer line out, in order.

Each line is `{"id": ..., "query": ..., options}` with the public option keys
(`memvault.search.option_table.OPTIONS`); it runs as the `search` verb, through the
daemon or here, so the model and index load once for the whole batch.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from memvault.api import Vault
from memvault.vault.errors import MemvaultError
from memvault.verbs.query import Search


def run_batch(vault: Vault, lines: Iterable[str], defaults: dict[str, Any], out: TextIO) -> int:
    """`search --batch`: one query object per line in, one answer line out, in order; a bad line gets
    `{"id", "line", "error"}` and the batch goes on. Returns how many lines failed."""
    failed = 0
    told: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        qid: Any = None
        try:
            item = json.loads(line)
            if not isinstance(item, dict) or not isinstance(item.get("query"), str):
                raise ValueError('each line must be an object with a string "query"')
            qid = item.get("id")
            result = vault.run(Search.from_json({**defaults, **item}))
            if result.reason and result.source == "substring" and result.reason not in told:
                told.add(result.reason)
                print(f"memvault: answered by substring search: {result.reason}", file=sys.stderr)
            out.write(json.dumps({"id": qid, **result.to_json()}, ensure_ascii=False) + "\n")
        except (ValueError, TypeError, MemvaultError) as exc:
            failed += 1
            out.write(json.dumps({"id": qid, "line": number, "error": str(exc)}, ensure_ascii=False) + "\n")
        out.flush()
    return failed
