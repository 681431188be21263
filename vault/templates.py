"""The predefined layout of MEMORY.md and of a new daily note, in Chinese and English."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memvault.vault.paths import Layout

LANGS = ("zh", "en")

# save type -> MEMORY.md section title per language (docs/architecture.md, section 4)
MEMORY_SECTIONS: dict[str, dict[str, str]] = {
    "preference": {"zh": "用户偏好", "en": "User Preferences"},
    "architecture": {"zh": "架构决策", "en": "Architecture Decisions"},
    "solution": {"zh": "常见问题解决方案", "en": "Solutions"},
    "discovery": {"zh": "重要技术发现", "en": "Technical Discoveries"},
    "config": {"zh": "系统配置", "en": "Configuration"},
}
DAILY_TYPES = ("conversation", "daily")
SAVE_TYPES = (*MEMORY_SECTIONS, *DAILY_TYPES)
IMPORTED_SECTION = "Imported"  # where an import puts memories without a place of their own

# daily-note section key -> (title, overview counter label) per language
DAILY_SECTIONS: dict[str, dict[str, tuple[str, str]]] = {
    "conversation": {"zh": ("对话记录", "对话"), "en": ("Conversations", "Conversations")},
    "task": {"zh": ("完成任务", "完成任务"), "en": ("Completed Tasks", "Completed tasks")},
    "todo": {"zh": ("待办事项", "待办"), "en": ("Todos", "Todos")},
    "discovery": {"zh": ("重要发现", "发现"), "en": ("Discoveries", "Discoveries")},
}
OVERVIEW = {"zh": "概览", "en": "Overview"}
# a counter line of a daily note's overview, as the template writes it and `daily._bump_counter` counts
_LABELS = "|".join(re.escape(spec[lang][1]) for spec in DAILY_SECTIONS.values() for lang in LANGS)
COUNTER = re.compile(rf"^- (?:{_LABELS})\s*[:：]\s*\d+\s*$")


def memory_template(lang: str) -> str:
    title = "长期记忆" if lang == "zh" else "Long-term Memory"
    sections = "".join(f"## {titles[lang]}\n\n" for titles in MEMORY_SECTIONS.values())
    return f"# {title}\n\n{sections}".rstrip("\n") + "\n"


def daily_template(day: dt.date, lang: str) -> str:
    """A new daily note: frontmatter with its `date` (and, once `summary` sets it, its `index`)."""
    title = f"{day.isoformat()} 工作日志" if lang == "zh" else f"{day.isoformat()} Daily Log"
    sep = "：" if lang == "zh" else ": "
    counters = "".join(f"- {spec[lang][1]}{sep}0\n" for spec in DAILY_SECTIONS.values())
    sections = "".join(f"## {spec[lang][0]}\n\n" for spec in DAILY_SECTIONS.values())
    head = f"---\ndate: {day.isoformat()}\n---\n"
    return f"{head}# {title}\n\n## {OVERVIEW[lang]}\n\n{counters}\n{sections}".rstrip("\n") + "\n"


def locale_lang(environ: dict[str, str] | None = None) -> str:
    """The language of the person's locale, as POSIX finds it (LC_ALL, then LC_MESSAGES, then LANG):
    Chinese for a `zh` locale, else English (a C or unset locale too)."""
    import os

    env = os.environ if environ is None else environ
    chosen = next((env[k] for k in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(k)), "")
    return "zh" if chosen.lower().startswith("zh") else "en"


def detect_lang(text: str | None) -> str:
    """The vault's language, read off MEMORY.md: the template's section names when it uses one set of
    them (Chinese when both), else the script most of its words are in, so a MEMORY.md a person wrote
    in English (`## Notes`) gets English headings from memvault too; an empty one is Chinese, as before."""
    from memvault.vault.cjk import script_of

    def uses(lang: str) -> bool:
        return bool(text) and any(f"## {titles[lang]}" in str(text) for titles in MEMORY_SECTIONS.values())

    if uses("zh") or not (text or "").strip():
        return "zh"
    return "en" if uses("en") or script_of(str(text)) != "cjk" else "zh"


def vault_lang(layout: Layout) -> str:
    """The vault's language, as its MEMORY.md is written; before there is one, the locale's (as `init`)."""
    from memvault.vault.errors import MemvaultError
    from memvault.vault.fileio import read_note

    try:
        return detect_lang(read_note(layout.memory_md, layout=layout).text)
    except (OSError, MemvaultError):  # missing, or refused (its save says why)
        return locale_lang()
