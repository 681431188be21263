"""A query's words said in the other script, so BM25 can lift the note of the other script the model found.

The model ranks a note written in the other script than the question's below many near-misses in the
question's own (`search.scripts` places it by its rank in its half), and BM25 cannot see it at all: an
English question and its Chinese answer share no word. A dictionary gives the words: CC-CEDICT's
Chinese words for an English word, the likeliest first (`search.glossary.in_chinese`), and a Chinese
word's English glosses (`across`). BM25 over the other script's notes on those words is a third list,
and its standard score, weighed by `w_translated`, is added to the candidates the dense list ranked too
(`lift`): a dictionary says too many things to bring a note in on its own (plain as a third list in
the fusion, it pulled Chinese near-misses into an English LoCoMo question's top 10), but it tells
which of the model's candidates says the question's words. `python -m bench quality`, XQuAD-R, English
questions over English and Chinese sentences: the Chinese answer in the top 10 0.758 -> 0.864, hybrid
nDCG@10 0.764 -> 0.820; cmrc+en50, locomo+zh50 and scifact+zh50 within 0.004 (bench/results).
"""

from __future__ import annotations

import dataclasses

from memvault.indexer.filters import FilterSpec
from memvault.indexer.reading import Reader, own_words_top
from memvault.indexer.tokenizer import DEFAULT as STEMMED
from memvault.search.fusion import RRF_K, Fused, best_first, terms
from memvault.search.glossary import across, in_chinese, whole_words
from memvault.vault.cjk import other_script

PER_WORD = 8  # the Chinese words an English word is given (XQuAD-R: 5 and 10 did no better)
# a question's own words: the statement that answers it says none of them, in either script
QUESTION = "how many much also one two name call kind type use year time first last number amount something anything"
_QUESTION = frozenset(QUESTION.split()) | frozenset(STEMMED(QUESTION))


def other_words(tokens: list[str]) -> list[str]:
    """The query's `tokens` (as the index cut them) said in the other script, each once and none that is
    one of the tokens: `PER_WORD` Chinese words for an English word, a Chinese word's English glosses."""
    said: dict[str, None] = {}
    for token in whole_words(dict.fromkeys(tokens)):
        if token in _QUESTION or (token.isascii() and not token.isalpha()):
            continue
        found = in_chinese(token)[:PER_WORD] if token.isascii() else sorted(across(token))
        said.update((w, None) for w in found if len(w) > 2 or not w.isascii())
    return [w for w in said if w not in tokens and w not in _QUESTION]


def translated_top(
    index: Reader, own: str, tokens: list[str], depth: int, flt: FilterSpec | None
) -> list[tuple[str, float]]:
    """BM25's best `depth` of the other script's notes on the query's words said in that script; none in
    a vault of one script."""
    other = other_script(own)
    if not index.has_script(other):
        return []
    words = other_words(tokens)
    if not words:
        return []
    return own_words_top(index, words, depth, dataclasses.replace(flt or FilterSpec(), script=other))


def lift(
    fused: list[Fused], translated: list[tuple[str, float]], weight: float, fusion: str, k: int = RRF_K
) -> list[Fused]:
    """The fused candidates with the translated list's weighed term (`search.fusion.terms`: a standard
    score, or a reciprocal rank) added to those the dense list ranked too, best first again."""
    if not translated or not weight:
        return fused
    lifts = terms(fusion, weight, [s for _, s in translated], k)
    said = {cid: (rank, score, lifted) for rank, ((cid, score), lifted) in enumerate(zip(translated, lifts,
            strict=True), start=1)}  # fmt: skip
    out = []
    for f in fused:
        if f.chunk_id in said and "vector" in f.ranks:
            rank, score, lifted = said[f.chunk_id]
            f = f._replace(score=f.score + lifted, ranks={**f.ranks, "translated": rank},
                           scores={**f.scores, "translated": score})  # fmt: skip
        out.append(f)
    return best_first(out)
