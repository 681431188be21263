"""What the MCP server offers besides tools: the project vault's notes as resources an agent's host can
attach (MEMORY.md, today's note, the catalog of days), and a `recall` prompt that puts the memory
blocks for a question in front of it. Each is read when asked for, never cached."""

from __future__ import annotations

import datetime as dt
from typing import Any

from memvault.api import Vault
from memvault.scopes import Scopes
from memvault.vault.fileio import read_note

MEMORY_URI = "memory://project/MEMORY.md"
TODAY_URI = "memory://project/today"
CATALOG_URI = "memory://project/catalog"


def memory_md(vault: Vault) -> str:
    layout = vault.layout
    if not layout.memory_md.is_file():
        return "(no MEMORY.md yet: memvault init, or a first memory_save with a type, makes one)"
    return read_note(layout.memory_md, layout.relative(layout.memory_md), layout=layout).text


def today(vault: Vault) -> str:
    layout = vault.layout
    path = layout.daily_note(dt.date.today())
    if not path.is_file():
        return f"(no note for {dt.date.today().isoformat()} yet)"
    return read_note(path, layout.relative(path), layout=layout).text


def catalog(vault: Vault) -> str:
    """One line per day, its date, a tab, its summary (seed 004's catalog), oldest first."""
    from memvault.verbs.days import Catalog

    years = vault.run(Catalog()).years
    lines = [f"{line['date']}\t{line.get('summary', '')}" for year in sorted(years) for line in years[year]]
    return "\n".join(lines) + "\n" if lines else "(no day has a summary yet)\n"


def recall(vault: Vault, question: str, budget: int = 4000) -> str:
    """The prompt: the memory blocks for the question (both scopes), then the question."""
    with Scopes(vault) as scopes:
        blocks = scopes.context(question, budget)
    return (f"{blocks['text']}\nWhat memvault remembers is above (tier {blocks['tier']}: `recent` means nothing "
            f"relevant was found). Use what applies, and say where it came from.\n\n{question}")  # fmt: skip


def _reader(read: Any, vault: Vault) -> Any:
    """A handler with no parameters (a resource without URI variables takes none) that reads now."""
    return lambda: read(vault)


def add_resources(server: Any, vault: Vault) -> None:
    """MEMORY.md, today's note and the catalog as resources; `recall` as a prompt."""
    for uri, name, mime, read in (
        (MEMORY_URI, "MEMORY.md", "text/markdown", memory_md),
        (TODAY_URI, "today's note", "text/markdown", today),
        (CATALOG_URI, "catalog of days", "text/tab-separated-values", catalog),
    ):
        described = (read.__doc__ or f"The project vault's {name}, as it is now.").split("\n")[0]
        server.resource(uri, name=name, description=described, mime_type=mime)(_reader(read, vault))

    def recall_prompt(question: str) -> str:
        """The memory blocks memvault has for a question (core entries, then what is relevant), then it."""
        return recall(vault, question)

    server.prompt(name="recall", description=recall_prompt.__doc__)(recall_prompt)
