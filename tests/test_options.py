"""Each search option is declared once (`memvault.search.option_table.OPTIONS`): the CLI's flags, the JSON
keys of batch lines and socket requests, the MCP tool's parameters and the defaults all come from it."""

from __future__ import annotations

import argparse
import datetime as dt

import pytest

from memvault.api import Vault
from memvault.cli.parser import build_parser
from memvault.mcp.tools import ENGINE, MAX_HITS, MemoryTools
from memvault.search.option_table import DEFAULTS, OPTIONS
from memvault.search.options import SearchOptions, build_options, options_from
from memvault.vault.errors import UsageError


def _search_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["search"]


def test_every_option_is_a_flag_with_its_help_and_no_default_of_its_own():
    flags = {a.option_strings[0]: a for a in _search_parser()._actions if a.option_strings}
    for o in OPTIONS:
        action = flags[o.flag]
        assert action.help.startswith(o.help) and action.default is None, o.name
        assert tuple(action.choices or ()) == o.choices, o.name
    parsed = _search_parser().parse_args(["q", "--from", "2026-01-02", "--kind", "daily", "--kind", "memory"])
    assert (parsed.date_from, parsed.kind, parsed.limit) == ("2026-01-02", ["daily", "memory"], None)


def test_the_mcp_tool_takes_every_option_with_its_description_and_bounds(layout):
    """Every option but the engine's knobs (issue 47: those are the CLI's and the benchmarks')."""
    from mcp.server.mcpserver.utilities.func_metadata import func_metadata

    schema = func_metadata(MemoryTools(Vault(layout.root)).memory_search).arg_model.model_json_schema()
    props = schema["properties"]
    assert schema["required"] == ["query"]
    for o in OPTIONS:
        assert o.name in ENGINE or props[o.attr]["description"] == o.help, o.name
    assert not ENGINE & set(props)
    limit = next(s for s in props["limit"]["anyOf"] if s.get("type") == "integer")
    assert (limit["minimum"], limit["maximum"], props["limit"]["default"]) == (1, MAX_HITS, DEFAULTS["limit"])
    modes = list(next(o for o in OPTIONS if o.name == "mode").choices)
    assert {"enum": modes, "type": "string"} in props["mode"]["anyOf"]


def test_defaults_and_the_wire_round_trip():
    assert SearchOptions() == build_options() == options_from({})
    assert {o.attr: getattr(SearchOptions(), o.attr) for o in OPTIONS if o.default is not None} == {
        o.attr: o.default for o in OPTIONS if o.default is not None}  # fmt: skip
    given = build_options(
        mode="bm25",
        limit=7,
        per_doc=0,
        date_from="2026-01-01",
        kind=["daily"],
        tag="#x",
        path="./notes/",
        min_similarity="auto",
        decay=30,
        mmr=0.5,
        dates="off",
        fusion="rrf",
    )
    assert options_from(given.to_public()) == given
    assert given.to_public()["from"] == "2026-01-01" and given.date_from == dt.date(2026, 1, 1)
    assert given.filters.kinds == ("daily",) and given.filters.tag == "x" and given.filters.path_prefix == "notes/"


@pytest.mark.parametrize("bad", [{"limit": 0}, {"per_doc": -1}, {"mmr": 1.5}, {"w_bm25": -1}, {"mode": "psychic"},
                                 {"kind": ["daily", "nope"]}, {"min_similarity": 2}, {"decay": 0}, {"path": "../x"},
                                 {"depth": 2_000_000}])  # fmt: skip
def test_out_of_bounds_is_one_line_naming_the_option(bad):
    with pytest.raises(UsageError) as caught:
        build_options(**bad)
    (name, value), said = next(iter(bad.items())), str(caught.value)
    assert "\n" not in said and (name.replace("_", "-") in said or name in said or repr(value) in said), said
