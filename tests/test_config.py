"""Settings: arguments over the environment over `<vault>/memvault.toml` over the defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.indexer.config import IndexConfig
from memvault.vault.config import CONFIG_FILE, Settings, env, load_settings
from memvault.vault.errors import UsageError

ENV = ("MEMVAULT_EMBEDDER", "MEMVAULT_TOKENIZER", "MEMVAULT_QDRANT_URL", "QDRANT_API_KEY", "MEMVAULT_COLLECTION",
       "MEMVAULT_CACHE", "XDG_CACHE_HOME")  # fmt: skip


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def _file(root: Path, text: str) -> Path:
    path = root / CONFIG_FILE
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert load_settings() == load_settings(tmp_path) == Settings()
    settings = load_settings()
    assert (settings.embedder, settings.tokenizer, settings.qdrant_url, settings.qdrant_api_key) == (None,) * 4
    assert (settings.collection, settings.debounce, settings.rescan) == ("memvault", 1.5, 300.0)
    assert settings.cache_dir == tmp_path / "home" / ".cache" / "memvault"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert load_settings().cache_dir == tmp_path / "xdg" / "memvault"
    monkeypatch.setenv("MEMVAULT_CACHE", str(tmp_path / "mine"))
    assert load_settings().cache_dir == tmp_path / "mine"


def test_file_over_defaults_env_over_file_override_over_env(tmp_path, monkeypatch):
    _file(tmp_path, 'embedder = "hash-384"\ntokenizer = "lcut"\ncollection = "notes"\ndebounce = 2\nrescan = 60.5\n')
    settings = load_settings(tmp_path)
    assert (settings.embedder, settings.tokenizer, settings.collection) == ("hash-384", "lcut", "notes")
    assert (settings.debounce, settings.rescan) == (2.0, 60.5) and isinstance(settings.debounce, float)
    assert load_settings() == Settings()  # no root: no file
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "use-m3")
    monkeypatch.setenv("MEMVAULT_COLLECTION", "")  # empty is unset
    settings = load_settings(tmp_path)
    assert (settings.embedder, settings.tokenizer, settings.collection) == ("use-m3", "lcut", "notes")
    settings = load_settings(tmp_path, embedder="e5-small-q4", tokenizer=None, debounce=0.1)
    assert (settings.embedder, settings.tokenizer, settings.debounce) == ("e5-small-q4", "lcut", 0.1)
    assert load_settings(tmp_path, embedder="").embedder == "use-m3"  # "" overrides nothing, as `or` did


def test_api_key_only_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("QDRANT_API_KEY", "secret")
    assert load_settings(tmp_path).qdrant_api_key == "secret"
    _file(tmp_path, 'qdrant_api_key = "in-a-file"\n')
    with pytest.raises(UsageError, match="qdrant_api_key"):
        load_settings(tmp_path)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('embeder = "hash-384"\n', "embeder"),
        ("embedder = 384\n", "embedder"),
        ('debounce = "soon"\n', "debounce"),
        ("rescan = true\n", "rescan"),
        ("rescan = -1\n", "rescan"),
        ('[search]\nmode = "bm25"\n', "search"),
    ],
)
def test_bad_key_or_type_is_one_line_naming_file_and_key(tmp_path, text, key):
    path = _file(tmp_path, text)
    with pytest.raises(UsageError) as caught:
        load_settings(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: ") and key in message


@pytest.mark.parametrize("data", [b'embedder = "hash-384\n', b"embedder hash\n", b'embedder = "\xff"\n'])
def test_syntax_error_is_one_line_naming_the_file(tmp_path, data):
    path = tmp_path / CONFIG_FILE
    path.write_bytes(data)
    with pytest.raises(UsageError) as caught:
        load_settings(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: not valid TOML")


def test_env_reads_unset_and_empty_as_none(monkeypatch):
    monkeypatch.setenv("MEMVAULT_CRASH_AT", "")
    assert env("MEMVAULT_CRASH_AT") is None and env("MEMVAULT_NO_SUCH_VARIABLE") is None
    monkeypatch.setenv("MEMVAULT_CRASH_AT", "after-embed:2")
    assert env("MEMVAULT_CRASH_AT") == "after-embed:2"


def test_index_config_reads_the_settings(tmp_path, monkeypatch):
    _file(tmp_path, 'embedder = "hash-384"\nqdrant_url = "http://localhost:6333"\ncollection = "notes"\n')
    monkeypatch.setenv("MEMVAULT_TOKENIZER", "lcut+stop")
    monkeypatch.setenv("QDRANT_API_KEY", "secret")
    config = IndexConfig.from_env(qdrant_url="embedded", root=tmp_path)
    assert config == IndexConfig("hash-384", "embedded", "secret", "notes", "lcut+stop")
    assert IndexConfig.from_env() == IndexConfig(None, None, "secret", "memvault", "lcut+stop")


def test_cli_reads_the_vault_file_and_reports_a_bad_one_in_one_line(layout, cli):
    path = _file(layout.root, 'embedder = "hash-384"\n')
    assert cli("index", "--json").returncode == 0
    assert '"embedder": "hash-384"' in cli("status", "--json").stdout
    path.write_text("debounce = [1]\n")
    bad = cli("index")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and f"{path}: debounce" in bad.stderr
