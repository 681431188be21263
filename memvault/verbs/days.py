"""The verbs about days: a day's summary, the yearly catalog, the latest days, retention."""

from __future__ import annotations

import datetime as dt
import textwrap
from dataclasses import asdict, dataclass, field
from typing import Any

from memvault.protocol import Message, Request
from memvault.vault.catalog import catalog_path, years
from memvault.vault.catalog import sync as sync_catalog
from memvault.vault.config import load_settings
from memvault.vault.daily import vault_lang
from memvault.vault.days import check_summary, set_summary
from memvault.vault.days import recent as recent_days
from memvault.vault.errors import UsageError
from memvault.vault.paths import parse_date
from memvault.vault.retention import retention as run_retention
from memvault.vault.templates import daily_template
from memvault.verbs.runtime import VaultRuntime, WriteRuntime


@dataclass(frozen=True)
class Summarised(Message):
    path: str
    summary: str
    indexed: bool = False


@dataclass(frozen=True)
class CatalogText(Message):
    """Each year's catalog lines (`date`, `summary`); `repaired` names files found edited by hand."""

    years: dict[str, list[dict[str, str]]]
    repaired: list[str] = field(default_factory=list)

    def human(self) -> str:
        return "\n".join(f"{x['date']}\t{x.get('summary', '')}" for lines in self.years.values() for x in lines)

    def notes(self) -> list[str]:
        return self.repaired


@dataclass(frozen=True)
class RecentDays(Message):
    days: list[dict[str, Any]]

    def human(self) -> str:
        if not self.days:
            return "no daily notes yet"
        return "\n".join(
            f"{d['date']}  {d['conversations']} conversations, {d['tasks_done']} tasks done, {d['todos']} todos, "
            f"{d['discoveries']} discoveries, {d['words']} words" + (f"\n    {d['summary']}" if d["summary"] else "")
            for d in self.days
        )


@dataclass(frozen=True)
class RetentionReply(Message):
    days: int
    moved: list[str]
    kept: list[str]
    dry_run: bool
    indexed: bool = False
    holding: list[str] = field(default_factory=list)  # kept: they hold the current version of a fact


@dataclass(frozen=True)
class SummaryList(Message):
    """The latest conversation summaries, newest first: each its `date`, `source` (PATH:LINE) and
    `text` (the counts line, the first message and the last ones, as `extract` wrote them)."""

    summaries: list[dict[str, Any]]

    def human(self) -> str:
        if not self.summaries:
            return "no conversation summaries yet (memvault extract CONVERSATION writes one)"
        return "\n\n---\n\n".join(f"[{s['date']}, {s['source']}]\n{s['text']}" for s in self.summaries)


@dataclass(frozen=True)
class Summaries(Request, op="summaries", reply=SummaryList):
    """List the latest conversation summaries (`extract` writes one into the day's note for each
    conversation), newest first: seed 002's `/memory session`."""

    count: int = field(default=10, metadata={"help": "how many, newest first (1 to 1000)", "ge": 1, "le": 1000})

    def check(self) -> None:
        if not 1 <= self.count <= 1000:
            raise UsageError(f"count is 1 to 1000 summaries, not {self.count}")


@dataclass(frozen=True)
class Summary(Request, op="summary", reply=Summarised, writes=True):
    """Set a day's one-line summary (frontmatter `index`); an explicit write, so allowed on past days."""

    text: str
    date: str | None = None


@dataclass(frozen=True)
class Catalog(Request, op="catalog", reply=CatalogText):
    """The yearly catalog: one line per day, its date and its summary."""

    year: int | None = field(default=None, metadata={"help": "one year (default: every year)", "positional": True})


@dataclass(frozen=True)
class Recent(Request, op="recent", reply=RecentDays):
    """The latest daily notes with their figures and summary, newest first."""

    count: int = field(default=7, metadata={"help": "how many days (default 7)", "positional": True})


@dataclass(frozen=True)
class Retention(Request, op="retention", reply=RetentionReply, writes=True):
    """Move daily notes older than `days` (else the vault's `retention_days`) to the trash; `apply`
    does it, otherwise it only says what would move."""

    apply: bool = False
    days: int | None = None


def summary(rt: WriteRuntime, request: Summary) -> Summarised:
    day = parse_date(request.date) if request.date else dt.date.today()
    path = set_summary(rt.layout, day, request.text, daily_template(day, vault_lang(rt.layout)))
    rel = rt.layout.relative(path)
    return Summarised(rel, check_summary(request.text), rt.written([rel]))


def summaries(rt: VaultRuntime, request: Summaries) -> SummaryList:
    from memvault.vault.conversation import conversation_summaries
    from memvault.vault.entries import literal

    found = conversation_summaries(rt.layout, request.count)
    return SummaryList([{"date": e.date, "source": f"{e.path}:{e.start_line}",
                         "text": textwrap.dedent(literal(e.unstamped))} for e in found])  # fmt: skip


def catalog(rt: WriteRuntime, request: Catalog) -> CatalogText:
    repaired = sync_catalog(rt.layout, None if request.year is None else {request.year})
    out: dict[str, list[dict[str, str]]] = {}
    for year in [request.year] if request.year is not None else years(rt.layout):
        path = catalog_path(rt.layout, year)
        text = path.read_bytes().decode("utf-8") if path.is_file() else ""
        lines = [line for line in text.split("\n") if line]  # a line ends at "\n" only, as the catalog writes it
        out[str(year)] = [dict(zip(("date", "summary"), line.split("\t", 1), strict=False)) for line in lines]
    return CatalogText(out, repaired)


def recent(rt: WriteRuntime, request: Recent) -> RecentDays:
    return RecentDays([asdict(d) for d in recent_days(rt.layout, request.count)])


def retention(rt: WriteRuntime, request: Retention) -> RetentionReply:
    days = request.days if request.days is not None else load_settings(rt.layout.root).retention_days
    if request.days is not None and request.days < 1:
        raise UsageError("--days is a number of days, 1 or more")
    done = run_retention(rt.layout, days, apply=request.apply)
    indexed = rt.written(done.moved) if request.apply and done.moved else False
    return RetentionReply(done.days, done.moved, done.kept, done.dry_run, indexed, done.holding)
