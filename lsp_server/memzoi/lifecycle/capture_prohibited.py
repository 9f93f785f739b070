"""Memzoi's capture "prohibited content" detectors (reference §3.4; ``crates/memzoi-core/src/capture.rs``
``fn prohibited_finding``): applied line by line to a capture source and to review edits. The first hit blocks the
plan with ``prohibited_content_detected`` and a line number; the internal code names the family. Matched text is
never returned.

The six families, in Memzoi's order: generated integration markers, private keys, credentials (assignment keys,
``authorization: bearer``, known token shapes, ``user:pass@`` URLs), private personal data (SSN, Luhn-valid card
numbers, PII assignment keys), prompt injection phrases and raw transcripts (two or more role events across lines,
or the words ``raw transcript``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DETECTORS = 6
_CRED_KEYS = {
    "api_key",
    "apikey",
    "access_token",
    "auth_token",
    "refresh_token",
    "secret_key",
    "client_secret",
    "secret",
    "token",
    "password",
    "passwd",
    "pwd",
    "credential",
    "credentials",
    "private_key",
    "signing_key",
    "authorization",
    "proxy_authorization",
}
_CRED_SUFFIXES = (
    "_password",
    "_secret",
    "_token",
    "_api_key",
    "_secret_key",
    "_access_key",
    "_access_key_id",
    "_private_key",
    "_signing_key",
)
_PII_KEYS = {
    "ssn",
    "social_security",
    "social_security_number",
    "date_of_birth",
    "birth_date",
    "dob",
    "home_address",
    "medical_record",
    "patient_id",
    "customer_ssn",
    "passport",
    "passport_number",
    "driver_license",
    "drivers_license",
    "driver_license_number",
    "drivers_license_number",
    "national_id",
    "tax_id",
    "credit_card",
    "credit_card_number",
    "card_number",
    "bank_account",
    "bank_account_number",
    "routing_number",
    "iban",
    "swift",
    "phone_number",
    "email_address",
}
_INJECTION = (
    "ignore previous instructions",
    "ignore all previous instructions",
    "ignore prior instructions",
    "disregard previous instructions",
    "disregard prior instructions",
    "override previous instructions",
    "reveal the system prompt",
    "exfiltrate the system prompt",
)
_ROLES = "user|assistant|human|system|developer|tool|function"
_ROLE_EVENT = re.compile(rf"(?:^|[\s>\-*#\[{{(,;|])(?:{_ROLES}):", re.I)
_ROLE_SERIAL = re.compile(rf"""["']?role["']?\s*[:=]\s*["']?(?:{_ROLES})\b""", re.I)
_ASSIGN = re.compile(r"([A-Za-z0-9_.\-]+)\s*[=:]")
_TOKEN = re.compile(r"\b(?:AKIA[A-Z0-9]{16}|(?:ghp_|gho_|ghu_|ghs_|github_pat_|xoxb-|xoxp-)\S{9,}|sk-\S{15,})")
_JWT = re.compile(r"\beyJ\S*")
_USERPASS_URL = re.compile(r"[a-z][a-z0-9+.\-]*://[^\s/@:]+:[^\s/@]+@", re.I)
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_CARD = re.compile(r"\b\d(?:[ -]?\d){12,18}\b")


@dataclass(frozen=True)
class Prohibited:
    """A hit: the internal ``code`` (``prohibited_…``) and the 1-based ``line``; never the text."""

    code: str
    line: int


def _norm(key: str) -> str:
    return key.replace("-", "_").replace(".", "_").lower()


def _credential(line: str) -> bool:
    for m in _ASSIGN.finditer(line):
        key = _norm(m.group(1))
        if key in _CRED_KEYS or key.endswith(_CRED_SUFFIXES):
            return True
    if "authorization: bearer " in line.lower() or _TOKEN.search(line) or _USERPASS_URL.search(line):
        return True
    return any(tok.count(".") == 2 and len(tok) > 40 for tok in _JWT.findall(line))


def _luhn(digits: str) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def _personal(line: str) -> bool:
    if _SSN.search(line):
        return True
    for m in _CARD.finditer(line):
        digits = re.sub(r"[ -]", "", m.group(0))
        if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and _luhn(digits):
            return True
    for m in _ASSIGN.finditer(line):
        key = _norm(m.group(1))
        if key in _PII_KEYS or any(key.endswith("_" + k) for k in _PII_KEYS):
            return True
    return False


def _role_events(line: str) -> int:
    return len(_ROLE_EVENT.findall(line)) + len(_ROLE_SERIAL.findall(line))


def first_prohibited(text: str) -> Prohibited | None:
    """The first prohibited line of ``text`` (reference §3.4 order per line), else ``None``."""
    roles = 0
    for n, line in enumerate(text.splitlines(), 1):
        low = line.lower()
        if "<!-- memzoi:start -->" in line or "<!-- memzoi:end -->" in line:
            return Prohibited("prohibited_generated_integration_content", n)
        if "-----BEGIN " in line and "PRIVATE KEY-----" in line:
            return Prohibited("prohibited_private_key", n)
        if _credential(line):
            return Prohibited("prohibited_credential_token", n)
        if _personal(line):
            return Prohibited("prohibited_private_personal_data", n)
        if any(p in low for p in _INJECTION):
            return Prohibited("prohibited_prompt_injection", n)
        roles += _role_events(line)
        if roles >= 2 or "raw transcript" in low or "raw-transcript" in low:
            return Prohibited("prohibited_raw_transcript", n)
    return None
