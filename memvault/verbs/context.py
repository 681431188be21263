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

A prompt is given the hybrid hits (ranked by fusion, which measured best) that show they answer
it, then the notes of the query's own script whose cosine reaches the model's relevance floor for
it. A note of the other script reaches it by its place in its half (`search.scripts`), not by what
it says, so it is given only when it shows it answers (`python -m bench agent`: of the items a
needing prompt was given, 0.39 were a fact it needed, with them; 0.70 without). A hit shows
it by holding two of the query's content words (all, of fewer; a third of them, in the query's own
script), as written or through the dictionary in the other script (`search.glossary`), or by being
the note the model singles out: the first of its script's dense list, standing the model's margin
above the third (`search.recall`).
The tier says which: `dense` when the model singled one out or hits reached the floor, `keyword`
when the words alone did. When no hit shows it, each clause of a prompt of two or more is asked
alone; when none answers, however many hits reach the floor ("run the tests" meets a crowd of notes
at one cosine), nothing is relevant: `recent`, the newest daily entries, passed on by no prompt hook.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.protocol import Message, Request
from memvault.vault.entries import ITEM, clip, entries_in, escape, one_line, says_same, vault_entries
from memvault.vault.errors import UsageError
from memvault.vault.paths import Layout
from memvault.vault.prompt_text import for_agent
from memvault.verbs.runtime import SearchRuntime

if TYPE_CHECKING:  # the verb's side alone: a client that renders the blocks never loads them
    from memvault.search.hits import Hit

CORE_WORDS = ("preference", "decision", "constraint", "rule", "workflow", "process",
              "偏好", "决策", "约束", "规则", "流程", "习惯")  # fmt: skip
VALUE_CHARS = 240
STABLE_SUMMARIES = 3  # seed 002: the stable block carries up to three past conversation summaries
SUMMARIES_TITLE = {"en": "Recent conversations", "zh": "最近的对话"}
SUMMARY_NOTES = 30  # the newest daily notes looked in for them: every prompt reads these
RECENT_DAYS = 30  # seed 004: the days of the last month with a summary, newest first, after everything else
DAYS_TITLE = {"en": "Recent days", "zh": "最近几天"}
QUERY_CHARS = 500
RECALL_ITEMS = 12
# what recall searches: not a conversation's own note (`vault.history`), which an agent asks for itself
RECALL_KINDS = ("daily", "memory", "other")
# no cap on the hits a note gives: an agent's facts are mostly entries of one file (MEMORY.md), and the
# search's default of three a note kept the fourth that answers from being judged at all
# (`python -m bench agent`: en-zh 0.850 -> 0.875, zh-zh 0.900 -> 0.925; LoCoMo `bench recall` unchanged)
RECALL_PER_NOTE = 0
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


def _items(hits: list[Hit], explain: bool = False) -> list[dict[str, Any]]:
    """Recall items from hits, their lines as the note holds them (`render` words them for the agent);
    explained, with what ranked them."""
    return [{"path": h.path, "start_line": h.start_line, "end_line": h.end_line, "text": _current_lines(h),
             **(_scored(h) if explain else {})} for h in hits]  # fmt: skip


def _current_lines(hit: Hit) -> str:
    """A hit's lines an agent is given: of neighbours joined into one hit, the superseded entries that
    lie between them are left out (a search shows a joined hit's lines whole; a prompt gets the current
    facts only, as it does of hits)."""
    text = hit.snippet.strip()
    if hit.unit != "entries" or "[superseded::" not in text:
        return text
    lines = text.split("\n")
    old = {i for e in entries_in(text) if e.superseded for i in range(e.start_line - 1, e.end_line)}
    return "\n".join(line for i, line in enumerate(lines) if i not in old)


def _scored(hit: Hit) -> dict[str, Any]:
    """What ranked a hit, for a person: the fused score, the retrievers that found it (with its rank in
    each) and its cosine to the query."""
    cosine = hit.scores.get("vector")
    return {"score": round(hit.score, 4), "found_by": ", ".join(f"{name} #{rank}" for name, rank in hit.ranks.items()),
            "cosine": None if cosine is None else round(cosine, 3)}  # fmt: skip


def _current(hits: list[Hit]) -> list[Hit]:
    """The hits without superseded entries: the prompt gets the current fact only (search ranks a
    correction right above the entry it corrects, so it is here when the old one matched)."""
    return [h for h in hits if not h.about.get("superseded")]


@dataclass
class Recalled:
    """The cascade's answer: the tier, its items, and (explained) why, and the hits it did not give."""

    tier: str
    items: list[dict[str, Any]]
    why: str | None = None
    left_out: list[dict[str, Any]] = field(default_factory=list)


