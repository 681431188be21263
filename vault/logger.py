"""The `memvault` logger, for the library's one-line reports (a rebuilt store, a changed model, a note that
could not be read), with `logging` imported at the first report: `logging`, with the traceback and string
modules it imports, cost a cold search 7.5 ms here, and a search with nothing to report never logs.
`memvault.cli` attaches its handler as `logging` is first imported."""

from __future__ import annotations

from typing import Any


class _Logger:
    def __getattr__(self, name: str) -> Any:
        import logging

        return getattr(logging.getLogger("memvault"), name)


log: Any = _Logger()
