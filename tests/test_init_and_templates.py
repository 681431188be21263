from __future__ import annotations

from memvault.vault.memory_file import init_vault, list_sections
from memvault.vault.paths import Layout
from memvault.vault.templates import MEMORY_SECTIONS


def test_init_creates_daily_and_memory_with_predefined_sections(layout, cli):
    result = cli("init", env={"LC_ALL": "", "LANG": "zh_CN.UTF-8"})  # the locale's language (issue 29)
    assert result.returncode == 0, result.stderr
    assert layout.daily_dir.is_dir()
    titles = [s.title for s in list_sections(layout)]
    assert titles == [t["zh"] for t in MEMORY_SECTIONS.values()]


def test_init_follows_the_locale_unless_told(tmp_path, cli):
    for locale, lang in (("en_GB.UTF-8", "en"), ("C.UTF-8", "en"), ("", "en"), ("zh_TW.UTF-8", "zh")):
        root = tmp_path / (locale or "unset")
        assert cli("--vault", str(root), "init", env={"LC_ALL": "", "LC_MESSAGES": "", "LANG": locale}).returncode == 0
        assert [s.title for s in list_sections(Layout(root))] == [t[lang] for t in MEMORY_SECTIONS.values()], locale
    told = tmp_path / "told"
    assert cli("--vault", str(told), "init", "--lang", "zh", env={"LANG": "en_US.UTF-8"}).returncode == 0
    assert [s.title for s in list_sections(Layout(told))] == [t["zh"] for t in MEMORY_SECTIONS.values()]


def test_init_english_template(layout):
    init_vault(layout, "en")
    titles = [s.title for s in list_sections(layout)]
    assert titles == [t["en"] for t in MEMORY_SECTIONS.values()]


def test_init_is_idempotent_and_never_overwrites(layout, cli):
    layout.memory_md.write_text("# mine\n\n## Custom\n\n- keep me\n", encoding="utf-8")
    before = layout.memory_md.read_bytes()
    for _ in range(2):
        result = cli("init", "--lang", "en")
        assert result.returncode == 0, result.stderr
    assert layout.memory_md.read_bytes() == before
    assert "already initialised" in result.stdout


def test_unknown_language_is_a_one_line_error(layout, cli):
    result = cli("init", "--lang", "fr")
    assert result.returncode == 2
    assert result.stderr.startswith("memvault: error: argument --lang: invalid choice") and "'fr'" in result.stderr
    assert result.stderr.count("\n") == 1
    assert not layout.memory_md.exists()
