"""The typed messages every front door speaks: one request and one reply type per verb.

A request is validated once, when it is built (`__post_init__` runs `check`),
whether the CLI, the Python API or a socket line built it; `from_json` adds
the type checks a JSON object needs, so a daemon never sees an unchecked
field. Replies travel as the same dataclasses' JSON, so the client rebuilds
exactly what the verb returned.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, ClassVar, Self, Union

from memvault.vault.errors import MemvaultError, UsageError

REGISTRY: dict[str, type[Request]] = {}


def _matches(value: Any, hint: Any) -> bool:
    """Does a JSON value fit a field's annotation (str, int, float, bool, None, list[...], dict, unions, Any)?"""
    origin = typing.get_origin(hint)
    if hint is Any:
        return True
    if origin in (Union, types.UnionType):
        return any(_matches(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _type_name(hint: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "an object"}
    if typing.get_origin(hint) is list:
        return "a list of " + _type_name(typing.get_args(hint)[0]).split(" ", 1)[1] + "s"
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return _type_name(args[0]) if args else names.get(hint, getattr(hint, "__name__", str(hint)))


class Message:
    """A frozen dataclass that turns into a JSON object and back, checking each field's type."""

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        hints = typing.get_type_hints(cls)
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.name not in obj:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise UsageError(f'"{f.name}" is required')
                continue
            value = obj[f.name]
            if not _matches(value, hints[f.name]):
                raise UsageError(f'"{f.name}" must be {_type_name(hints[f.name])}, not {type(value).__name__}')
            values[f.name] = value
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    def notes(self) -> list[str]:
        """Lines a person should see beside the reply, whatever its form (a CLI door prints them on
        stderr): what the verb found and fixed on its way."""
        return []


class Request(Message):
    """One verb's arguments. `op` names it on the socket, `reply` is the type it answers with, and
    `timeout` is how long a client waits for the daemon's answer. A request that `writes` notes goes
    with an id, so it takes effect once even when the daemon dies before its reply
    (`memvault.daemon.journal`)."""

    op: ClassVar[str]
    reply: ClassVar[type[Any]]
    timeout: ClassVar[float] = 120.0  # (`memvault.daemon.connection.REPLY_TIMEOUT_S`, a light client's)
    writes: ClassVar[bool] = False

    def __init_subclass__(
        cls,
        op: str | None = None,
        reply: type[Any] | None = None,
        timeout: float | None = None,
        writes: bool | None = None,
        **kwargs: Any,
    ) -> None:
        """`class Forget(Request, op="forget", reply=Moved, writes=True)`: the op a request answers to, registered."""
        super().__init_subclass__(**kwargs)
        if op is not None:
            cls.op, cls.reply = op, reply  # type: ignore[assignment]
            REGISTRY[op] = cls
        if timeout is not None:
            cls.timeout = timeout
        if writes is not None:
            cls.writes = writes

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse bad arguments with one line; runs wherever the request is built."""

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, **super().to_json()}

    def reply_json(self, reply: Any) -> dict[str, Any]:
        """The reply's wire form (a search echoes its id)."""
        return reply.to_json()


def arg(help: str, default: Any = dataclasses.MISSING) -> Any:
    """A request field with its help: the generic doors show it as the CLI flag's help and the MCP
    parameter's description."""
    return dataclasses.field(default=default, metadata={"help": help})


def offered(cls: type[Request]) -> list[dataclasses.Field[Any]]:
    """The request's fields a generic door offers: not those only a hand-made caller gives (`"door": False`)."""
    return [f for f in dataclasses.fields(cls) if f.metadata.get("door", True)]  # type: ignore[arg-type]


def summary(cls: type) -> str:
    """The first sentence of a class's docstring: a command's help line, a tool's title."""
    return " ".join((cls.__doc__ or cls.__name__).split("\n\n")[0].split()).rstrip(".")


def error_json(exc: MemvaultError) -> dict[str, Any]:
    """An error reply carries the exit code and the error's class, so a client raises it as if it had run
    the verb itself (`error_from_json`)."""
    kind = f"{type(exc).__module__}:{type(exc).__qualname__}"
    return {"ok": False, "error": str(exc), "exit_code": exc.exit_code, "error_type": kind}


def error_from_json(reply: dict[str, Any], fallback: type[MemvaultError]) -> MemvaultError:
    """The error a daemon answered, of the class it was raised as there (one of memvault's own, found by its
    module and name), else `fallback`; its message and exit code as they were."""
    import importlib

    message, code = str(reply.get("error") or "the daemon refused the request"), reply.get("exit_code")
    module, _, name = str(reply.get("error_type") or "").partition(":")
    found: Any = None
    if module.startswith("memvault.") and name and "." not in name:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            found = None
    cls = found if isinstance(found, type) and issubclass(found, MemvaultError) else fallback
    exc = cls.__new__(cls)  # its own constructor may take more than a message: the message alone is what travels
    Exception.__init__(exc, message)
    if isinstance(code, int) and not isinstance(code, bool):
        exc.exit_code = code
    return exc
