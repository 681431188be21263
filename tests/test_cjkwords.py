"""jieba on the prepared copy of its words (`indexer.cjkwords`): the same tokens as jieba with its whole
dictionary, a copy written once and read by the next process, and a copy that is torn or missing
costing only the time it saved. (`python -m bench tokens` checks every text of the shared sets.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from memvault.indexer import cjkwords, tokenizer

TEXTS = [
    "北京大学的向量数据库部署在哪里？我们昨天讨论了预算。",
    "我们周五部署新版本，回滚方案写在运维手册里。",
    "中华人民共和国成立于一九四九年，首都是北京。",
    "他来到了网易杭研大厦，小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
    "deploy 服务器 with カタカナ and 한국어 mixed in",
]

# one process cuts the texts and says whether it read the copy, how many words it looked up, and whether
# it loaded the whole dictionary
PROBE = """
import json, sys
from memvault.indexer import tokenizer
cut = [tokenizer.DEFAULT(t) for t in json.loads(sys.argv[1])]
words = tokenizer._jieba.FREQ
print(json.dumps({"cut": cut, "stored": type(words).__name__ == "StoredWords",
                  "whole": getattr(words, "_whole", None) is not None}))
"""


def _probe(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(TEXTS)], env=env, capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    return json.loads(out.stdout)


def test_the_copy_gives_jiebas_tokens_and_is_written_once_for_the_next_process(tmp_path):

    env = {**os.environ, "MEMVAULT_CACHE": str(tmp_path / "cache")}
    first = _probe(env)  # no copy yet: the whole dictionary, and the copy written
    (copy,) = (tmp_path / "cache").glob("words-*.sqlite")
    assert not first["stored"] and copy.stat().st_size > 1_000_000
    second = _probe(env)
    assert second["stored"] and not second["whole"] and second["cut"] == first["cut"]
    assert "北京大学" in second["cut"][0] and "deploy" in second["cut"][4]

    copy.write_bytes(copy.read_bytes()[:4096])  # torn: not trusted, the whole dictionary again, a new copy
    torn = _probe(env)
    assert not torn["stored"] and torn["cut"] == first["cut"]
    assert _probe(env)["stored"]

    (tmp_path / "not-a-folder").write_text("x")  # a cache that cannot be written costs only the time
    unwritable = _probe({**env, "MEMVAULT_CACHE": str(tmp_path / "not-a-folder")})
    assert not unwritable["stored"] and unwritable["cut"] == first["cut"]


def test_a_process_that_looks_up_many_words_switches_to_the_whole_dictionary(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMVAULT_CACHE", str(tmp_path))
    monkeypatch.setattr(tokenizer, "_jieba", None)
    tokenizer.DEFAULT(TEXTS[0])  # writes the copy
    monkeypatch.setattr(tokenizer, "_jieba", None)
    monkeypatch.setattr(cjkwords, "LOOKUPS_BEFORE_LOADING", 40)
    expected = []
    cutter = cjkwords.load_tokenizer()
    words = cutter.FREQ
    assert isinstance(words, cjkwords.StoredWords)
    monkeypatch.setattr(tokenizer, "_jieba", cutter)
    for text in TEXTS:
        expected.append(tokenizer.DEFAULT(text))
    assert words._whole is not None  # more than 40 words looked up: the whole dictionary now
    whole = cjkwords.import_jieba().Tokenizer()
    whole.initialize()
    monkeypatch.setattr(tokenizer, "_jieba", whole)
    assert [tokenizer.DEFAULT(t) for t in TEXTS] == expected


def test_importing_jieba_leaves_pkg_resources_alone():
    out = subprocess.run([sys.executable, "-c", "import sys\nfrom memvault.indexer.cjkwords import import_jieba\n"
                          "import_jieba()\nprint('pkg_resources' in sys.modules)"],
                         capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    assert out.stdout.strip() == "False"


def test_jieba_imports_tempfile_only_when_it_uses_it():
    """jieba's `import tempfile` costs a Chinese question's start 5.9 ms for a cache file the copy of its
    words replaces: its stand-in imports the real module at jieba's first use, and nobody else sees it."""
    probe = (
        "import sys\nfrom memvault.indexer.cjkwords import import_jieba\njieba = import_jieba()\n"
        "print('tempfile' in sys.modules, 'shutil' in sys.modules)\n"
        "where = jieba.tempfile.gettempdir()\nimport tempfile\n"
        "print(type(tempfile).__name__, where == tempfile.gettempdir(), sys.modules['tempfile'] is tempfile)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "False", "module", "True", "True"], out.stdout
