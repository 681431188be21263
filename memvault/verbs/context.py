"""`context`: what an agent puts into its prompt, in two blocks it can strip by their tags.

- `<memory-stable>`: the core entries of MEMORY.md, the ones worth having in every prompt. A section
  is core when its title speaks of preferences, decisions, constraints, rules or workflow
  (`CORE_WORDS`, in English and Chinese), and so is an entry tagged with one of them. Its live
  entries (superseded ones left out) go in, each cut at 240 characters, in file order, so a prompt
  cache keeps hitting while nothing changes; after them the latest three conversation summaries
  `extract` wrote (seed 002), then the last 30 days' summaries with their notes, newest first (seed
  004), the first to go when the budget is tight. They get at most half the budget.
- `<memory-context>`: the recall for the query (its last 500 characters), each item with its source as
  `path#Lstart-Lend`, leaving out the entries the stable block already states (the same fact, whatever
  its key, tags, stamp or cut), in the rest of the budget.

What the recall block gives a prompt, and why, is `memvault.verbs.prompt_recall`'s: the hits that show
they answer it, then its own script's notes at the relevance floor; else what its clauses answer
asked alone; else nothing relevant (tier `recent`, passed on by no prompt hook).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from memvault.protocol import Message, Request
from memvault.vault.entries import ITEM, clip, says_same, vault_entries
from memvault.vault.errors import UsageError
from memvault.vault.paths import Layout
from memvault.vault.prompt_text import for_agent
from memvault.verbs.prompt_recall import VALUE_CHARS, recall
from memvault.verbs.runtime import SearchRuntime

CORE_WORDS = ("preference", "decision", "constraint", "rule", "workflow", "process",
              "偏好", "决策", "约束", "规则", "流程", "习惯")  # fmt: skip
STABLE_SUMMARIES = 3  # seed 002: the stable block carries up to three past conversation summaries
SUMMARIES_TITLE = {"en": "Recent conversations", "zh": "最近的对话"}
SUMMARY_NOTES = 30  # the newest daily notes looked in for them: every prompt reads these
RECENT_DAYS = 30  # seed 004: the days of the last month with a summary, newest first, after everything else
DAYS_TITLE = {"en": "Recent days", "zh": "最近几天"}
DEFAULT_BUDGET = 4000
MIN_BUDGET = 200  # the two tags and a line or two: less holds no memory at all
MAX_BUDGET = 20_000  # what an agent may ask for through MCP: its context is the cost


@dataclass(frozen=True)
class Contexted(Message):
    """The material of the two blocks, before the budget: `stable` entries (section, text, path,
    line) and `recall` items (path, start_line, end_line, text), with the `tier` that answered."""

    stable: list[dict[str, Any]]
    recall: list[dict[str, Any]] = field(default_factory=list)
    tier: str | None = None
    reason: str | None = None  # why recall answered from the notes' text, not the index (a recall error)
    why: str | None = None  # with `explain`: the relevance decision in words
    left_out: list[dict[str, Any]] = field(default_factory=list)  # with `explain`: hits not given, and why


@dataclass(frozen=True)
class Context(Request, op="context", reply=Contexted):
    query: str | None = None
    conversation: str | None = None  # the asking session: its own summaries are in its history already
    # the panel's inspector: each item's score and retrievers, why the tier, what was left out and why;
    # the items chosen are the same as without it (one more search, below the floor, only looks)
    explain: bool = False

    def check(self) -> None:
        if self.query is not None and not self.query.strip():
            raise UsageError("empty query: leave it out for the stable block alone")


def is_core(section: str) -> bool:
    title = section.casefold()
    return any(word in title for word in CORE_WORDS)


def core_home(tags: list[str] | tuple[str, ...] | None) -> tuple[str | None, str | None] | None:
    """Where in MEMORY.md a save that names no type or section goes when a tag makes it core (seed
    002: the tag puts it in the stable block): (type, section), or None (today's note, as before).
    `preference` has its type, `decision` the architecture decisions; a constraint, rule or workflow
    gets a section of that name."""
    for tag in tags or ():
        word = _core_word(tag)
        if word == "preference" or word == "偏好":
            return "preference", None
        if word == "decision" or word == "决策":
            return "architecture", None
        if word is not None:
            return None, tag.lstrip("#").replace("-", " ").replace("_", " ").capitalize()
    return None


def _core_word(tag: str) -> str | None:
    """The core word a tag is (`#preference`, `#Rules`), if it is one: the word, not a part of it."""
    word = tag.lstrip("#").casefold()
    return next((w for w in (word, word.removesuffix("s")) if w in CORE_WORDS), None)


def _is_core_entry(section: str, tags: tuple[str, ...]) -> bool:
    """A core section's entry, or one a core word tags in any section of MEMORY.md."""
    return is_core(section) or any(_core_word(t) for t in tags)


def stable_entries(layout: Layout, conversation: str | None = None) -> list[dict[str, Any]]:
    """The entries of MEMORY.md's core sections, in file order, each cut to `VALUE_CHARS`; a
    superseded one is replaced by its correction (the newer fact wins), or left out. The summaries of
    `conversation` (the session asking) stay out: seed 002 leaves a session's own summaries to its
    history, and after a compaction the stable block repeated what the session had just said. Last, the
    days of the last month with a summary, each with its note (seed 004), as the catalog holds them."""
    # gathered where the verb runs (the daemon, mostly): a client imports only what `render` needs
    from memvault.vault.catalog import recent_summaries
    from memvault.vault.conversation import conversation_summaries
    from memvault.vault.correct import correction_of
    from memvault.vault.daily import vault_lang
    from memvault.vault.importance import kept

    if not layout.memory_md.is_file():
        return []
    out = []
    for e in vault_entries(layout, layout.relative(layout.memory_md)):
        if not (_is_core_entry(e.section, e.tags) or kept(e)):
            continue
        said = correction_of(layout, e) if e.superseded else e
        if said is not None:
            out.append({"section": e.section, "text": clip(said.fact, VALUE_CHARS), "path": said.path,
                        "line": said.start_line})  # fmt: skip
    lang = vault_lang(layout)
    own = f"[conversation:: {conversation}]" if conversation else None
    for e in conversation_summaries(layout, STABLE_SUMMARIES, SUMMARY_NOTES):  # last: a tight budget drops them
        if own is not None and own in e.text:
            continue
        out.append({"section": SUMMARIES_TITLE[lang], "text": clip(e.fact, VALUE_CHARS), "path": e.path,
                    "line": e.start_line})  # fmt: skip
    for day, summary in recent_summaries(layout, dt.date.today(), RECENT_DAYS):  # seed 004: the last month
        rel = layout.relative(layout.daily_note(day))
        out.append({"section": DAYS_TITLE[lang], "text": clip(f"{day} ({rel}): {summary}", VALUE_CHARS), "path": rel,
                    "line": 1})  # fmt: skip
    return out


def context(rt: SearchRuntime, request: Context) -> Contexted:
    stable = stable_entries(rt.layout, request.conversation)
    if request.query is None:
        return Contexted(stable)
    from memvault.verbs.recall_errors import Watched, noted

    watched = Watched(rt)
    got = recall(watched, request.query, request.explain)
    return Contexted(stable, got.items, got.tier, noted(rt.layout, watched.reason), got.why, got.left_out)


def _said(line: str, said: list[str]) -> bool:
    """Whether a line of a recall item is an entry the stable block shows already: the same fact, even
    with its key, tags, stamp or correction pointer, or cut at a different length."""
    fact = ITEM.sub("", line.strip())
    return any(says_same(s, fact) for s in said)


_BLOCK_TAG = re.compile(r"</?[ \t]*memory-[^<>\n]*>?", re.IGNORECASE)


def neutral(text: str) -> str:
    """`text` with anything that reads as one of the blocks' tags (`</memory-stable>`, `<memory-context
    tier="dense">`) written with `&lt;`/`&gt;`: a saved entry can never close a block and open a fake
    one in the prompt (seed 000 cleans memory before injecting it). The JSON keeps the text as it is."""
    return _BLOCK_TAG.sub(lambda m: m.group(0).replace("<", "&lt;").replace(">", "&gt;"), text)


def render(parts: list[tuple[str, Contexted]], budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    """The two blocks from each scope's material (`parts`, labelled by scope when more than one),
    their lines within `budget` characters: the stable block takes at most half, recall the rest
    (recall items taking turns between the scopes, rank by rank)."""
    if budget < MIN_BUDGET:
        raise UsageError(f"a context budget is at least {MIN_BUDGET} characters, not {budget}")
    label = len(parts) > 1
    left_out: list[dict[str, Any]] = [{"scope": scope, **item} for scope, p in parts for item in p.left_out]
    stable_lines: list[str] = []
    kept_stable: list[dict[str, Any]] = []
    used = 0
    for scope, part in parts:
        section = None
        for entry in part.stable:
            title = f"## {neutral(entry['section'])}" + (f" ({scope})" if label else "")
            head = [title] if entry["section"] != section else []
            line = f"- {neutral(entry['text'])}"
            cost = sum(len(x) + 1 for x in (*head, line))
            if used + cost > budget // 2:  # a long one left out does not empty the block: a shorter one may fit
                left_out.append({"scope": scope, **entry, "why": "over the stable block's half of the budget"})
                continue
            stable_lines += [*head, line]
            kept_stable.append({"scope": scope, **entry})
            section, used = entry["section"], used + cost
    said = [entry["text"] for entry in kept_stable]
    recall_lines: list[str] = []
    kept_recall: list[dict[str, Any]] = []
    room = budget - used
    turns = max((len(p.recall) for _, p in parts), default=0)
    merged = [(scope, p.recall[i]) for i in range(turns) for scope, p in parts if i < len(p.recall)]
    for scope, item in merged:
        lines = [x for x in item["text"].split("\n") if not _said(x, said)]
        if all(not x.strip() or x.lstrip().startswith("#") for x in lines):
            left_out.append({"scope": scope, **item, "why": "the stable block says it already"})
            continue
        text = "\n".join(for_agent(x) for x in lines)  # fields and `saved` comments in words
        source = f"{item['path']}#L{item['start_line']}-L{item['end_line']}"
        line = f"[{scope}:{source}] " if label else f"[{source}] "
        line += neutral(" ".join(text.split()))
        if len(line) + 1 > room:
            left_out.append({"scope": scope, **item, "why": "over the budget"})
            continue
        recall_lines.append(line)
        kept_recall.append({"scope": scope, "source": source, **item, "text": text})
        room -= len(line) + 1
    tiers = [p.tier for _, p in parts if p.tier]
    text = "<memory-stable>\n" + "".join(x + "\n" for x in stable_lines) + "</memory-stable>\n"
    if any(p.tier for _, p in parts):
        text += (
            f'<memory-context tier="{tiers[0]}">\n' + "".join(x + "\n" for x in recall_lines) + "</memory-context>\n"
        )
    explained = {"why": {scope: p.why for scope, p in parts if p.why}, "left_out": left_out}
    return {"text": text, "stable": kept_stable, "recall": kept_recall, "tier": tiers[0] if tiers else None,
            "tiers": {scope: p.tier for scope, p in parts if p.tier},
            **(explained if any(p.why for _, p in parts) else {})}  # fmt: skip


def stable_block(blocks: dict[str, Any]) -> str:
    """What a host's session-start hook adds: the stable block alone (empty when it holds nothing)."""
    return blocks["text"].split("</memory-stable>\n", 1)[0] + "</memory-stable>\n" if blocks["stable"] else ""


def prompt_block(blocks: dict[str, Any]) -> str | None:
    """What a host's prompt hook adds: the recall block alone (the stable block went in at session
    start), and nothing (None) when recall found nothing relevant; the panel shows the same."""
    if blocks["tier"] not in ("dense", "keyword") or not blocks["recall"]:
        return None
    return blocks["text"].split("</memory-stable>\n", 1)[-1]
