"""An entry forgotten from a day that retention then moved to the trash: `restore` brings the day back
as it was (title, frontmatter, summary) with the entry at its line, and the catalog keeps the summary."""

from __future__ import annotations

import json


def test_restore_after_retention_brings_back_the_whole_day(layout, cli):
    assert cli("init", "--lang", "en").returncode == 0
    day, rel = "2024-03-05", "daily/2024-03-05.md"
    (layout.root / rel).write_text(
        f"---\ndate: {day}\nindex: a quiet Tuesday\n---\n# {day}\n\n## Conversations\n\n"
        "- first thing that day\n- second thing that day\n",
        encoding="utf-8",
    )
    before = (layout.root / rel).read_text(encoding="utf-8")
    forgot = cli("forget", "--match", "first thing")
    assert forgot.returncode == 0, forgot.stderr
    ident = forgot.stdout.split("trash as ")[1].split()[0]
    assert cli("retention", "--apply", "--days", "30").returncode == 0
    assert not (layout.root / rel).exists()
    restored = cli("restore", ident)
    assert restored.returncode == 0, restored.stderr
    assert (layout.root / rel).read_text(encoding="utf-8") == before  # byte for byte: the day as it was
    catalog = json.loads(cli("catalog", "2024", "--json").stdout)["years"]["2024"]
    assert {"date": day, "summary": "a quiet Tuesday"} in catalog
