"""What each hand-made tool's parameters mean, said once, and the signature that carries it: an agent
reads nothing but `tools/list` before it calls, so a parameter without a description is a guess.

A search option's description is its help in `memvault.search.option_table` and a translated verb's
is its request field's `help` (`memvault.protocol.arg`): neither is repeated here. A parameter that
means one thing in every tool has one line (`key`, `match`); one whose meaning depends on the tool
(`scope`, `text`, `section`) has a line per tool, under `TOOL.NAME`.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field
from pydantic.fields import FieldInfo

from memvault.verbs.notes import GET_LINES

_ROUTED = ("project or user; leave it out to let memvault route it: a `user_` key or a user, preference, profile "
           "or personal tag goes to the user vault, a key already saved goes where its entry is")  # fmt: skip
_NAMED = "the vault the entry is in: project or user; left out, the one holding its key, else project"
DESCRIPTIONS: dict[str, str] = {
    "scope": "the vault to read: project or user",
    "memory_search.scope": "the vaults to search: all (the project vault and the user vault), project or user",
    "memory_list.scope": "the vaults to list: all (the project vault and the user vault), project or user",
    "memory_context.scope": "the vaults to recall from: all (the project vault and the user vault), project or user",
    "memory_save.scope": _ROUTED,
    "memory_forget.scope": _NAMED,
    "memory_correct.scope": _NAMED,
    "memory_restore.scope": "the vault whose trash holds it: project or user; left out, whichever does",
    "memory_search.query": "what to look for, in the user's words, any language (date words like 'last week' "
    "narrow it: see `dates`)",
    "memory_context.query": "what the user is asking about (pass their last messages); left out, only the core "
    "entries and the latest ones",
    "path": "a note: `memory` (MEMORY.md), a date YYYY-MM-DD (that day's note) or a vault-relative path; "
    "or a search hit's `source` or `entry_id`, for just its lines",
    "start_line": "the first line to read, 1-based (a reply with `more` says where to go on)",
    "end_line": f"the last line to read, inclusive; left out, up to {GET_LINES} lines",
    "memory_get.section": "one `##` section of the note, by its title, instead of a line range (with a "
    "`start_line` inside it: from there on)",
    "memory_save.text": "the fact, in a sentence or a few, as it should be read later",
    "memory_correct.text": "the fact as it is now: the correction, written to today's note",
    "type": "the kind of fact, which picks its MEMORY.md section: preference, architecture, solution, discovery "
    "or config (conversation and daily: today's note); left out with no section, today's note",
    "memory_save.section": "a MEMORY.md `##` section by its title (made when missing), instead of `type`'s",
    "memory_save.key": "a short name for a fact that may change (`frontend-stack`): a later save with the same "
    "key replaces it in place",
    "key": "the entry's key, or its `entry_id` as a search hit gives it",
    "tags": "labels for the entry, without `#`; preference, decision, constraint, rule or workflow put it in "
    "MEMORY.md (the stable block of every prompt)",
    "match": "a piece of the entry's text; one entry must hold it",
    "where": "the entry's place: a search hit's `source` (PATH#Lstart-Lend), PATH:LINE, or its `entry_id`",
    "messages": "the finished conversation, oldest first: a list of {role: user or assistant, content}",
    "memory_list.section": "only entries under this `##` section (MEMORY.md's, or a daily note's)",
    "memory_list.tag": "only entries with this tag (without `#`)",
    "memory_list.key": "only the entry with this key",
    "memory_list.conversation": "only the entries of this conversation (the `conversation` an entry carries: "
    "a session's id, an imported conversation's)",
    "id": "the `trash_id` memory_forget answered (memory_trash lists them)",
}


def _described(annotation: Any) -> bool:
    if typing.get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(m, FieldInfo) and m.description for m in annotation.__metadata__)


def described(tool: Callable[..., Any]) -> inspect.Signature:
    """The tool's signature with every parameter described: its own `Field(description=...)` when it has
    one, else its line in `DESCRIPTIONS`. A parameter with neither is an error when the server is built,
    not a blank an agent meets."""
    name = tool.__name__
    signature = inspect.signature(tool, eval_str=True)
    params = []
    for p in signature.parameters.values():
        if not _described(p.annotation):
            text = DESCRIPTIONS.get(f"{name}.{p.name}") or DESCRIPTIONS.get(p.name)
            if text is None:
                raise KeyError(f"{name}: parameter {p.name!r} has no description (memvault.mcp.params)")
            p = p.replace(annotation=Annotated[p.annotation, Field(description=text)])
        params.append(p)
    return signature.replace(parameters=params)
