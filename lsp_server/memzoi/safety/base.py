"""Shared pieces of the content detectors: the raw hit type and value plausibility checks.

A :class:`Hit` is a detector match before it becomes a finding: its code, span (code-point offsets into the
scanned text), a human label naming the *kind* of thing found (never the text itself), the matched value (used
only to compute the fingerprint, never shown), and a priority used when hits of the secret family overlap
(lower wins: the most specific detector names the finding).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..base.findings import Severity
from .entropy import is_placeholder, is_wordy, shannon


@dataclass(slots=True)
class Hit:
    """One detector match; see the module docstring."""

    code: str
    start: int
    end: int
    label: str
    value: str
    priority: int = 50
    severity: Severity | None = None
    family: str = ""
    #: the Memzoi write-safety detector this hit is a match of (``memzoi_rules``), empty for our own detectors
    memzoi: str = ""
    #: the text that replaces the span in an ``invisible_character`` quick fix (``None``: delete the span)
    fix: str | None = None


_TEMPLATE = re.compile(
    r"^\$\{?\w|^\$\(|^\{\{|^\{%|^%\(|^<[^>]*>|\{\{[^}]*\}\}|\$\{[A-Za-z_][^}]*\}|^\*{3,}|^\.{3}|^[xX*#.•-]{4,}$|^(?:env|vault|secret)[:(]|\bos\.environ|\bprocess\.env|\bgetenv|^![A-Za-z_]+(?:\s|$)"
)
_REFERENCE = re.compile(
    r"^(?:var|local|locals|module|data|self|this|config|cfg|conf|settings|env|os|process|secrets|vars|params|args|"
    r"options|opts|app|ctx|context|values|inputs|steps|needs|github|matrix|import\.meta)"
    r"(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*\)|\[.*\])?$"
)
_WORDS_ONLY = re.compile(r"^[a-z][a-z _-]*$")
#: Values that are obviously not a secret (a reference, a placeholder, a type name).
_NOT_SECRET = frozenset(
    "none null nil true false yes no required optional string secret password token redacted hidden masked "
    "changeme change_me example sample test testing dummy fake placeholder your_password your_token your_key "
    "undefined empty n/a tbd todo".split()
)


def plausible_secret(value: str, *, min_len: int = 6, min_entropy: float = 2.5) -> bool:
    """True when ``value`` (quotes stripped) looks like a real secret rather than prose, a placeholder, a
    template or a reference to where a secret lives. Entropy is measured over all printable characters, so a
    password full of punctuation counts (bug class B48)."""
    v = value.strip().strip("\"'`").strip()
    if len(v) < min_len or len(v) > 512:
        return False
    low = v.lower()
    if low in _NOT_SECRET or _TEMPLATE.search(v) or is_placeholder(v):
        return False
    if " " in v or _WORDS_ONLY.match(v):
        return False
    if _REFERENCE.match(v):
        return False  # var.db_password, settings.SECRET_KEY, config.get("token"): where the secret lives
    if re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", v):
        return False  # an environment variable NAME says where the secret lives, it is not the secret
    if len(v) >= 12 and is_wordy(v) and (v.islower() or re.search(r"[_./-]", v)):
        return False  # an identifier or path made of words (a CamelCase value may be a passphrase)
    if not re.search(r"[0-9]", v) and not re.search(r"[^A-Za-z]", v) and (v.islower() or v.isupper()):
        return False
    return shannon(v) >= min_entropy


#: Overlap priority within the credential family (lower wins: the most specific detector names the finding).
PRIORITY = {
    "private_key": 0,
    "cloud_credential": 10,
    "credential_token": 20,
    "session_token": 30,
    "connection_string": 40,
    "credentialed_url": 50,
    "authorization_header": 60,
    "environment_secret": 70,
    "credential_assignment": 80,
    "high_entropy_value": 90,
}


def documented_example(token: str) -> bool:
    """True for a vendor's documented example value (our own detectors skip these; Memzoi's rules do not)."""
    # AWS's documented example key ids end in EXAMPLE (bug class B39); other vendors' docs use the same habit.
    up = token.upper()
    return "EXAMPLE" in up
