"""`python -m bench tokens [--sets cmrc,xquad]`: the tokens of every query and document, cut on
jieba's words read from the prepared copy (`indexer.cjkwords`, what a search process uses) and on
the whole dictionary loaded (what jieba does), compared text by text in every tokenizer variant."""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench.datasets import SETS


def _cutters() -> tuple[Any, Any]:
    from memvault.indexer.cjkwords import StoredWords, _store_path, import_jieba, load_tokenizer

    load_tokenizer()  # makes the copy when this machine has none
    jieba = import_jieba()
    whole = jieba.Tokenizer()
    whole.initialize()
    stored = jieba.Tokenizer()
    words = StoredWords(_store_path(jieba), lambda: whole.FREQ, most=10**12)  # never switches to the whole
    stored.FREQ, stored.total, stored.initialized = words, words.total, True
    return whole, stored


def _texts(names: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name in names:
        texts: list[str] = []
        seen: set[str] = set()
        for unit in SETS[name]():
            texts.extend(q[1] for q in unit.queries)
            for source, _ in unit.files:
                if source not in seen:
                    seen.add(source)
                    texts.append(source.read_text(encoding="utf-8"))
        out[name] = texts
    return out


def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench tokens")
    parser.add_argument("--sets", default="cmrc,xquad")
    args = parser.parse_args(argv)
    from memvault.indexer import tokenizer as tok

    whole, stored = _cutters()
    rows = []
    for name, texts in _texts(args.sets.split(",")).items():
        for variant in tok.VARIANTS:
            cut = tok.Tokenizer.named(variant)
            differ = tokens = 0
            timings = {}
            for label, cutter in (("whole", whole), ("stored", stored)):
                tok._jieba = cutter
                start = time.perf_counter()
                cut_all = [cut(t) for t in texts]
                timings[label] = time.perf_counter() - start
                if label == "whole":
                    reference = cut_all
                else:
                    differ = sum(a != b for a, b in zip(reference, cut_all, strict=True))
                    tokens = sum(map(len, reference))
            rows.append({"set": name, "variant": variant, "texts": len(texts), "tokens": tokens, "differ": differ,
                         "whole_s": round(timings["whole"], 2), "stored_s": round(timings["stored"], 2)})  # fmt: skip
    tok._jieba = None
    return {"rows": rows}


def table(report: dict[str, Any]) -> str:
    lines = ["| set | variant | texts | tokens | texts that differ | whole s | stored s |", "|---|" * 7]
    for r in report["rows"]:
        lines.append(f"| {r['set']} | {r['variant']} | {r['texts']} | {r['tokens']} | {r['differ']} | "
                     f"{r['whole_s']} | {r['stored_s']} |")  # fmt: skip
    return "\n".join(lines)