def recall(rt: SearchRuntime, query: str, explain: bool = False, clause: bool = False) -> Recalled:
    """The hybrid hits that show they answer the prompt (`search.recall.answers`: its words, in either
    script, or the note the model singles out), then the hits of the query's script at the relevance
    floor; else what its clauses answer asked alone; else the newest daily entries, tier `recent`."""
    from memvault.search.options import build_options
    from memvault.search.recall import answers, named, prompt_clauses, query_words
    from memvault.vault.cjk import script_of, written_in

    q = query.strip()[-QUERY_CHARS:]
    floored = rt.search(
        q, build_options(limit=RECALL_ITEMS, per_doc=RECALL_PER_NOTE, min_similarity="auto", kind=RECALL_KINDS)
    )
    hits = _current(rt.search(q, build_options(limit=RECALL_ITEMS, per_doc=RECALL_PER_NOTE, kind=RECALL_KINDS)).hits)
    counts = floored.floor or {}
    words, own, margins = query_words(floored), script_of(q), counts.get("lead_margins", {})
    names = named(q, counts.get("unheard", ()))
    why = {(h.path, h.start_line): answers(h, words, own, margins, names) for h in hits}
    shown = [h for h in hits if why[(h.path, h.start_line)]]
    floor_hits = _current(floored.hits) if counts else []  # (no counts: no floor, the hits are all of them)
    above = [h for h in floor_hits if not why.get((h.path, h.start_line)) and written_in(one_line(h.text)) == own]
    floor = counts.get("min_similarity")
    by_model = sum(why[(h.path, h.start_line)] == "model" for h in shown)
    said = (f"{_count(len(shown) - by_model, 'hit')} held the query's words, {_count(by_model, 'hit')} "
            f"singled out by the model; {_count(len(above), 'more hit')} reached the relevance floor"
            + (f" (cosine {floor:.3f})" if isinstance(floor, float) else "")
            + (f"; no note holds {', '.join(names)}, which it names" if names else ""))  # fmt: skip
    if shown:
        tier = "dense" if by_model or above else "keyword"
        given = [*shown, *above][:RECALL_ITEMS]
        pairs = enumerate(zip(given, _items(given, explain), strict=True))
        told = [_told(item, hit, words, n < len(shown)) for n, (hit, item) in pairs]
        return _explained(rt, q, Recalled(tier, [i for i in told if i]), explain, said, floor)
    if clause:  # a clause that answers nothing: the newest entries are the whole prompt's to read, once
        return Recalled("recent", [])
    asked = (recall(rt, part, explain, clause=True) for part in prompt_clauses(q))
    by_clause = [got for got in asked if got.tier != "recent"]
    if by_clause:  # none answers the whole prompt; each clause is asked alone
        items = list({(i["path"], i["start_line"]): i for got in by_clause for i in got.items}.values())
        tier = "dense" if any(got.tier == "dense" for got in by_clause) else "keyword"
        told_why = f"{said}; {len(by_clause)} of its clauses answered alone" if explain else None
        return Recalled(tier, items[:RECALL_ITEMS], told_why)
    daily = [e for e in vault_entries(rt.layout) if e.path.startswith("daily/") and not e.superseded]
    newest = sorted(daily, key=lambda e: (e.date or "", e.start_line), reverse=True)[:RECALL_ITEMS]
    # as a hit's lines are, the note's markup (a fact is the text as said: `escape`d again), read by `render`
    items = [{"path": e.path, "start_line": e.start_line, "end_line": e.end_line,
              "text": escape(clip(e.fact, VALUE_CHARS)), **({"found_by": "newest daily"} if explain else {})}
             for e in newest]  # fmt: skip
    why_none = f"{said}; no hit answers it: the newest daily entries"
    return _explained(rt, q, Recalled("recent", items), explain, why_none, floor)


def _told(item: dict[str, Any], hit: Hit, words: frozenset[str], shown: bool) -> dict[str, Any] | None:
    """A recall item as a prompt gets it: of a day's summary, the clauses that hold the query's words
    (`search.recall.clauses_held`); a summary that reached the floor without one is not given, one the
    model singled out is given whole."""
    if hit.unit != "summary":
        return item
    from memvault.search.recall import clauses_held

    kept = clauses_held(item["text"], words)
    return {**item, "text": kept} if kept else (item if shown else None)


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _not_given(hit: Hit, query: str, floor: Any, answered: bool) -> str:
    from memvault.vault.cjk import script_of, written_in

    if hit.about.get("superseded"):
        return "superseded: its correction is given instead"
    if not answered:
        return "no hit answers the prompt: none holds its words, none is singled out by the model"
    cosine = hit.scores.get("vector")
    if isinstance(floor, float) and cosine is not None and cosine < floor:
        return f"below the relevance floor (cosine {cosine:.3f} < {floor:.3f})"
    if written_in(one_line(hit.text)) != script_of(query):
        return "a note of the other script, at the floor by its place in its half: given only when it answers"
    if hit.unit == "summary":
        return "a day's summary none of whose clauses holds the query's words"
    return "ranked below the items given"


def _explained(rt: SearchRuntime, q: str, answer: Recalled, explain: bool, why: str, floor: Any = None) -> Recalled:
    """With `explain`, the answer with its reason and the hits of a search without the floor that it
    does not give, each with why: superseded (its correction is given instead), or not relevant enough."""
    if not explain:
        return answer
    from memvault.search.options import build_options

    answer.why = why
    given = {(item["path"], item["start_line"]) for item in answer.items}
    for hit in rt.search(q, build_options(limit=RECALL_ITEMS, per_doc=RECALL_PER_NOTE, kind=RECALL_KINDS)).hits:
        if (hit.path, hit.start_line) in given:
            continue
        answer.left_out.append({**_items([hit], True)[0], "why": _not_given(hit, q, floor, answer.tier != "recent")})
    return answer


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
