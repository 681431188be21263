"""Issue 47: a long conversation that keeps coming back to a few facts makes one proposal per fact,
seen as often as it was said (its variants too), and one extraction adds at most `MAX_NEW` proposals,
saying so when it held some back. Driven through `memvault mcp`'s memory_extract with the MCP SDK's
own client, on a generated 400-turn transcript."""

from __future__ import annotations

import json
import random

from mcp.client.session import ClientSession

from memvault.vault.proposals import MAX_NEW, find_candidates, gist, near
from tests.mcp_client import run_session

OPENERS = ("", "Thanks. ", "OK, and ", "As I said, ", "Just to repeat: ", "btw ")
FAMILIES = {  # a fact, and the ways a user says it again
    "preference": ["I prefer tabs over spaces", "I really prefer tabs to spaces", "I strongly prefer tabs over spaces",
                   "I'd prefer tabs over spaces, honestly"],
    "constraint": ["Never commit .env files", "Please never commit .env files", "never commit the .env files!",
                   "Never commit .env files to the repo"],
    "decision": ["We decided to use Postgres for the ledger", "We decided to use Postgres for the ledger database",
                 "We have decided to use Postgres for the ledger"],
}  # fmt: skip
TURNS = 400
DISTINCT = 100  # every fourth turn a decision of its own: more than one extraction may add


def transcript(seed: int = 47) -> tuple[list[dict[str, str]], dict[str, int]]:
    """400 turns (a user message and the assistant's answer each); how often each family was said."""
    rnd = random.Random(seed)
    messages, said = [], dict.fromkeys(FAMILIES, 0)
    for turn in range(TURNS):
        if turn % 4 == 3:
            n = turn // 4
            text = f"We decided to use library{n:03d} for component{n:03d}."
        else:
            kind = rnd.choice(sorted(FAMILIES))
            said[kind] += 1
            first = said[kind] == 1  # said plainly first: the proposal's text
            text = ("" if first else rnd.choice(OPENERS)) + rnd.choice(FAMILIES[kind][: 1 if first else None]) + "."
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": f"Noted ({turn})."}]
    return messages, said


def test_variants_are_one_statement_and_different_facts_are_not():
    for variants in FAMILIES.values():
        first = gist(variants[0])
        assert all(near(first, gist(v)) for v in variants), variants
    different = [("I prefer tabs over spaces", "I prefer spaces over tabs"), ("I like dark mode", "I like light mode"),
                 ("We decided to use Postgres", "We decided to use MySQL"), ("我喜欢 Python", "我喜欢 Go")]  # fmt: skip
    for a, b in different:
        assert not near(gist(a), gist(b)), (a, b)
    messages, said = transcript()
    found = find_candidates([m["content"] for m in messages if m["role"] == "user"])
    assert len(found) == len(FAMILIES) + DISTINCT
    assert sorted(c.seen for c in found)[-3:] == sorted(said.values())


async def _extract(session: ClientSession, layout) -> None:
    messages, said = transcript()
    result = await session.call_tool("memory_extract", {"messages": messages})
    assert not result.is_error, result.content
    done = json.loads(result.content[0].text)
    assert len(done["proposals"]) == MAX_NEW
    held = len(FAMILIES) + DISTINCT - MAX_NEW
    assert any(w.startswith(f"{held} more statements not proposed") for w in done["warnings"]), done["warnings"]
    queue = [line for line in (layout.root / "REVIEW.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("- ")]  # fmt: skip
    assert len(queue) == MAX_NEW  # not one line per sentence said
    by_kind = {p["kind"]: p for p in done["proposals"] if p["seen"] > 1}
    assert {k: p["seen"] for k, p in by_kind.items()} == said  # the most repeated first, each sighting counted
    assert by_kind["preference"]["text"] == "I prefer tabs over spaces."  # as first said

    again = [{"role": "user", "content": "Honestly, I really prefer tabs to spaces."}]
    later = json.loads((await session.call_tool("memory_extract", {"messages": again})).content[0].text)
    assert [(p["id"], p["seen"]) for p in later["proposals"]] == [(by_kind["preference"]["id"],
                                                                   said["preference"] + 1)]  # fmt: skip
    assert not later["warnings"]
    queue = [line for line in (layout.root / "REVIEW.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("- ")]  # fmt: skip
    assert len(queue) == MAX_NEW


def test_a_long_transcript_makes_a_short_review_queue(layout, user_root, cli):
    assert cli("init", "--lang", "en").returncode == 0

    async def body(session) -> None:
        await _extract(session, layout)

    try:
        run_session(layout, user_root, body)
    finally:
        cli("daemon", "stop")
