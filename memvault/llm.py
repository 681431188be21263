"""The optional LLM extractor: a chat-completions endpoint that speaks the OpenAI protocol, asked
for at most five discoveries worth keeping from a conversation. Never required, never called unless
configured, and never trusted further than the review queue.

Configured from the environment only: `MEMVAULT_LLM_URL` (the base URL, e.g.
`http://localhost:8080/v1`), `MEMVAULT_LLM_MODEL`, `MEMVAULT_LLM_KEY` (optional) and
`MEMVAULT_LLM_TIMEOUT` (seconds, default 20).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from memvault.vault.conversation import Message
from memvault.vault.places import env

MAX_DISCOVERIES = 5
TRANSCRIPT_CHARS = 12_000
PROMPT = (
    "You keep a long-term memory for a user and their projects. From the conversation below, list at most five "
    "discoveries worth keeping: lasting facts about the user or the project (preferences, decisions and their "
    "reasons, constraints, solutions that took effort). Not one-off chatter, never secrets. Answer with a JSON "
    "array of short strings, one fact each, and nothing else; [] if there is nothing worth keeping."
)


class LlmFailed(Exception):
    """The endpoint timed out, failed or answered something that is not a list of facts."""


def configured() -> bool:
    return bool(env("MEMVAULT_LLM_URL") and env("MEMVAULT_LLM_MODEL"))


def _facts(answer: Any) -> list[str]:
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LlmFailed("the answer has no choices[0].message.content") from None
    text = str(content).strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        facts = json.loads(text)
    except ValueError:
        raise LlmFailed("the answer is not a JSON array of facts") from None
    if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
        raise LlmFailed("the answer is not a JSON array of strings")
    return [" ".join(f.split()) for f in facts if f.strip()][:MAX_DISCOVERIES]


def discoveries(messages: list[Message]) -> list[str]:
    """At most five facts the model proposes; raises `LlmFailed` with a one-line reason."""
    base = str(env("MEMVAULT_LLM_URL")).rstrip("/")
    transcript = "\n".join(f"{m.role}: {m.content}" for m in messages)[-TRANSCRIPT_CHARS:]
    body = {"model": env("MEMVAULT_LLM_MODEL"), "temperature": 0,
            "messages": [{"role": "system", "content": PROMPT}, {"role": "user", "content": transcript}]}  # fmt: skip
    headers = {"Content-Type": "application/json"}
    if env("MEMVAULT_LLM_KEY"):
        headers["Authorization"] = f"Bearer {env('MEMVAULT_LLM_KEY')}"
    request = urllib.request.Request(f"{base}/chat/completions", json.dumps(body).encode(), headers, method="POST")
    try:
        timeout = float(env("MEMVAULT_LLM_TIMEOUT") or 20)
    except ValueError:
        raise LlmFailed("MEMVAULT_LLM_TIMEOUT is not a number of seconds") from None
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            answer = json.loads(reply.read(1 << 20))
    except (TimeoutError, urllib.error.URLError, OSError) as exc:
        raise LlmFailed(f"{base}: {getattr(exc, 'reason', exc)}") from None
    except ValueError:
        raise LlmFailed(f"{base}: the answer is not JSON") from None
    return _facts(answer)
