"""Proposed facts: lasting statements found in what the user said, waiting in a review queue.

The rules look at the user's messages only, never the assistant's, one sentence at a time, for
six kinds of lasting statement in English and Chinese: a preference, a constraint, a decision, a
workflow, and (seed 000's durable facts about the user) a skill and a goal. A question is not a
statement, and neither is a fragment of a few words.

The queue is `REVIEW.md` at the vault root, a Markdown list a person can read and edit, never
indexed (it is not memory yet). Each line carries its id, kind, how often it was seen and when last:

    - I prefer tabs over spaces [id:: p3f2a1c] [kind:: preference] [seen:: 2] [last:: 2026-12-01]

The same fact seen again raises its count, and so does a near-duplicate of it: the same statement
repeated with other words around it ("I really prefer tabs over spaces", "I prefer tabs to spaces"),
told by the words the two share (`gist`, `near`), so a long conversation that comes back to a fact
is one proposal seen many times, not one per variant. One extraction adds at most `MAX_NEW` new
proposals, the most repeated first: the queue is a person's to read. `approve` writes one to
MEMORY.md through the normal save path (guards, keys, dedupe) and takes it off the queue; `reject`
moves it to the trash.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from itertools import pairwise

from memvault.vault.cjk import CJK_WIDE, LETTERS, on_first_use
from memvault.vault.entries import Entry, entry_key, iter_entries, normalise, vault_entries
from memvault.vault.errors import UsageError
from memvault.vault.fileio import TextFile, read_note, split_lines, update_note
from memvault.vault.notes import parse_note
from memvault.vault.paths import REVIEW_FILE, Layout
from memvault.vault.trash import trash_entry

_WORDS = {  # each kind: the phrases that make a sentence a lasting statement of it
    "preference": [
        r"\bI(?:'d| would)? (?:really |much |strongly )?(?:prefer|rather)\b",
        r"\bI (?:always|usually|tend to|like to|love to|hate|dislike)\b", r"\bmy favou?rite\b",
        r"我(?:更|比较|很|也)?(?:喜欢|习惯|偏好|倾向于?)", r"我(?:一般|通常|平时|讨厌|不喜欢)",
    ],
    "constraint": [
        r"^(?:please )?(?:never|always|don't|do not|make sure|avoid)\b",
        r"\b(?:must(?: not|n't)?|should never|never ever|under no circumstances)\b",
        r"不要|必须|禁止|千万别|绝对不|一定要|不能用",
    ],
    "decision": [
        r"\b(?:we|I)(?:'ve| have)? (?:decided|chose|chosen|agreed)\b", r"\blet'?s go with\b",
        r"\bwe(?:'ll| will) (?:use|go with|stick with)\b", r"\bthe decision is\b", r"决定|选定|就用",
    ],
    "workflow": [
        r"\bfirst\b.{3,}\bthen\b", r"\bevery time\b", r"\bwhenever\b", r"\bbefore (?:you|we|I) \w+",
        r"每次|先.{1,40}(?:再|然后)|之前(?:先|要)",
    ],
    "skill": [  # seed 000's durable facts: who the user is and what they can do
        r"\bI(?:'m| am) an? (?:\w+[ -]){0,3}(?:developer|engineer|programmer|designer|scientist|analyst|"
        r"architect|administrator|admin|writer|researcher|expert|specialist)\b",
        r"\bI(?:'ve| have) (?:been \w+ing|worked) (?:\w+ ){0,4}for (?:\d+|many|several|a few) years\b",
        r"\bI(?:'m| am) (?:fluent|proficient|experienced|an expert) (?:in|with)\b",
        r"我是(?:一名|一个|一位)?.{0,12}(?:工程师|开发者|程序员|设计师|架构师|研究员|专家)", r"我(?:精通|擅长|熟悉)",
    ],
    "goal": [  # and what they are after
        r"\bmy (?:\w+ )?goal (?:is|for)\b", r"\bI(?:'m| am) (?:trying|planning|aiming|hoping) to\b",
        r"\bI want to (?:learn|become|master|build|get better at)\b",
        r"我的(?:\S{0,4})?(?:目标|计划)是", r"我(?:打算|计划|想)(?:要)?(?:学|成为|掌握)",
    ],
}  # fmt: skip
RULES = tuple((kind, re.compile("|".join(words), re.IGNORECASE)) for kind, words in _WORDS.items())
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+")  # "commit .env files" is one sentence
_QUESTION = re.compile(
    r"[?？]\s*$|^(?:do|does|did|can|could|would|should|is|are|what|why|how|which|when|where)\b|吗\s*$", re.IGNORECASE
)
_FILLER = re.compile(  # openers that carry nothing: "thanks, and I prefer X" is the fact "I prefer X"
    r"^(?:(?:ok(?:ay)?|thanks|thank you|and|also|btw|by the way|so|well|hi|hello|hey|yes|yeah|no|sure|oh|"
    r"again|honestly|(?:as|like) I (?:said|mentioned)(?: before)?|(?:just )?to repeat)"
    r"[,，!！.。:：\s]+|(?:好的|谢谢|还有|另外|对了|嗯)[,，!！.。:：\s]*)+",
    re.IGNORECASE,
)
_FIELD = re.compile(r"\[(id|kind|seen|last|source)::[ \t]*([^\]\n]*?)[ \t]*\]")
MIN_CHARS = 12
MAX_CHARS = 300
MAX_NEW = 20  # new proposals one extraction adds at most
# two statements are one when this share of their gists (words, and word pairs in order) is common: a
# filler word or two more ("really", "please", "as I said") keeps a variant above it, while one content
# word changed ("dark mode" / "light mode") or two swapped ("tabs over spaces" / "spaces over tabs") drops
# below it
NEAR = 0.6
_VARIANTS = 8  # the variants of one statement a new one is compared with
_TOKEN = on_first_use(rf"[{LETTERS}]|[^\W_{LETTERS}]+")  # a CJK letter, or a run of other letters and digits
_STOP_WORDS = (  # the words that say nothing of what a statement is about
    "a an the me my we us our you your it its this that these those is are was were be been am to of in on at "
    "for with by from as over about into instead and or but so if then than too very really just also please "
    "remember note 的 了 吧 呢 啊 吗 呀 我 们 你 是 也 都 就 还 要 用"
)
STOP = frozenset(_STOP_WORDS.split())  # (also what a keyword hit must hold more than: `verbs.context`)
HEADER = (
    "# Review queue\n\nFacts memvault proposed from conversations, waiting for a person: `memvault approve ID`\n"
    "writes one to MEMORY.md, `memvault reject ID` moves it to the trash. Edit a line here freely.\n\n"
)


@dataclass(frozen=True)
class Candidate:
    text: str
    kind: str
    source: str = "rules"
    seen: int = 1  # how many times it (or a near-duplicate) was said in the conversation


def content_words(text: str) -> list[str]:
    """A statement's content words, in order: a CJK character each, a plural's `s` off, no stop word."""
    words = []
    for token in _TOKEN.findall(text.casefold()):
        if token in STOP or (len(token) == 1 and token.isascii()):
            continue
        words.append(token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token)
    return words


def gist(text: str) -> frozenset[str]:
    """What a statement says, as a set: its content words and each pair of them in order, so word
    order counts as well as the words."""
    words = content_words(text)
    return frozenset(words) | frozenset(f"{a} {b}" for a, b in pairwise(words))


def near(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two gists are one statement (`NEAR` of them in common)."""
    return bool(a and b) and len(a & b) >= NEAR * len(a | b)


