"""A day's summary once a fact it told is corrected or forgotten: the clause struck through, not deleted.

A summary (`index`) is one line of clauses ("; " between them) written from the day's entries. Past
days are frozen, but `correct`, `forget` and a keyed save onto a frozen day are explicit commands about
one fact, so each clause of a day's summary that tells the old fact is struck:
`~~Redis test port 6379~~ (corrected 2026-12-05)`. The catalog and a person still read what the day
said; the index, the stable block and an agent read only what it still says (`vault.days.live`), so
the old fact no longer answers for the day. The note as it was is kept in the trash (`set_summary`),
and `restore` lifts the strikes of the forget it undoes.

A clause tells a fact when most of its content words are the fact's (`TELLS`, and two at least); for a
correction one of them must also be a word the new text dropped (the old number, the old name), so a
clause that still holds ("Redis for the test cache") stays, and so does the clause that states the
correction itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memvault.vault.days import STRUCK, read_day, set_summary, summary_of
from memvault.vault.errors import MemvaultError
from memvault.vault.logger import log
from memvault.vault.paths import Layout, daily_notes
from memvault.vault.proposals import content_words

TELLS = 0.6  # of a clause's content words, the share the fact must hold
_CUT = re.compile(r"((?:\s*[;；]\s*)+)")  # between clauses, kept as written
LABELS = {
    "en": {"corrected": "corrected", "forgotten": "forgotten"},
    "zh": {"corrected": "已更正", "forgotten": "已遗忘"},
}
FORGOTTEN = ("forgotten", "已遗忘")


def tells(clause: str, fact: set[str], dropped: set[str] | None = None) -> bool:
    """Whether a summary's clause states the fact whose content words are `fact`; with `dropped` (what a
    correction no longer says), only if it states one of those."""
    words = set(content_words(clause))
    shared = words & fact
    if len(shared) < 2 or len(shared) < TELLS * len(words):
        return False
    return dropped is None or bool(shared & dropped)


def strike(layout: Layout, fact: str, why: str, day: str, new: str | None = None) -> list[str]:
    """Strike each clause of the days' summaries that tells `fact`, now `why` ("corrected" to `new`, or
    "forgotten") on `day`; the notes changed, vault-relative. A summary that cannot take the mark (too
    long, its frontmatter broken) is left as it was and said in the log: the command it follows is done."""
    from memvault.vault.templates import vault_lang

    words = set(content_words(fact))
    now = set(content_words(new)) if new is not None else set()
    dropped = words - now if new is not None else None
    if not words or dropped == set():
        return []
    label = LABELS.get(vault_lang(layout), LABELS["en"])[why]

    def mark(clause: str) -> str | None:
        if "~" in clause or STRUCK.fullmatch(clause) or (now and now <= set(content_words(clause))):
            return None  # struck already, or the correction itself
        return f"~~{clause}~~ ({label} {day})" if tells(clause, words, dropped) else None

    return _rewrite(layout, mark)


def unstrike(layout: Layout, facts: list[str]) -> list[str]:
    """Lift the strikes the forgets of `facts` made (`restore` put them back): the notes changed."""
    each = [set(content_words(fact)) for fact in facts]

    def lift(clause: str) -> str | None:
        found = STRUCK.fullmatch(clause)
        if found is None or found["why"] not in FORGOTTEN or not any(tells(found["clause"], w) for w in each):
            return None
        return found["clause"]

    return _rewrite(layout, lift)


def _rewrite(layout: Layout, change: Callable[[str], str | None]) -> list[str]:
    """Each daily note's summary with `change` made to its clauses (a clause it answers None for stays)."""
    from memvault.vault.templates import daily_template, vault_lang

    changed = []
    for when, path in daily_notes(layout):
        note = read_day(layout, path)
        summary = (summary_of(note) if note is not None else None) or ""
        pieces = _CUT.split(summary)
        new = [(change(piece) or piece) if i % 2 == 0 else piece for i, piece in enumerate(pieces)]
        if new == pieces:
            continue
        try:
            set_summary(layout, when, "".join(new), daily_template(when, vault_lang(layout)))
        except MemvaultError as exc:
            log.warning(f"{layout.relative(path)}: its summary still tells what changed: {exc}")
            continue
        changed.append(layout.relative(path))
    return changed
