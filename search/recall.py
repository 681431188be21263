"""Whether a hit answers its query: what `memvault context` gives a prompt, and what `list
--unused-since` counts as used.

A prompt is given the hits that show they answer it (`answers`): a hit that holds the query's content
words (two, and a third of them in the query's own script), in either script, or the note the model
singles out. A search counts as recalling an
entry when BM25 ranked it (the query's words are in it) or its cosine to the query reaches the
model's calibrated relevance floor. A substring answer (the files, no index) recalls nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping

from memvault.indexer.embedders import relevance_floor
from memvault.indexer.tokenizer import dictionary_count
from memvault.search.dates import MONTHS, WEEKDAYS
from memvault.search.glossary import held, whole_words
from memvault.search.hits import Hit, SearchResult
from memvault.search.join import content_words
from memvault.vault.cjk import script_of, written_in
from memvault.vault.entries import entries_in, entry_key, one_line
from memvault.vault.proposals import STOP

WORDS_HELD = 2  # distinct content words of the query a hit holds to answer it by its words (all of fewer)
# and the share of them a note in the query's own script holds (`by_words`): `python -m bench offtopic`
# and `bench agent`, bench/results
WORDS_SHARE = 1 / 3


# words that answer the agent and ask nothing: a note holding "thanks", "ok" or 好的 answered the prompt
# "thanks!" by its words (all of one), so an agent was given memory for its most common prompts
_ACKNOWLEDGING = (
    "ok okay yes yeah yep yup thanks thank thx ty lgtm hmm hm uh um ah oh wow np "
    "嗯 嗯嗯 哈 哈哈 嘿 哎 唉 噢 喔 好 好的 好吧 谢谢 多谢 收到 一下"
)
ACKNOWLEDGING = frozenset(_ACKNOWLEDGING.split())
_CLAUSES = re.compile(r"\s*[;；]\s*")
_CAPITALIZED = re.compile(r"(?<=\s)[A-Z][A-Za-z]+")
DATE_NAMES = frozenset(MONTHS) | frozenset(WEEKDAYS)


def clauses_held(summary: str, words: frozenset[str]) -> str | None:
    """Of a day's summary (clauses with "; " between them, written from the day's entries), the
    clauses that hold one of the query's `words`: the day's other facts are not what the prompt
    asked. None when no clause holds one."""
    kept = [c for c in _CLAUSES.split(summary) if c and held(words, one_line(c).lower())]
    return "; ".join(kept) if kept else None


def query_words(result: SearchResult) -> frozenset[str]:
    """The words of a query that say what it is about: not its function words ("the", "is", 是, 的),
    nor the ones that name no topic ("change", "file"), nor an acknowledgement (`ACKNOWLEDGING`)."""
    return frozenset(content_words(result.terms) - STOP - ACKNOWLEDGING)


_CLAUSE_END = re.compile(r"[,;?!，；？！。]\s*")
CLAUSE_CHARS = 4  # a shorter piece ("ok,", "嗯，") asks nothing of its own


def prompt_clauses(query: str) -> list[str]:
    """A prompt's clauses, when it has two or more: "where's our grafana again, need to look at the
    latency panel" is two asks, and the whole prompt's embedding is neither, so the note the first one
    names does not stand the model's margin above the rest (`python -m bench agent`)."""
    parts = [p.strip() for p in _CLAUSE_END.split(query) if len(p.strip()) >= CLAUSE_CHARS]
    return parts if len(parts) > 1 else []


def named(query: str, unheard: Iterable[str]) -> list[str]:
    """The words no note holds (`unheard`) that name something: a Chinese word jieba's dictionary does
    not know (王芳: a name, cut by its HMM) and a Latin word capitalized past the query's
    first (Gina, StatefulSet), not a month or a day. A question naming what the vault never saw is
    about something else, however many of its other words a note shares (`python -m bench offtopic`:
    another conversation's LoCoMo questions name its people; a CMRC question its place)."""
    capitalized = {m.group(0).lower() for m in _CAPITALIZED.finditer(query)} - DATE_NAMES
    return [w for w in unheard if (w in capitalized if w.isascii() else len(w) > 1 and not dictionary_count(w))]


def hit_script(hit: Hit) -> str:
    """The script a hit is written in (`vault.cjk.written_in`), its fields and markup aside."""
    return written_in(one_line(hit.text))


def answers(
    hit: Hit, words: frozenset[str], own: str, margins: Mapping[str, float], names: Collection[str] = ()
) -> str | None:
    """Why `hit` answers the query whose content `words` and script (`own`) are given, or None.
    `words`: one of its entries (or its text) holds enough of them (`by_words`), unless it is in the
    query's own script and the query `names` something no note holds (`named`). `model`: it is the
    first note of its script's dense list and stands that side's margin (`margins`, the model's
    `lead_margins`) above the third (`search.fusion.leads`). A prompt with no content word asks nothing."""
    if not words:  # acknowledgements and function words alone ("ok", 好的) ask nothing a note could answer
        return None
    units = [e.text for e in entries_in(hit.text)] if hit.unit == "entries" else [hit.text or hit.snippet]
    in_own = hit_script(hit) == own
    by_its_words = not (names and in_own)  # a name no note holds: no note of its script
    if by_its_words and any(by_words(one_line(u), words, own) for u in units):  # its words, not its fields
        return "words"
    margin = hit.scores.get("margin")
    if margin is None:
        return None
    wanted = margins.get("own" if in_own else "other")
    return "model" if wanted is not None and margin >= wanted else None


def by_words(text: str, words: frozenset[str], own: str) -> bool:
    """Whether `text` holds enough of a query's content `words` to answer it: two (all, of fewer), as
    written or through the dictionary (`search.glossary.held`), and in the query's own script at least
    `WORDS_SHARE` of them (a long note shares two words with many a question it does not answer:
    another conversation's LoCoMo questions, a CMRC question whose passage is not in the vault). A
    Chinese word is one word, not one more for each part of it jieba also gives."""
    whole = whole_words(words)
    share = math.ceil(WORDS_SHARE * len(whole)) if written_in(text) == own else 0
    return held(words, text.lower()) >= min(len(whole), max(WORDS_HELD, share))


def answers_query(hit: Hit, floor: float) -> bool:
    """A keyword match, or a cosine at `floor`: a hit that ranked only for want of better is no recall."""
    return "bm25" in hit.ranks or hit.scores.get("vector", -1.0) >= floor


def recalled_entries(result: SearchResult, embedder: str) -> list[str]:
    """The keys (`entry_key`) of the entries in the hits of `result` that answer its query, in hit
    order; `embedder` names the model whose relevance floor a cosine must reach."""
    if result.source == "substring":
        return []
    floor = relevance_floor(embedder, script_of(result.query))
    return [entry_key(e.text) for h in result.hits if answers_query(h, floor) for e in entries_in(h.text)]
