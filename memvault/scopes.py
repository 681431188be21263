"""The two scopes together: the project vault and the user vault, each with its own index and
daemon (`vault.scopes` says what goes where). Search and list read both and label every hit and
entry with its scope; a save goes where the routing rule sends it.

Two ranked lists are merged by taking turns, rank by rank (`memvault.answers`).

    from memvault import Scopes, Vault
    with Scopes(Vault("memory")) as s:
        name, vault = s.save(key="user_lang")  # ("user", the user vault): routed by the key
        vault.remember("Answers in English", section="Preferences", key="user_lang")
        hits = s.search("language", limit=5)   # both vaults, each hit with .scope
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.answers import merge_answers
from memvault.api import Vault
from memvault.vault.errors import UsageError
from memvault.vault.paths import Layout
from memvault.vault.places import READ_SCOPES, read_roots
from memvault.vault.scopes import is_vault, route, user_vault_root

if TYPE_CHECKING:
    from memvault.search.hits import Hit, SearchResult
    from memvault.verbs.entries import Listed
    from memvault.verbs.notes import Note, Remember, Saved
    from memvault.verbs.query import Search


class Scopes:
    """The project vault and the user's own vault (opened on first use, created by the first save
    routed to it)."""

    def __init__(self, project: Vault, user_root: str | Path | None = None) -> None:
        self.project = project
        self.user_layout = Layout(Path(user_root).expanduser().resolve() if user_root else user_vault_root())
        self._user: Vault | None = None
        self.created_user = False  # the last save created the user vault

    @property
    def shared(self) -> bool:
        """The user vault is the project vault (one folder for both): one scope."""
        return self.user_layout.root == self.project.root

    def _user_vault(self) -> Vault:
        if self._user is None:
            self._user = Vault(self.user_layout.root)
        return self._user

    def read(self, scope: str = "all") -> list[tuple[str, Vault]]:
        """The vaults a read covers, named; `all` leaves out a user vault that does not exist yet."""
        if scope not in READ_SCOPES:
            raise UsageError(f"{scope!r}: a scope is one of {', '.join(READ_SCOPES)}")
        named = read_roots(str(self.project.root), str(self.user_layout.root), scope)
        if not named:
            raise UsageError(
                f"{self.user_layout.root}: no user vault yet; a save with --scope user, a user_ key or a "
                "#preference tag creates it"
            )
        return [(name, self.project if name == "project" else self._user_vault()) for name, _ in named]

    def one(self, scope: str | None = None, key: str | None = None) -> tuple[str, Vault]:
        """The one vault an entry verb (forget, correct, clear, restore, trash) works in: the scope
        asked for, else the vault holding the key's current entry, else the user vault for a `user_`
        key, else the project."""
        name = route(scope, key, None)
        if scope is None and key is not None and not self.shared:
            name = self._elsewhere(name, key) or name
        return self.read(name)[0] if not self.shared else ("project", self.project)

    def save(self, scope: str | None = None, key: str | None = None, tags: list[str] | None = None
             ) -> tuple[str, Vault]:  # fmt: skip
        """Where a save goes (`vault.scopes.route`); the user vault is created (in the project's
        language) by the first save routed to it."""
        name = route(scope, key, tags)
        if scope is None and key is not None and not self.shared:
            name = self._elsewhere(name, key) or name  # one key, one fact: the update goes where the fact is
        if name == "project" or self.shared:
            return "project", self.project
        if not is_vault(self.user_layout):
            from memvault.vault.daily import vault_lang

            self._user_vault().init(vault_lang(self.project.layout))
            self.created_user = True
        return "user", self._user_vault()

    def _elsewhere(self, name: str, key: str) -> str | None:
        """The other scope than `name` (the rule's), when its vault holds the current entry with `key`.
        The rule's own vault is not read here: the verb that writes there looks the key up as it
        writes, so each vault is searched for a key once (a key saved in both with `--scope` is
        updated in the one the rule does not name)."""
        from memvault.vault.entries import holding_key

        other = "user" if name == "project" else "project"
        layout = self.user_layout if other == "user" else self.project.layout
        return other if is_vault(layout) and holding_key(layout, key) else None

    def saved(self, request: Note | Remember, scope: str | None = None) -> Saved:
        """Run a save in the vault it routes to (`save`); the reply names that vault as its `scope`."""
        name, target = self.save(scope, request.key, request.tags)
        return dataclasses.replace(target.run(request), scope=name)

    def search(self, query: str, scope: str = "all", **options: Any) -> list[Hit]:
        """Both vaults' hits (or one scope's), each with its `scope`; options as `Vault.search`."""
        return self.search_result(query, scope, **options).hits

    def search_result(self, query: str | Search, scope: str = "all", **options: Any) -> SearchResult:
        """The query in every vault of the scope, each hit labelled, the lists merged rank by rank."""
        from memvault.search.hits import SearchResult

        return SearchResult.from_json(self.search_json(query, scope, **options))

    def search_json(self, query: str | Search, scope: str = "all", **options: Any) -> dict[str, Any]:
        """`search_result` in its public shape (`memvault.answers.merge_answers`), as `search --json` prints it."""
        from memvault.search.options import build_options  # a prompt's hook asks `context`: none of this
        from memvault.verbs.query import Search

        request = query if isinstance(query, Search) else Search(query, build_options(**options))
        answers = [(name, vault.run(request).to_json()) for name, vault in self.read(scope)]
        return merge_answers(answers, request.options.limit)

    def context(self, query: str | None = None, budget: int | None = None, scope: str = "all",
                conversation: str | None = None, explain: bool = False) -> dict[str, Any]:  # fmt: skip
        """The prompt blocks (`memvault.verbs.context`) from every vault of the scope: `text`, and the same as
        data; `budget` characters (default `DEFAULT_BUDGET` there); `conversation`: the asking session, whose
        own summaries stay out of the stable block; `explain`: why, and what was left out (the panel's)."""
        from memvault.verbs.context import DEFAULT_BUDGET, Context, render

        budget = DEFAULT_BUDGET if budget is None else budget
        parts = [(name, vault.run(Context(query, conversation, explain))) for name, vault in self.read(scope)]
        reasons = {name: part.reason for name, part in parts if part.reason}
        # `reason`: why recall answered from the notes' text and not the index, when it did (a recall error)
        return {**render(parts, budget), "reason": next(iter(reasons.values()), None), "reasons": reasons}

    def entries(self, section: str | None = None, tag: str | None = None, key: str | None = None,
                scope: str = "all", unused_since: str | None = None, conversation: str | None = None,
                importance: int | None = None) -> Listed:  # fmt: skip
        """Every vault's entries of the scope, each with its `scope`, and the tag counts summed."""
        from memvault.verbs.entries import Listed, ListEntries

        rows: list[dict[str, Any]] = []
        counts: Counter[str] = Counter()
        for name, vault in self.read(scope):
            listed = vault.run(ListEntries(section, tag, key, unused_since, conversation, importance))
            rows += [{"scope": name, **row} for row in listed.entries]
            counts.update(listed.tags)
        return Listed(rows, dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))))

    def export(self, scope: str = "all", conversation: str | None = None) -> dict[str, Any]:
        """memvault's export document (`vault.exchange.export_document`) of every vault of the scope,
        each entry labelled with its `scope`; `conversation`: that conversation's entries alone."""
        from memvault.vault.exchange import export_document
        from memvault.verbs.exchange import Export

        done = [(name, vault.run(Export(conversation))) for name, vault in self.read(scope)]
        rows = [{"scope": name, **entry} for name, reply in done for entry in reply.entries]
        days = [{"scope": name, **day} for name, reply in done for day in reply.days]
        skipped = [("" if name == "project" else f"[{name}] ") + why for name, reply in done for why in reply.skipped]
        return export_document(rows, days, skipped=skipped)

    def close(self) -> None:
        if self._user is not None:
            self._user.close()

    def __enter__(self) -> Scopes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
