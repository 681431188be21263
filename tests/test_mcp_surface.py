"""Issue 47, a clean tool surface, through `memvault mcp` and the MCP SDK's own client: every parameter
described (a search option in its one declaration's words), no engine knobs in memory_search, a schema
violation refused in one line naming the field and what it takes, memory_restore undoing a forget,
an honest `more` from memory_get, read-only annotations that follow the verbs' own `writes`, and an
entry with a blank line in it one unit to search as it is one entry to list."""

from __future__ import annotations

import json

from mcp.client.session import ClientSession

from memvault.search.option_table import BY_ATTR
from memvault.verbs import verb
from tests.mcp_client import run_session

ENGINE = {"rrf_k", "w_vector", "w_bm25", "depth", "fusion", "threshold"}
# what each tool runs, as its docstring says: whether it writes is the verbs' to say
RUNS = {"memory_search": ["search"], "memory_get": ["get"], "memory_save": ["note", "remember"],
        "memory_forget": ["forget"], "memory_restore": ["restore"], "memory_correct": ["correct"],
        "memory_extract": ["extract"], "memory_list": ["list"], "memory_context": ["context"],
        "memory_status": ["status", "overview"], "memory_sections": ["sections"], "memory_trash": ["trash"],
        "memory_summaries": ["summaries"]}  # fmt: skip
# one bad argument per tool, and the one line that refuses it
BAD = [
    ("memory_search", {"query": "x", "limit": "ten"}, "limit: must be an integer from 1 to 50 (got 'ten')"),
    ("memory_search", {"query": "x", "mode": "psychic"},
     "mode: must be 'hybrid', 'bm25', 'vector' or 'substring' (got 'psychic')"),
    ("memory_search", {"query": "x", "rrf_k": 60}, "rrf_k: not an argument of memory_search (it takes query, "),
    ("memory_get", {"path": "memory", "scope": "everywhere"}, "scope: must be 'project' or 'user' (got 'everywhere')"),
    ("memory_save", {"text": "Likes tea", "tags": "preference"}, "tags: must be a list of strings (got 'preference')"),
    ("memory_forget", {"key": "k", "scope": 3}, "scope: must be 'project' or 'user' (got 3)"),
    ("memory_restore", {}, "id: required, a string"),
    ("memory_correct", {"key": "k"}, "text: required, a string"),
    ("memory_extract", {"messages": "hello"}, "messages: must be a list of objects (got 'hello')"),
    ("memory_list", {"limit": 0}, "limit: must be an integer from 1 to 200 (got 0)"),
    ("memory_context", {"budget": 10}, "budget: must be an integer from 200 to 20,000 (got 10)"),
    ("memory_status", {"verbose": True}, "verbose: not an argument of memory_status (it takes none)"),
    ("memory_sections", {"scope": "all"}, "scope: must be 'project' or 'user' (got 'all')"),
    ("memory_summaries", {"count": "many"}, "count: must be an integer from 1 to 1,000 (got 'many')"),
    ("memory_trash", {"scope": None}, "scope: must be 'project' or 'user' (got None)"),
]  # fmt: skip


def _data(result) -> dict:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def _schemas(session: ClientSession) -> None:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == set(RUNS)
    for name, tool in tools.items():
        for param, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), (name, param)  # an agent reads nothing else before it calls
    search = tools["memory_search"].input_schema["properties"]
    assert not ENGINE & set(search), ENGINE & set(search)
    assert {"query", "limit", "mode", "scope", "section", "tag", "date_from", "date_to"} <= set(search)
    for param, prop in search.items():  # a search option in the words of its one declaration
        if param in BY_ATTR:
            assert prop["description"] == BY_ATTR[param].help, param
    for name, tool in tools.items():
        writes = any(verb(op)[0].writes for op in RUNS[name])
        hints = tool.annotations
        assert hints.read_only_hint is (not writes), name
        assert hints.idempotent_hint is (not writes or name == "memory_save"), name
        assert hints.destructive_hint is (name == "memory_forget"), name
    assert tools["memory_summaries"].annotations.read_only_hint is True
    restore = tools["memory_restore"].annotations
    assert (restore.read_only_hint, restore.idempotent_hint, restore.destructive_hint) == (False, False, False)
    for name, args, line in BAD:
        result = await session.call_tool(name, args)
        said = result.content[0].text
        assert result.is_error and "\n" not in said and said.startswith(line), (name, said)
    fine = await session.call_tool("memory_search", {"query": "x", "limit": 50, "mode": "bm25"})
    assert not fine.is_error  # the server goes on serving, and the bounds it states are the ones it keeps


