"""The verbs that learn from conversations: `extract` (the conversation's summary into today's note,
its lasting statements into the review queue), `review`, `approve` and `reject`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memvault import llm
from memvault.protocol import Message, Request, arg
from memvault.vault.config import load_settings
from memvault.vault.conversation import Digest, parse_conversation, summarise
from memvault.vault.conversation import Message as Said
from memvault.vault.daily import append_daily, vault_lang
from memvault.vault.errors import GuardError, MemvaultError, UsageError
from memvault.vault.guards import check_entry, check_field_value
from memvault.vault.memory_file import remember
from memvault.vault.proposals import MAX_NEW, Candidate, find_candidates, propose, review, take
from memvault.verbs.runtime import WriteRuntime

# a proposal's kind -> where approving it saves it: a save type, or a section by language
APPROVE_TO: dict[str, str | dict[str, str]] = {
    "preference": "preference", "decision": "architecture", "discovery": "discovery", "fact": "discovery",
    "constraint": {"en": "Constraints", "zh": "约束"}, "workflow": {"en": "Workflow", "zh": "工作流程"},
    "skill": {"en": "Skills", "zh": "技能"}, "goal": {"en": "Goals", "zh": "目标"},
}  # fmt: skip


@dataclass(frozen=True)
class Extracted(Message):
    path: str
    messages: int
    proposals: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    indexed: bool = False
    digest: dict[str, Any] | None = None  # what the next part of the conversation goes on from (`earlier`)
    history: str | None = None  # the conversation's own note, where what it said is kept (`vault.history`)


@dataclass(frozen=True)
class Proposals(Message):
    proposals: list[dict[str, Any]]

    def human(self) -> str:
        return "\n".join(f"{p['id']}  {p['kind']:<10} seen {p['seen']}x  last {p['last']}  {p['text']}"
                         for p in self.proposals) or "the review queue is empty"  # fmt: skip


@dataclass(frozen=True)
class Approved(Message):
    id: str
    path: str
    section: str
    status: str
    indexed: bool = False

    def human(self) -> str:
        done = "already remembered" if self.status in ("unchanged", "merged") else "remembered"
        return f"{done} in {self.path} § {self.section}; {self.id} is off the review queue"


@dataclass(frozen=True)
class Rejected(Message):
    id: str

    def human(self) -> str:
        return f"rejected {self.id}: it is in the trash"


@dataclass(frozen=True)
class Extract(Request, op="extract", reply=Extracted, writes=True, timeout=120.0):
    """A conversation (the text of a JSON, JSON-lines or `{"messages": [...]}` file, or a Claude Code
    transcript), by `name`; its `title` heads the summary, and its id is kept on it as
    `[conversation:: ID]` (seed 000 finds a conversation's memories by it)."""

    conversation: str
    name: str = "conversation"
    title: str | None = None
    conversation_id: str | None = None
    # a conversation captured in parts (the hooks, turn by turn): its summary is one entry of the day's
    # note, named by `key` and replaced by each part's, and covers the parts before by their `digest`
    # (`earlier`, as the previous part's reply gave it); proposals come from this part's messages alone
    key: str | None = None
    earlier: dict[str, Any] | None = None


@dataclass(frozen=True)
class Review(Request, op="review", reply=Proposals):
    """The proposed facts waiting in REVIEW.md, with how often each was seen."""


@dataclass(frozen=True)
class Approve(Request, op="approve", reply=Approved, writes=True):
    """Write a proposed fact to MEMORY.md (guards, keys and dedupe apply)."""

    id: str = arg("the proposal's id (see memvault review)")
    section: str | None = arg("this MEMORY.md section instead of the one its kind goes to", None)
    key: str | None = arg("name the entry: a later save with this key replaces it", None)


@dataclass(frozen=True)
class Reject(Request, op="reject", reply=Rejected, writes=True):
    """Drop a proposed fact (it goes to the trash)."""

    id: str = arg("the proposal's id (see memvault review)")


def _safe(candidates: list[Candidate], warnings: list[str]) -> list[Candidate]:
    """Only what a save would accept goes into the queue: a credential is never written anywhere."""
    out = []
    for c in candidates:
        try:
            check_entry(c.text)
        except GuardError as exc:
            warnings.append(f"a {c.kind} left out of the review queue: {exc}")
            continue
        out.append(c)
    return out


def extract(rt: WriteRuntime, request: Extract) -> Extracted:
    messages = parse_conversation(request.conversation, request.name)
    fields = (("conversation", check_field_value("conversation id", request.conversation_id)),) \
        if request.conversation_id is not None else ()  # fmt: skip
    summary = summarise(messages, request.title, Digest.from_json(request.earlier) if request.earlier else None)
    warnings = list(summary.left_out)
    if summary.cut:
        warnings.append(f"{summary.cut} long messages cut to their first 160 characters in the summary")
    rel = ""  # memvault.toml's `daily_notes = false`: no summary, the rest as ever
    if load_settings(rt.layout.root).daily_notes:
        saved = append_daily(rt.layout, summary.text, section="conversation", key=request.key, fields=fields)
        rel = rt.layout.relative(saved.path)
    else:
        warnings.append("daily_notes = false in memvault.toml: the conversation's summary is not written")
    try:  # history is extra: a note that cannot be written never costs the summary or the proposals
        history = _keep_history(rt, request, messages)
    except MemvaultError as exc:
        history = None
        warnings.append(f"what the conversation said was not kept: {exc}")
    candidates = find_candidates([m.content for m in messages if m.role == "user"])
    if llm.configured():
        try:
            candidates += [Candidate(text, "discovery", "llm") for text in llm.discoveries(messages)]
        except llm.LlmFailed as exc:
            warnings.append(f"LLM extractor: {exc}; the rule-based proposals stand")
    proposed = propose(rt.layout, _safe(candidates, warnings))
    if proposed.left_out:
        warnings.append(f"{proposed.left_out} more statements not proposed: one extraction adds at most {MAX_NEW} "
                        "new proposals to the review queue, the most repeated first")  # fmt: skip
    written = [*([rel] if rel else []), *([history] if history else [])]
    return Extracted(rel, len(messages), [asdict(p) for p in proposed.proposals], warnings, rt.written(written),
                     summary.digest.to_json(), history)  # fmt: skip


def _keep_history(rt: WriteRuntime, request: Extract, messages: list[Said]) -> str | None:
    """What the conversation said, in its own note (`vault.history`), unless memvault.toml says
    `keep_conversations = false`; a conversation without an id is named by its first message."""
    import hashlib

    from memvault.vault.history import keep_messages

    if not messages or not load_settings(rt.layout.root).keep_conversations:
        return None
    named = request.conversation_id or "conv-" + hashlib.sha256(messages[0].content.encode()).hexdigest()[:12]
    return keep_messages(rt.layout, named, request.title, messages)


def review_queue(rt: WriteRuntime, request: Review) -> Proposals:
    return Proposals([asdict(p) for p in review(rt.layout)])


def approve(rt: WriteRuntime, request: Approve) -> Approved:
    found = next((p for p in review(rt.layout) if p.id == request.id), None)
    if found is None:
        raise UsageError(f"{request.id[:40]!r}: no such proposal (see `memvault review`)")
    target = APPROVE_TO.get(found.kind, "discovery")
    section = request.section
    kind = None
    if section is None:
        section = target.get(vault_lang(rt.layout)) if isinstance(target, dict) else None
        kind = None if isinstance(target, dict) else target
    saved = remember(rt.layout, found.text, section=section, kind=kind, key=request.key,
                     fields=(("source", "review"),))  # where it came from; the guards apply here too  # fmt: skip
    take(rt.layout, found.id)
    rel = rt.layout.relative(saved.path)
    return Approved(found.id, rel, saved.section, saved.status, rt.written(saved.notes(rt.layout)))


def reject(rt: WriteRuntime, request: Reject) -> Rejected:
    return Rejected(take(rt.layout, request.id, reason="a rejected proposal").id)
