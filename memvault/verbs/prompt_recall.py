"""What a prompt is given from the index: the cascade behind `context`'s recall block
(`<memory-context>`), and, for the panel's inspector, why each hit was or was not given.

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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.vault.entries import clip, entries_in, escape, vault_entries
from memvault.verbs.runtime import SearchRuntime

if TYPE_CHECKING:  # the verb's side alone: a client that renders the blocks never loads them
    from memvault.search.hits import Hit

QUERY_CHARS = 500
RECALL_ITEMS = 12
# what recall searches: not a conversation's own note (`vault.history`), which an agent asks for itself
RECALL_KINDS = ("daily", "memory", "other")
# no cap on the hits a note gives: an agent's facts are mostly entries of one file (MEMORY.md), and the
# search's default of three a note kept the fourth that answers from being judged at all
# (`python -m bench agent`: en-zh 0.850 -> 0.875, zh-zh 0.900 -> 0.925; LoCoMo `bench recall` unchanged)
RECALL_PER_NOTE = 0
VALUE_CHARS = 240  # an entry given on its own (a stable one, a newest daily one) is cut here


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
    from memvault.search.recall import answers, hit_script, named, prompt_clauses, query_words
    from memvault.vault.cjk import script_of

    q = query.strip()[-QUERY_CHARS:]
    floored = rt.search(
        q, build_options(limit=RECALL_ITEMS, per_doc=RECALL_PER_NOTE, min_similarity="auto", kind=RECALL_KINDS)
    )
    found = rt.search(q, build_options(limit=RECALL_ITEMS, per_doc=RECALL_PER_NOTE, kind=RECALL_KINDS)).hits
    hits = _current(found)
    counts = floored.floor or {}
    words, own, margins = query_words(floored), script_of(q), counts.get("lead_margins", {})
    names = named(q, counts.get("unheard", ()))
    why = {(h.path, h.start_line): answers(h, words, own, margins, names) for h in hits}
    shown = [h for h in hits if why[(h.path, h.start_line)]]
    floor_hits = _current(floored.hits) if counts else []  # (no counts: no floor, the hits are all of them)
    above = [h for h in floor_hits if not why.get((h.path, h.start_line)) and hit_script(h) == own]
    floor = counts.get("min_similarity")
    by_model = sum(why[(h.path, h.start_line)] == "model" for h in shown)
    said = (f"{_count(len(shown) - by_model, 'hit')} held the query's words, {_count(by_model, 'hit')} "
            f"singled out by the model; {_count(len(above), 'more hit')} reached the relevance floor"
            + (f" (cosine {floor:.3f})" if isinstance(floor, float) else "")
            + (f"; no note holds {', '.join(names)}, which it names" if names else ""))  # fmt: skip
    left = _Unanswered(found, own, floor if isinstance(floor, float) else None)
    if shown:
        tier = "dense" if by_model or above else "keyword"
        given = [*shown, *above][:RECALL_ITEMS]
        pairs = enumerate(zip(given, _items(given, explain), strict=True))
        told = [_told(item, hit, words, n < len(shown)) for n, (hit, item) in pairs]
        return left.explained(Recalled(tier, [i for i in told if i]), explain and not clause, said, "prompt")
    if clause:  # a clause that answers nothing: the newest entries are the whole prompt's to read, once
        return Recalled("recent", [])
    parts = prompt_clauses(q)
    by_clause = [got for got in (recall(rt, part, explain, clause=True) for part in parts) if got.tier != "recent"]
    if by_clause:  # none answers the whole prompt; each clause is asked alone
        items = list({(i["path"], i["start_line"]): i for got in by_clause for i in got.items}.values())
        tier = "dense" if any(got.tier == "dense" for got in by_clause) else "keyword"
        answered = f"{said}; {len(by_clause)} of its clauses answered alone"
        return left.explained(Recalled(tier, items[:RECALL_ITEMS]), explain, answered, "clauses")
    daily = [e for e in vault_entries(rt.layout) if e.path.startswith("daily/") and not e.superseded]
    newest = sorted(daily, key=lambda e: (e.date or "", e.start_line), reverse=True)[:RECALL_ITEMS]
    # as a hit's lines are, the note's markup (a fact is the text as said: `escape`d again), read by `render`
    items = [{"path": e.path, "start_line": e.start_line, "end_line": e.end_line,
              "text": escape(clip(e.fact, VALUE_CHARS)), **({"found_by": "newest daily"} if explain else {})}
             for e in newest]  # fmt: skip
    why_none = f"{said}; no hit answers it" + (", nor any of its clauses asked alone" if parts else "")
    return left.explained(Recalled("recent", items), explain, f"{why_none}: the newest daily entries", None)


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


@dataclass(frozen=True)
class _Unanswered:
    """For `explain`: the prompt's hits without the floor (the search recall judged), its script and
    the relevance floor, to say of each hit not given why it was not."""

    found: list[Hit]
    own: str
    floor: float | None

    def explained(self, answer: Recalled, explain: bool, why: str, given_for: str | None) -> Recalled:
        """The answer with its reason and the hits it does not give, each with why; `given_for` says
        what the items answer: the whole `prompt`, its `clauses` asked alone, or nothing (None)."""
        if not explain:
            return answer
        answer.why = why
        given = {(item["path"], item["start_line"]) for item in answer.items}
        for hit in self.found:
            if (hit.path, hit.start_line) not in given:
                answer.left_out.append({**_items([hit], True)[0], "why": self.not_given(hit, given_for)})
        return answer

    def not_given(self, hit: Hit, given_for: str | None) -> str:
        from memvault.search.recall import hit_script

        if hit.about.get("superseded"):
            return "superseded: its correction is given instead"
        if given_for is None:
            return "no hit answers the prompt: none holds its words, none is singled out by the model"
        cosine = hit.scores.get("vector")
        if self.floor is not None and cosine is not None and cosine < self.floor:
            return f"below the relevance floor (cosine {cosine:.3f} < {self.floor:.3f})"
        if hit_script(hit) != self.own:
            return "a note of the other script, at the floor by its place in its half: given only when it answers"
        if hit.unit == "summary":
            return "a day's summary none of whose clauses holds the query's words"
        if given_for == "clauses":
            return "no hit answers the whole prompt, and it answers none of its clauses asked alone"
        return "ranked below the items given"
