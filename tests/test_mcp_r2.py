"""MCP tools refuse numbers out of range: bounds in the tool's input schema (what an agent's host reads),
checked again where the verb runs. `memory_context` used to take a negative budget (and one past its
cap) and quietly answer with another."""

from __future__ import annotations

import anyio
import pytest

from memvault.api import Vault
from memvault.vault.errors import UsageError
from memvault.verbs.context import render

MIN_BUDGET, MAX_BUDGET = 200, 20_000  # the least a prompt block holds, the most an agent may ask for

OUT_OF_RANGE = [
    ("memory_context", {"budget": -5}), ("memory_context", {"budget": 0}), ("memory_context", {"budget": 199}),
    ("memory_context", {"budget": MAX_BUDGET + 1}), ("memory_get", {"path": "memory", "start_line": 0}),
    ("memory_get", {"path": "memory", "end_line": -1}), ("memory_summaries", {"count": 0}),
    ("memory_summaries", {"count": 1001}), ("memory_list", {"offset": -1}),
]  # fmt: skip


def test_numbers_out_of_range_are_refused_by_the_schema_and_the_verb(layout, cli):
    from mcp.server.mcpserver.exceptions import ToolError

    from memvault.mcp.server import build_server

    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "--type", "preference", "Prefers short answers").returncode == 0
    server = build_server(Vault(layout.root))

    async def calls() -> tuple[dict, list[str]]:
        tools = {t.name: t.input_schema["properties"] for t in await server.list_tools()}
        said = []
        for name, args in OUT_OF_RANGE:
            with pytest.raises(ToolError) as caught:
                await server.call_tool(name, args)
            said.append(str(caught.value))
        fine = await server.call_tool("memory_context", {"budget": MIN_BUDGET})
        assert not fine.is_error and "Prefers short answers" in fine.structured_content["text"]
        return tools, said

    tools, said = anyio.run(calls)
    for (name, args), why in zip(OUT_OF_RANGE, said, strict=True):  # each names what is wrong
        assert next(iter(args.keys() - {"path"})) in why or (name == "memory_get" and "1-based" in why), why
        assert name != "memory_get" or "\n" not in why  # memvault's own line, which says more than the SDK's

    def bounds(prop: dict) -> tuple:
        kinds = prop.get("anyOf", [prop])
        number = next(k for k in kinds if k.get("type") == "integer")
        return number.get("minimum", prop.get("minimum")), number.get("maximum", prop.get("maximum"))

    assert bounds(tools["memory_context"]["budget"]) == (MIN_BUDGET, MAX_BUDGET)
    assert bounds(tools["memory_get"]["start_line"]) == bounds(tools["memory_get"]["end_line"]) == (1, None)
    assert bounds(tools["memory_summaries"]["count"]) == (1, 1000)
    for budget in (-5, MIN_BUDGET - 1):  # the verb's own check, for every door
        with pytest.raises(UsageError) as caught:
            render([], budget)
        assert "\n" not in str(caught.value) and str(budget) in str(caught.value)
