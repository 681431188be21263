"""Arguments that do not fit a tool's input schema, refused in one line that names the field and what
it takes, read off the schema the agent was shown: the SDK's own refusal is pydantic's multi-line
report (a line per member of a union, a link to pydantic's docs), which costs an agent context and
says less. An argument the tool does not take is refused too: the SDK would drop it unsaid, and an
agent that set it would believe it acted.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

SHOWN = 40  # characters of a rejected value the line repeats


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _quoted(values: list[Any]) -> str:
    shown = [repr(v) if isinstance(v, str) else str(v).lower() for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def takes(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    """What a property of a JSON schema takes, in words: "an integer from 1 to 50", "'hybrid' or 'bm25'"."""
    if "$ref" in prop:
        prop = defs.get(prop["$ref"].rsplit("/", 1)[-1], {})
    if "anyOf" in prop:
        # null is left unsaid: it stands for the default (or, for `min_similarity`, no floor), never the fix
        words = [takes(p, defs) for p in prop["anyOf"] if p.get("type") != "null"]
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
    if "enum" in prop or "const" in prop:
        return _quoted(prop.get("enum") or [prop["const"]])
    kind = prop.get("type")
    if kind in ("integer", "number"):
        name = "an integer" if kind == "integer" else "a number"
        low, high = prop.get("minimum"), prop.get("maximum")
        if low is not None and high is not None:
            return f"{name} from {_number(low)} to {_number(high)}"
        if low is not None:
            return f"{name} of at least {_number(low)}"
        if high is not None:
            return f"{name} of at most {_number(high)}"
        return name
    if kind == "array":
        item = takes(prop.get("items", {}), defs)
        plural = item.split(" ", 1)[1] + "s" if item.startswith(("a ", "an ")) else f"values {item}"
        return f"a list of {plural}"
    return {"string": "a string", "boolean": "true or false", "object": "an object"}.get(str(kind), "a JSON value")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def one_line(schema: dict[str, Any], error: ValidationError) -> str:
    """Each field the arguments got wrong, `field: must be WHAT (got VALUE)`, in one line."""
    props, defs = schema.get("properties", {}), schema.get("$defs", {})
    said: dict[str, str] = {}
    for e in error.errors():
        field = str(e["loc"][0]) if e["loc"] else "arguments"
        if field in said:
            continue  # a union's members each report the same value: one line says it
        prop = props.get(field)
        if prop is None:
            said[field] = f"{field}: {e['msg']}"
        elif e["type"] == "missing":
            said[field] = f"{field}: required, {takes(prop, defs)}"
        else:
            said[field] = f"{field}: must be {takes(prop, defs)} (got {_shown(e['input'])})"
    return "; ".join(said.values())


def unknown(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The line refusing arguments the tool does not take, or None when it takes them all."""
    props = list(schema.get("properties", {}))
    extra = [k for k in arguments if k not in props]
    if not extra:
        return None
    there = f"it takes {', '.join(props)}" if props else "it takes none"
    return f"{', '.join(extra)}: not an argument of {tool} ({there})"


class Server(MCPServer):
    """The SDK's server, with a schema violation refused in one line (`one_line`, `unknown`)."""

    _schemas: dict[str, dict[str, Any]] | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if self._schemas is None:
            self._schemas = {t.name: t.input_schema for t in await self.list_tools()}
        schema = self._schemas.get(name)
        if schema is not None and (refused := unknown(name, schema, arguments)):
            raise ToolError(refused)
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            if schema is None or not isinstance(exc.__cause__, ValidationError):
                raise
            raise ToolError(one_line(schema, exc.__cause__)) from exc.__cause__
