"""Conversations into notes and proposals: the summary lands in today's note, the user's lasting
statements (never the assistant's) go to the review queue once each with their counts, approval
writes through the guards, and an optional chat-completions extractor is asked over real HTTP."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from memvault.vault.proposals import find_candidates

DATA = json.loads((Path(__file__).parent / "data" / "conversations.json").read_text(encoding="utf-8"))


def _conversation(tmp_path, name: str, body) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path


def _queue(cli) -> list[dict]:
    return json.loads(cli("review", "--json").stdout)["proposals"]


@pytest.mark.parametrize("name", ["en-frontend", "zh-process", "mixed"])
def test_extract_summarises_and_proposes_from_the_user_only(layout, cli, tmp_path, name):
    conv = next(c for c in DATA if c["name"] == name)
    assert cli("init", "--lang", "en").returncode == 0
    path = _conversation(tmp_path, name, conv["messages"])
    done = cli("extract", str(path), "--json")
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    note = layout.daily_note(dt.date.today()).read_text(encoding="utf-8")
    first = " ".join(conv["messages"][0]["content"].split())[:60]
    assert f"Conversation: {len(conv['messages'])} messages" in note and first in note
    assert "- Conversations: 1\n" in note  # the day's counter
    texts = [p["text"] for p in _queue(cli)]
    assert len(texts) == len(conv["expected"]) == len(reply["proposals"])
    for expected in conv["expected"]:
        assert sum(expected.lower() in t.lower() for t in texts) == 1, (expected, texts)
    assistant = " ".join(m["content"] for m in conv["messages"] if m["role"] == "assistant")
    assert not any(t in assistant for t in texts)  # nothing the assistant said is proposed
    again = _conversation(tmp_path, "again", conv["messages"][-2:] + conv["messages"][:1])
    assert cli("extract", str(again)).returncode == 0
    assert len(_queue(cli)) == len(texts)  # seen again: counted, not added
    assert max(p["seen"] for p in _queue(cli)) == 2


def test_approve_and_reject_through_the_save_path(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    conv = next(c for c in DATA if c["name"] == "en-ops")
    assert cli("extract", str(_conversation(tmp_path, "ops", conv["messages"]))).returncode == 0
    queue = {p["kind"]: p for p in _queue(cli)}
    approved = cli("approve", queue["constraint"]["id"], "--key", "no-friday-deploys")
    assert approved.returncode == 0 and "§ Constraints" in approved.stdout, approved.stderr
    memory = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "## Constraints" in memory and "[key:: no-friday-deploys] [source:: review]" in memory  # provenance
    assert cli("approve", queue["decision"]["id"]).returncode == 0
    memory = (layout.root / "MEMORY.md").read_text()
    assert "## Architecture Decisions\n\n- We decided to give the worker 2 GB" in memory
    rejected = cli("reject", queue["workflow"]["id"])
    assert rejected.returncode == 0 and not _queue(cli)
    assert any("first run the smoke tests" in i["text"] for i in json.loads(cli("trash", "--json").stdout)["items"])
    review = layout.root / "REVIEW.md"  # a person adds a line by hand, with a secret in it
    review.write_text(review.read_text() + "- deploy key is api_key=sk-abcdefghijklmnopqrstuvwx [id:: pbad001]\n")
    refused = cli("approve", "pbad001")
    assert refused.returncode != 0 and "looks like" in refused.stderr and refused.stderr.count("\n") == 1
    assert "sk-abc" not in (layout.root / "MEMORY.md").read_text() and _queue(cli)[0]["id"] == "pbad001"
    assert cli("approve", "pnothing").returncode == 2
    assert json.loads(cli("search", "--json", "--mode", "substring", "pbad001").stdout)["hits"] == []  # not a note


def test_bad_conversations_are_one_line_and_change_nothing(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    before = {p: p.read_bytes() for p in layout.root.rglob("*") if p.is_file()}
    for name, body in (("notjson", "this is not json {"), ("empty", "[]"), ("nomsgs", '{"messages": 3}'),
                       ("shape", '[{"role": "user"}]'), ("scalar", "42")):  # fmt: skip
        refused = cli("extract", str(_conversation(tmp_path, name, body)))
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and name in refused.stderr, name
    assert cli("extract", str(tmp_path / "missing.json")).returncode == 2
    assert {p: p.read_bytes() for p in layout.root.rglob("*") if p.is_file()} == before
    leak = "here it is: api_key=sk-abcdefghijklmnopqrstuvwxyz1234 and I prefer dark mode"
    secret = [{"role": "user", "content": leak}, {"role": "user", "content": "x" * 9000}]
    done = cli("extract", str(_conversation(tmp_path, "secret", secret)))
    assert done.returncode == 0 and "looks like" in done.stderr and "cut to their first 160" in done.stderr
    assert "sk-abc" not in layout.daily_note(dt.date.today()).read_text() and not _queue(cli)
    lines = "\n".join(json.dumps(m) for m in DATA[0]["messages"])  # JSON lines are a conversation too
    assert cli("extract", str(_conversation(tmp_path, "lines", lines))).returncode == 0


def test_rule_precision_on_the_labelled_conversations():
    """The rules on a small labelled set (tests/data/conversations.json, English, Chinese and mixed):
    a proposal is right when it holds one of the facts a person marked as lasting."""
    right = wrong = found = 0
    for conv in DATA:
        got = find_candidates([m["content"] for m in conv["messages"] if m["role"] == "user"])
        hits = [any(e.lower() in c.text.lower() for e in conv["expected"]) for c in got]
        right, wrong = right + sum(hits), wrong + hits.count(False)
        found += sum(any(e.lower() in c.text.lower() for c in got) for e in conv["expected"])
    expected = sum(len(c["expected"]) for c in DATA)
    assert right / (right + wrong) >= 0.9 and found / expected >= 0.85, (right, wrong, found, expected)


FACTS = [f"The team ships on {day}" for day in ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays")]
FACTS += ["Staging lives on port 8443", "The worker gets 2 GB"]  # seven: more than the five asked for


class _Completions(BaseHTTPRequestHandler):
    """A chat-completions endpoint: `mode` answers facts, garbage, or nothing for a while."""

    mode = "facts"
    asked: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Completions.asked.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if self.mode == "hang":
            time.sleep(3)
        content = json.dumps(FACTS) if self.mode == "facts" else "sure!"
        data = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except BrokenPipeError:  # the client gave up waiting: that was the point
            pass

    def log_message(self, *args: object) -> None:
        pass


def test_the_optional_llm_extractor_over_http(layout, cli, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Completions)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {"MEMVAULT_LLM_URL": f"http://127.0.0.1:{server.server_port}/v1", "MEMVAULT_LLM_MODEL": "local",
           "MEMVAULT_LLM_KEY": "test-key", "MEMVAULT_LLM_TIMEOUT": "1"}  # fmt: skip
    try:
        assert cli("init", "--lang", "en").returncode == 0
        conv = _conversation(tmp_path, "c", DATA[0]["messages"])
        before = len(_Completions.asked)
        unasked = cli("extract", str(conv), env={**env, "MEMVAULT_LLM_MODEL": ""})  # a URL, but no model
        assert unasked.returncode == 0 and "LLM" not in unasked.stderr and len(_Completions.asked) == before
        done = cli("extract", str(conv), "--json", env=env)
        assert done.returncode == 0, done.stderr
        assert len(_Completions.asked) == before + 1
        asked = _Completions.asked[-1]
        assert asked["path"] == "/v1/chat/completions" and asked["auth"] == "Bearer test-key"
        assert asked["body"]["model"] == "local" and "assistant: " in asked["body"]["messages"][1]["content"]
        llm = [p for p in _queue(cli) if p["source"] == "llm"]
        assert [p["text"] for p in llm] == FACTS[:5]  # seven answered, the first five proposed
        assert "Tuesdays" not in (layout.root / "MEMORY.md").read_text()  # proposed, never saved straight away
        for mode, said in (("garbage", "not a JSON array"), ("hang", "timed out")):
            _Completions.mode = mode
            other = _conversation(tmp_path, mode, [{"role": "user", "content": f"I prefer {mode} handling."}])
            result = cli("extract", str(other), env=env)
            assert result.returncode == 0 and result.stderr.startswith("memvault: LLM extractor:"), result.stderr
            assert result.stderr.count("\n") == 1 and said in result.stderr, result.stderr  # one line
            assert "the rule-based proposals stand" in result.stderr
            assert any(f"I prefer {mode} handling." == p["text"] for p in _queue(cli))
    finally:
        _Completions.mode = "facts"
        server.shutdown()


@pytest.mark.parametrize(("said", "kind"), [
    ("I am a senior Go developer", "skill"), ("I've worked on compilers for 10 years", "skill"),
    ("我是一名后端工程师", "skill"), ("My goal is to learn Rust this year", "goal"),
    ("I'm planning to move the team to Kotlin", "goal"), ("我的目标是今年学会 Rust", "goal"),
    ("I am a bit tired today", None), ("I am a fan of long walks", None), ("The goal was unclear to everyone", None),
])  # fmt: skip
def test_skills_and_goals_are_proposed_as_seed_000_has_them(said, kind):
    """Issue 27, case 11: a skill and a long-term goal, two of seed 000's four kinds of durable fact,
    produced no proposal."""
    assert [c.kind for c in find_candidates([said])] == ([kind] if kind else [])


def test_an_approved_skill_goes_to_its_own_section(layout, cli, tmp_path):
    assert cli("init", "--lang", "en").returncode == 0
    said = [{"role": "user", "content": "I am a senior Go developer. My goal is to learn Rust this year."}]
    assert cli("extract", str(_conversation(tmp_path, "me", said))).returncode == 0
    queue = {p["kind"]: p for p in _queue(cli)}
    assert set(queue) == {"skill", "goal"}, queue
    for kind, title in (("skill", "Skills"), ("goal", "Goals")):
        done = cli("approve", queue[kind]["id"])
        assert done.returncode == 0 and f"§ {title}" in done.stdout, done
    memory = (layout.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "## Skills\n\n- I am a senior Go developer. [source:: review]" in memory, memory


def test_summaries_lists_the_conversations_and_the_stable_block_carries_three(layout, cli, tmp_path):
    """Issue 27, case 11: no command listed the conversation summaries, and the stable block never
    carried any (seed 002: up to three past ones)."""
    assert cli("init", "--lang", "en").returncode == 0
    assert "no conversation summaries yet" in cli("summaries").stdout
    for n in range(4):
        said = [{"role": "user", "content": f"Topic number {n}: the quokka rollout"},
                {"role": "assistant", "content": "Noted."}]  # fmt: skip
        assert cli("extract", str(_conversation(tmp_path, f"c{n}", said))).returncode == 0
    listed = json.loads(cli("summaries", "--json").stdout)["summaries"]
    assert [s["text"].splitlines()[1] for s in listed] == [f"user: Topic number {n}: the quokka rollout"
                                                            for n in (3, 2, 1, 0)]  # fmt: skip
    assert all(s["text"].startswith("Conversation: 2 messages") and s["source"].startswith("daily/") for s in listed)
    assert len(json.loads(cli("summaries", "--count", "2", "--json").stdout)["summaries"]) == 2
    assert cli("summaries", "--count", "0").returncode == 2
    stable = json.loads(cli("context", "--json").stdout)["stable"]
    recent = [e["text"] for e in stable if e["section"] == "Recent conversations"]
    assert len(recent) == 3 and "Topic number 3" in recent[0] and not any("Topic number 0" in t for t in recent)