def test_every_parameter_described_no_engine_knobs_one_line_refusals(layout, user_root, cli):
    assert cli("init", "--lang", "en").returncode == 0
    try:
        run_session(layout, user_root, _schemas)
    finally:
        cli("daemon", "stop")


async def _restore_and_read(session: ClientSession) -> None:
    saved = _data(await session.call_tool("memory_save", {"text": "The release train leaves on Thursdays",
                                                          "type": "config", "key": "release-day"}))  # fmt: skip
    assert saved["status"] == "added"
    forgot = _data(await session.call_tool("memory_forget", {"key": "release-day"}))
    assert forgot["scope"] == "project" and forgot["trash_id"]
    query = {"query": "release train", "mode": "bm25"}
    assert _data(await session.call_tool("memory_search", query))["hits"] == []
    back = _data(await session.call_tool("memory_restore", {"id": forgot["trash_id"]}))
    assert back == {"restored": forgot["removed"], "exact": True, "count": 1, "scope": "project",
                    "summaries_unstruck": []}  # fmt: skip
    hits = _data(await session.call_tool("memory_search", query))["hits"]
    assert hits and hits[0]["key"] == "release-day"  # searchable again, in the same session
    again = await session.call_tool("memory_restore", {"id": forgot["trash_id"]})
    said = again.content[0].text
    assert again.is_error and "\n" not in said and "memory_trash lists" in said

    # a read the caps cut says so, and where to go on, whether the end was asked for or not
    for asked in ({"path": "notes/long.md"}, {"path": "notes/long.md", "end_line": 1000},
                  {"path": "notes/long.md", "section": "Log"}):  # fmt: skip
        start, lines = asked.get("start_line", 1), []
        while True:
            got = _data(await session.call_tool("memory_get", {**asked, "start_line": start}))
            lines += got["text"].split("\n")
            if not got["more"]:
                assert got["next_start_line"] is None
                break
            assert got["next_start_line"] == int(got["source"].rsplit("-L", 1)[1]) + 1
            start = got["next_start_line"]
        want = [f"line {n:04d}" for n in range(1, 997 if "end_line" in asked else 1001)]  # line 0001 is line 5
        assert [x for x in lines if x.startswith("line ")] == want, asked
    wide = _data(await session.call_tool("memory_get", {"path": "notes/wide.md"}))
    assert wide["more"] and len(wide["text"]) <= 20_000 and wide["text"].endswith("x" * 99)  # whole lines only
    whole = _data(await session.call_tool("memory_get", {"path": "notes/long.md", "start_line": 3, "end_line": 9}))
    assert not whole["more"] and whole["next_start_line"] is None  # all it asked for, though the note goes on

    # an entry with a blank line in it: one entry to list, one unit to search, the same lines
    text = "We chose Postgres for the ledger.\n\nBecause its JSON columns fit the audit trail."
    assert _data(await session.call_tool("memory_save", {"text": text, "type": "architecture", "key": "ledger-db"}))
    listed = _data(await session.call_tool("memory_list", {"key": "ledger-db"}))["entries"]
    assert len(listed) == 1
    found = _data(await session.call_tool("memory_search", {"query": "JSON columns audit trail", "mode": "bm25"}))
    hit = found["hits"][0]
    assert (hit["source"], hit["unit"], hit["key"]) == (listed[0]["source"], "entry", "ledger-db")
    assert "Postgres" in hit["snippet"] or "JSON" in hit["snippet"]


def test_restore_undoes_a_forget_and_reads_say_when_there_is_more(layout, user_root, cli):
    assert cli("init", "--lang", "en").returncode == 0
    notes = layout.root / "notes"
    notes.mkdir()
    body = "\n".join(f"line {n:04d}" for n in range(1, 1001))
    (notes / "long.md").write_text(f"# Long\n\n## Log\n\n{body}\n\n## After\n\ntail\n", encoding="utf-8")
    (notes / "wide.md").write_text("\n".join("x" * 99 for _ in range(300)) + "\n", encoding="utf-8")
    try:
        run_session(layout, user_root, _restore_and_read)
    finally:
        cli("daemon", "stop")
