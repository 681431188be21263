"""jieba, started in milliseconds: its word dictionary read from SQLite a word at a time.

jieba cuts with a prefix dictionary of about 500,000 words (`FREQ`), and loading it costs every
process that meets Chinese text 0.7 s from jieba's own cache (1.5 s without), more than the whole
search it serves. Cutting a question looks up a few dozen of those words, so a process reads them
from a prepared copy instead: `words-<jieba version>-<dictionary size>-2.sqlite` in the cache folder
(`$MEMVAULT_CACHE`), written once on a machine by the first process that loads the whole dictionary (about 0.8 s).

The words and their counts are jieba's own, and the cutting is jieba's code on them (a
`jieba.Tokenizer` given this mapping as its `FREQ`), so the tokens are identical by construction.
A process that looks up many words (an indexer cutting a vault) switches to the whole dictionary
after `LOOKUPS_BEFORE_LOADING` misses, where a dict lookup is cheaper than a query.
Anything wrong with the copy (missing, unreadable, another jieba) means the whole dictionary, as
before; the copy is derived data and is rebuilt, never trusted over jieba.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memvault.vault.config import load_settings
from memvault.vault.logger import log

LOOKUPS_BEFORE_LOADING = 20_000  # about 60 ms of queries: then the 0.7 s load pays for itself


def import_jieba() -> Any:
    """`import jieba` without `pkg_resources`, which jieba imports only to open its own data files
    (94 of its 123 ms of import): without it, jieba opens them by path. Its HMM for words missing
    from the dictionary (`jieba.finalseg`, 8.5 of the 11.5 ms left, most of it unmarshalling the
    emission table) is loaded when first used: a run of single characters that is no word, as a
    name (王芳); five of the start-up bench's six Chinese questions never reach it. Its `import tempfile`
    (with shutil and random, 5.9 ms), for its own cache file only, which the copy of its words stands in
    for here, gets a stand-in that imports the real module when jieba first reads a name of it; no other
    module sees the stand-in."""
    if "jieba" in sys.modules:
        return sys.modules["jieba"]
    _lazy("jieba.finalseg")
    had = "pkg_resources" in sys.modules
    saved = sys.modules.get("pkg_resources")
    if not had:
        sys.modules["pkg_resources"] = None  # type: ignore[assignment]  # makes `import pkg_resources` fail
    stand_in = "tempfile" not in sys.modules
    if stand_in:
        sys.modules["tempfile"] = _OnFirstUse("tempfile")
    try:
        import jieba
    finally:
        if not had:
            del sys.modules["pkg_resources"]
        elif saved is not None:
            sys.modules["pkg_resources"] = saved
        if stand_in and isinstance(sys.modules.get("tempfile"), _OnFirstUse):
            del sys.modules["tempfile"]  # the next `import tempfile` anywhere imports the real one
    import logging  # (jieba has imported it)

    jieba.setLogLevel(logging.WARNING)
    return jieba


def _lazy(name: str) -> None:
    """Put a stand-in for a submodule in `sys.modules` that loads the real one when a missing name is
    first asked of it, so `from . import finalseg` in jieba costs nothing until a cut needs it. (The
    standard library's `LazyLoader` loads on any attribute, and importing jieba reads `__spec__`.)"""
    import importlib.machinery
    import importlib.util

    package = importlib.util.find_spec(name.rpartition(".")[0])  # finds jieba without running it
    if name in sys.modules or package is None or not package.submodule_search_locations:
        return
    spec = importlib.machinery.PathFinder.find_spec(name, list(package.submodule_search_locations))
    if spec is None or spec.loader is None:
        return
    sys.modules[name] = _Deferred(name, spec)


class _OnFirstUse(types.ModuleType):
    """Stands in for a top-level module in one importer's namespace: the real module is imported (the usual
    way, into `sys.modules`) when a name of it is first read."""

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        import importlib

        return getattr(importlib.import_module(self.__name__), attr)


class _Deferred(types.ModuleType):
    def __init__(self, name: str, spec: Any) -> None:
        super().__init__(name)
        self.__spec__, self.__path__, self.__package__ = spec, spec.submodule_search_locations or [], name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        import importlib.util

        spec: Any = self.__spec__  # (the package's, given: never None here)
        real = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(real)  # its own `from .prob_emit import ...` finds this stand-in
        self.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")})
        return getattr(real, attr)


def _store_path(jieba: Any) -> Path | None:
    """The copy's file, named for the jieba and the dictionary it was made from."""
    try:
        size = os.path.getsize(os.path.join(os.path.dirname(jieba.__file__), "dict.txt"))
    except OSError:
        return None
    return load_settings().cache_dir / f"words-{jieba.__version__}-{size}-2.sqlite"  # (2: the layout of `write_store`)


class StoredWords:
    """jieba's `FREQ` as jieba reads it (`in`, `[]`, `get`), from the copy, until it has been asked
    so much that the whole dictionary is cheaper."""

    def __init__(self, path: Path, load_whole: Any, most: int | None = None) -> None:
        self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self.total: int = self._conn.execute("SELECT v FROM meta WHERE k = 'total'").fetchone()[0]
        self._seen: dict[str, int | None] = {}
        self._lock = threading.Lock()
        self._load_whole = load_whole
        self._whole: dict[str, int] | None = None
        self._most = LOOKUPS_BEFORE_LOADING if most is None else most

    def get(self, word: str, default: Any = None) -> Any:
        if self._whole is not None:
            return self._whole.get(word, default)
        try:
            found = self._seen[word]
        except KeyError:
            found = self._look_up(word)
        return default if found is None else found

    def _look_up(self, word: str) -> int | None:
        with self._lock:
            if self._whole is not None:
                return self._whole.get(word)
            if len(self._seen) >= self._most:
                self._whole = self._load_whole()
                self._conn.close()
                return self._whole.get(word)
            row = self._conn.execute("SELECT v FROM w WHERE k = ?", (word,)).fetchone()
            self._seen[word] = found = None if row is None else row[0]
            return found

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.get(word) is not None

    def __getitem__(self, word: str) -> int:
        found = self.get(word)
        if found is None:
            raise KeyError(word)
        return found


def _open_store(path: Path, load_whole: Any) -> StoredWords | None:
    try:
        return StoredWords(path, load_whole)
    except (sqlite3.Error, TypeError):  # missing, torn or not ours: the whole dictionary, and a new copy
        return None


def write_store(path: Path, tables: Mapping[str, Iterable[tuple[str, Any]]]) -> None:
    """Key-value tables (`k`, `v`) of a cache file, written beside where it goes, then moved in: a reader
    sees a whole copy or none. jieba's words here, and CC-CEDICT's glosses (`memvault.search.glossary`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # once a machine: not in every process that cuts a question

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode = OFF")
            for name, rows in tables.items():
                conn.execute(f"CREATE TABLE {name} (k TEXT PRIMARY KEY, v NOT NULL) WITHOUT ROWID")
                conn.executemany(f"INSERT INTO {name} VALUES (?, ?)", sorted(rows))
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_tokenizer() -> Any:
    """A `jieba.Tokenizer` ready to cut: on the copy when there is one, else on the whole dictionary,
    writing the copy for the next process (a cache folder that cannot be written only costs that)."""
    jieba = import_jieba()
    path = _store_path(jieba)

    def load_whole() -> dict[str, int]:
        whole = jieba.Tokenizer()
        whole.initialize()
        return whole.FREQ

    cutter = jieba.Tokenizer()
    words = _open_store(path, load_whole) if path is not None and path.is_file() else None
    if words is not None:
        cutter.FREQ, cutter.total, cutter.initialized = words, words.total, True
        return cutter
    cutter.initialize()
    if path is not None:
        try:
            write_store(path, {"w": cutter.FREQ.items(), "meta": [("total", cutter.total)]})
        except (OSError, sqlite3.Error) as exc:
            log.debug("jieba's words not copied to %s: %s", path, exc)
    return cutter
