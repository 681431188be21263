"""Write guards: what memvault refuses to store, and why, in one line.

Agents write into the vault unattended; a pasted secret would be indexed,
embedded and served back to every later prompt, so credentials are refused
at the door rather than scrubbed later.
"""

from __future__ import annotations

import re

from memvault.vault.errors import GuardError, UsageError

MAX_ENTRY_CHARS = 4000

_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an OpenAI/Anthropic-style API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("a Stripe secret key", re.compile(r"\b[rs]k_live_[0-9A-Za-z]{16,}")),
    ("a bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*")),
    (
        "a secret assignment",
        re.compile(
            r"\b(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey|"
            r"access[_-]?key|secret[_-]?key|client[_-]?secret|auth[_-]?token)"
            r"\s*(?:=|:=|=>)\s*['\"]?[^\s'\"]{3,}",
            re.IGNORECASE,
        ),
    ),
    (
        "a secret value",
        # `password: hunter2x` style; the value must look like a secret (has a
        # digit or symbol, 6+ chars) so prose such as "password: see the wiki" passes.
        re.compile(
            r"\b(?:password|passwd|passphrase|api[_-]?key|secret[_-]?key|access[_-]?token)"
            r"\s*:\s*['\"]?(?=[^\s'\"]*[0-9!@#$%^&*_+=/-])[^\s'\"]{6,}",
            re.IGNORECASE,
        ),
    ),
)


def check_entry(text: str, limit: int = MAX_ENTRY_CHARS) -> str:
    """Return the entry stripped of surrounding blank space, or raise `GuardError` saying why."""
    entry = text.strip()
    if not entry:
        raise UsageError("empty entry: nothing to write")
    if len(entry) > limit:
        raise GuardError(f"entry is {len(entry):,} characters; the limit is {limit:,} (split it up)")
    for what, pattern in _SECRET_PATTERNS:
        match = pattern.search(entry)
        if match:
            line = entry.count("\n", 0, match.start()) + 1
            raise GuardError(f"refused: line {line} of the entry looks like {what}; store secrets elsewhere")
    if "\x00" in entry:
        raise GuardError("refused: the entry contains NUL characters")
    return entry


def check_section_name(name: str) -> str:
    """A section name is one plain line; newlines or `#` could forge other headings."""
    clean = name.strip()
    if not clean:
        raise UsageError("empty section name")
    if any(ch in clean for ch in "\n\r#\x00") or len(clean) > 120:
        raise UsageError(f"{name!r}: a section name is one line of at most 120 characters, without '#'")
    return clean


_FIELD_VALUE = re.compile(r"^[\w.:-]{1,100}$")  # nothing that could end a `[name:: value]` field or a line


def check_field_value(what: str, value: str) -> str:
    """A value for an inline field an id fills (`[conversation:: ID]`): letters, digits, `. _ : -`."""
    if not isinstance(value, str) or not _FIELD_VALUE.match(value):
        raise UsageError(f"{what} {str(value)[:40]!r} is not an id (at most 100 letters, digits, . _ : -)")
    return value