@dataclass(frozen=True)
class Proposal:
    id: str
    text: str
    kind: str
    seen: int
    last: str
    source: str = "rules"
    line: int = 0


def find_candidates(user_messages: list[str]) -> list[Candidate]:
    """The lasting statements in what the user said, once each in the order first said, each near-duplicate
    counted as a sighting of the first (`seen`)."""
    out: list[Candidate] = []
    for message in user_messages:
        for sentence in _SENTENCE.split(message):
            text = _FILLER.sub("", " ".join(sentence.split()).strip(" -*>"))
            text = text[:1].upper() + text[1:] if text[:1].isascii() else text
            size = len(text) + len(CJK_WIDE.findall(text))  # a Chinese character says about a word
            if not MIN_CHARS <= size <= 2 * MAX_CHARS or len(text) > MAX_CHARS or _QUESTION.search(text):
                continue
            kind = next((kind for kind, rule in RULES if rule.search(text)), None)
            if kind is not None:
                out.append(Candidate(text, kind))
    return merge(out)


def merge(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates with each near-duplicate (or exact one) folded into the first said, its `seen` added
    there. A variant is compared with each variant met so far (the first `_VARIANTS`), not only the first:
    two fillers apart, a variant is near the one between them, not always near the first."""
    out: list[tuple[Candidate, set[str], list[frozenset[str]]]] = []
    for c in candidates:
        form, said = normalise(c.text), gist(c.text)
        at = next((i for i, (_, forms, gists) in enumerate(out)
                   if form in forms or any(near(g, said) for g in gists)), None)  # fmt: skip
        if at is None:
            out.append((c, {form}, [said]))
            continue
        first, forms, gists = out[at]
        out[at] = (replace(first, seen=first.seen + c.seen), forms, gists)
        if form not in forms and len(gists) < _VARIANTS:
            forms.add(form)
            gists.append(said)
    return [c for c, _, _ in out]


def proposal_id(text: str) -> str:
    return "p" + entry_key(text)[:6]  # the same fact, the same id


def _parse(text: str) -> list[tuple[Proposal, Entry]]:
    out = []
    for entry in iter_entries(parse_note(REVIEW_FILE, text)):
        fields = dict(_FIELD.findall(entry.text))
        said = " ".join(_FIELD.sub("", entry.text).split())
        seen = fields.get("seen", "1")
        out.append((Proposal(fields.get("id") or proposal_id(said), said, fields.get("kind", "fact"),
                             int(seen) if seen.isdigit() else 1, fields.get("last", ""), fields.get("source", "rules"),
                             entry.start_line), entry))  # fmt: skip
    return out


def _line(p: Proposal) -> str:
    source = f" [source:: {p.source}]" if p.source != "rules" else ""
    return f"- {p.text} [id:: {p.id}] [kind:: {p.kind}] [seen:: {p.seen}] [last:: {p.last}]{source}"


def review(layout: Layout) -> list[Proposal]:
    path = layout.root / REVIEW_FILE
    return [p for p, _ in _parse(read_note(path, REVIEW_FILE, layout=layout).text)] if path.is_file() else []


@dataclass(frozen=True)
class Proposed:
    """What `propose` did: the proposals added or seen again, and how many new ones `MAX_NEW` left out."""

    proposals: list[Proposal]
    left_out: int = 0


def propose(layout: Layout, candidates: list[Candidate], today: dt.date | None = None,
            limit: int = MAX_NEW) -> Proposed:  # fmt: skip
    """Add each candidate to the queue, or raise the count of the one it repeats (the same id, or a
    near-duplicate); one already in MEMORY.md (or near it) is left out, and so is each new one past
    `limit`, the most often said taken first."""
    day = (today or dt.date.today()).isoformat()
    memory = layout.relative(layout.memory_md)
    entries = list(vault_entries(layout, memory)) if layout.memory_md.is_file() else []
    known, known_gists = {normalise(e.text) for e in entries}, [gist(e.text) for e in entries]
    fresh = [c for c in merge(candidates)
             if normalise(c.text) not in known and not any(near(gist(c.text), g) for g in known_gists)]  # fmt: skip
    fresh.sort(key=lambda c: -c.seen)  # stable: among the equally repeated, the first said first
    done: list[Proposal] = []
    left_out = 0

    def change(current: TextFile | None) -> str:
        nonlocal left_out
        done.clear()
        left_out = 0
        text = current.text if current else HEADER
        newline = current.newline if current else "\n"
        lines = split_lines(text)
        queued = [(p, e, gist(p.text)) for p, e in _parse(text)]
        added = 0
        for c in fresh:
            ident, said = proposal_id(c.text), gist(c.text)
            at = next((i for i, (p, _, g) in enumerate(queued) if p.id == ident or near(g, said)), None)
            if at is not None:
                p, e, g = queued[at]
                p = Proposal(p.id, p.text, p.kind, p.seen + c.seen, day, p.source, p.line)
                lines[e.start_line - 1] = _line(p) + newline
                queued[at] = (p, e, g)
            elif added >= limit:
                left_out += 1
                continue
            else:
                p = Proposal(ident, c.text, c.kind, c.seen, day, c.source)
                if lines and not lines[-1].endswith(("\n", "\r")):
                    lines[-1] += newline
                lines.append(_line(p) + newline)
                queued.append((p, Entry(REVIEW_FILE, "", len(lines), len(lines), p.text, None, (), None), said))
                added += 1
            done.append(p)
        return "".join(lines)

    if fresh:
        update_note(layout, layout.root / REVIEW_FILE, change)
    return Proposed(list({p.id: p for p in done}.values()), left_out)


def take(layout: Layout, ident: str, reason: str | None = None) -> Proposal:
    """Take a proposal off the queue (to the trash, with `reason`, when it is rejected)."""
    taken: list[Proposal] = []

    def change(current: TextFile | None) -> str:
        found = [(p, e) for p, e in _parse(current.text if current else "") if p.id == ident]
        if current is None or not found:
            raise UsageError(f"{ident[:40]!r}: no such proposal (see `memvault review`)")
        proposal, entry = found[0]
        lines = split_lines(current.text)
        if reason is not None:
            trash_entry(layout, entry, "".join(lines[entry.start_line - 1 : entry.end_line]), reason)
        taken.append(proposal)
        return "".join(lines[: entry.start_line - 1] + lines[entry.end_line :])

    update_note(layout, layout.root / REVIEW_FILE, change)
    return taken[0]
