"""The embedding cache in figures and cleared (issue 48, seed 003): `status` and `cache show` count its
vectors and bytes, `cache clear` forgets them (the next index embeds the texts again, and search still
finds them), and a vector unused for `MAX_AGE_DAYS` goes at the next write."""

from __future__ import annotations

import json
import sqlite3
import time

import numpy as np

from memvault.indexer.embed_cache import MAX_AGE_DAYS, EmbedCache
from tests.reliability.conftest import HASH_ENV


def test_status_counts_it_clear_empties_it_and_search_still_answers(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    assert cli("remember", "The staging database listens on port 6543", env=HASH_ENV).returncode == 0
    assert cli("index", env=HASH_ENV).returncode == 0
    figures = json.loads(cli("status", "--json", env=HASH_ENV).stdout)["embedding_cache"]
    assert figures["vectors"] >= 1 and figures["bytes"] > 0 and figures["max_age_days"] == MAX_AGE_DAYS
    shown = json.loads(cli("cache", "show", "--json", env=HASH_ENV).stdout)
    assert shown["vectors"] == figures["vectors"] and shown["cleared"] is None
    cleared = json.loads(cli("cache", "clear", "--json", env=HASH_ENV).stdout)
    assert cleared["cleared"] == figures["vectors"] and cleared["vectors"] == 0
    found = cli("search", "staging database port", "--mode", "vector", env=HASH_ENV)
    assert "6543" in found.stdout  # the store keeps the vectors: the cache only saves work
    refused = cli("cache", "empty", env=HASH_ENV)
    assert refused.returncode == 2 and "show and clear" in refused.stderr


def test_a_vector_unused_for_the_age_limit_goes_at_the_next_write(tmp_path):
    cache = EmbedCache(tmp_path / "embeddings.sqlite")
    cache.put("m", {"old": np.ones(4, dtype=np.float32), "kept": np.ones(4, dtype=np.float32)})
    assert cache.db is not None
    long_ago = time.time() - (MAX_AGE_DAYS + 1) * 86400
    cache.db.execute("UPDATE embed_cache SET used=? WHERE content_hash='old'", (long_ago,))
    cache.put("m", {"new": np.ones(4, dtype=np.float32)})
    assert set(cache.get("m", ["old", "kept", "new"], touch=False)) == {"kept", "new"}
    cache.close()
    rows = sqlite3.connect(tmp_path / "embeddings.sqlite").execute("SELECT COUNT(*) FROM embed_cache").fetchone()
    assert rows == (2,)
