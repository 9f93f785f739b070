"""``pii_detected`` and ``transcript_detected``: Memzoi capture's prohibited-content detectors for private
personal data and raw transcripts (reference ``memzoi-format.md`` §3.4), with validation that keeps ordinary
numbers out: national ids are checked against their number rules, card numbers against Luhn and issuer
prefixes, IBANs against ISO 7064 mod 97.
"""

from __future__ import annotations

import re
from datetime import date

from .base import Hit
from .context import Ctx, gate_words
from .keyed import pairs

_SSN = re.compile(r"(?<![\d/.-])(\d{3})-(\d{2})-(\d{4})(?![\d/.-])")
_CARD = re.compile(r"(?<![\d.,/:-])\d(?:[ -]?\d){12,18}(?![\d.,/:-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
_NINO = re.compile(r"\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
_SE_PNR = re.compile(r"(?<![\d-])((?:19|20)?)(\d{2})(\d{2})(\d{2})[-+](\d{4})(?![\d-])")
_DIGIT_RUN = re.compile(r"\d[\d +-]{8,26}\d")
_SIN = re.compile(r"(?<![\d-])\d{3}([ -])\d{3}\1\d{3}(?![\d-])")
_PII_NAMES = (
    "ssn social_security social_security_number date_of_birth birth_date birthdate dob home_address medical_record "
    "medical_record_number patient_id passport passport_number passport_no driver_license drivers_license "
    "driver_licence drivers_licence driver_license_number drivers_license_number national_id national_id_number "
    "tax_id credit_card credit_card_number card_number bank_account bank_account_number routing_number iban phone "
    "phone_number mobile_number email_address personnummer"
).split()
_PII_SET = frozenset(_PII_NAMES)
_PII_SUFFIXES = tuple("_" + n for n in _PII_NAMES)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_PLACE = re.compile(
    r"(?i)^[\"']?(?:<[^>]*>|\$\{?\w+|\{\{|x{3,}|\*{3,}|n/a|none|null|~|redacted|example|required|optional|string|tbd)"
)


def luhn(digits: str) -> bool:
    """Luhn checksum of a digit string."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _card_ok(raw: str) -> bool:
    groups = re.split(r"[ -]", raw)
    digits = "".join(groups)
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    if (
        len(groups) > 1
        and [len(g) for g in groups] not in ([4, 6, 5], [4, 6, 4])
        and not (all(len(g) == 4 for g in groups[:-1]) and 1 <= len(groups[-1]) <= 4)
    ):
        return False
    if not re.match(r"4|5[1-5]|2[2-7]|3[47]|3(?:0[0-5]|[689])|6(?:011|5|4[4-9]|22)|35|62|81", digits):
        return False
    return luhn(digits)


def _iban_ok(raw: str) -> bool:
    s = raw.replace(" ", "")
    if not 15 <= len(s) <= 34:
        return False
    moved = s[4:] + s[:4]
    num = "".join(str(int(c, 36)) for c in moved)
    return int(num) % 97 == 1


def _kind(key: str) -> str:
    """The vocabulary name a personal-data key is or ends with: what a message shows (never the file's key, which
    is text outside the value)."""
    return key if key in _PII_SET else next((s.lstrip("_") for s in _PII_SUFFIXES if key.endswith(s)), "personal data")


def pii_hits(ctx: Ctx) -> list[Hit]:
    """``pii_detected``: US SSNs, Canadian SINs, Swedish personal identity numbers and UK National Insurance
    numbers (each validated), Luhn-valid payment card numbers, valid IBANs, and values of keys named after
    personal data (``ssn``, ``date_of_birth``, ``phone_number``, ``email_address`` … also as ``*_<name>``)."""
    out: list[Hit] = []
    text = ctx.text
    digit_hits: list[Hit] = []
    for m in _digit_runs(ctx):
        before = text[m.start() - 1] if m.start() else " "
        after = text[m.end()] if m.end() < len(text) else " "
        if before.isalnum() or before in "_-/.:@#$" or after.isalnum() or after in "_-/@":
            continue  # part of a token, path, version or identifier
        digit_hits.extend(_digit_pii(m.group(0), m.start()))
    if digit_hits:
        # The gate on digit word lengths is only worth computing when there is something to let through.
        lens = ctx.digit_lengths
        fours = sum(len(w) == 4 for w in ctx.digit_words) if 4 in lens else 0
        if 3 in lens or 6 in lens or 8 in lens or fours >= 2 or any(13 <= n <= 19 for n in lens):
            out.extend(digit_hits)
    if ctx.any_of(_BANK_WORDS):
        for m in _IBAN.finditer(text):
            if _iban_ok(m.group(0)):
                out.append(Hit("pii_detected", m.start(), m.end(), "IBAN", m.group(0)))
    if ctx.any_of(_NINO_WORDS):
        for m in _NINO.finditer(text):
            out.append(Hit("pii_detected", m.start(), m.end(), "UK National Insurance number", m.group(0)))
    stems = (
        "ssn",
        "security",
        "birth",
        "birthdate",
        "dob",
        "address",
        "record",
        "id",
        "passport",
        "license",
        "licence",
        "card",
        "account",
        "iban",
        "phone",
        "mobile",
        "personnummer",
        "number",
        "no",
    )
    for p in pairs(ctx, stems):
        key = p.norm
        if key not in _PII_SET and not key.endswith(_PII_SUFFIXES):
            continue
        # Personal data often contains spaces (addresses, phone numbers): the value runs to the end of the line
        # or a trailing comment.
        raw = text[p.start : p.line_end]
        cut = raw.find(" #")
        raw = (raw if cut < 0 else raw[:cut]).rstrip().rstrip("\"'\r").rstrip()
        value = raw.strip()
        if not value or _PLACE.match(value) or not _pii_value(key, value):
            continue
        out.append(Hit("pii_detected", p.start, p.start + len(raw), f"personal data in a `{_kind(key)}` key", value))
    return out


#: ASCII bytes → ``0`` for the characters a digit run is made of (``[0-9 +-]``), ``.`` for every other byte.
_RUN_MARKS = bytes(48 if chr(b) in "0123456789 +-" else 46 for b in range(256))
_TEN = b"0" * 10  # the shortest digit run has 10 characters


def _digit_runs(ctx: Ctx) -> list[re.Match[str]]:
    """``list(_DIGIT_RUN.finditer(ctx.text))``, searched only inside stretches of 10+ run characters.

    A match consists of run characters only, so it lies inside one maximal stretch of them, and the pattern
    has no look-around, so searching each stretch of 10 or more (found with ``bytes.find`` on a one-byte-per-
    character marking of the lower-cased text, whose run characters are the text's) gives the same matches in
    the same order. Records are full of digits (ids, dates,
    versions), where a whole-text scan would start a match attempt at every digit. Only for ASCII text: there
    ``\\d`` is ``[0-9]`` and byte offsets are character offsets; other text is scanned whole.
    """
    text = ctx.text
    if not text.isascii():
        return list(_DIGIT_RUN.finditer(text))
    marks = ctx.low_bytes.translate(_RUN_MARKS)
    out: list[re.Match[str]] = []
    i = marks.find(_TEN)
    while i >= 0:
        end = marks.find(b".", i)
        if end < 0:
            end = len(marks)
        out.extend(_DIGIT_RUN.finditer(text, i, end))
        i = marks.find(_TEN, end)
    return out


def _digit_pii(run: str, base: int) -> list[Hit]:
    """Classify one run of digits and separators (short: at most 24 characters)."""
    out: list[Hit] = []
    for m in _SSN.finditer(run):
        a, g, s = m.groups()
        if a in ("000", "666") or a[0] == "9" or g == "00" or s == "0000":
            continue
        out.append(Hit("pii_detected", base + m.start(), base + m.end(), "US social security number", m.group(0)))
    for m in _SE_PNR.finditer(run):
        cent, yy, mm, dd, tail = m.groups()
        try:
            day = int(dd) - 60 if int(dd) > 60 else int(dd)  # coordination numbers add 60 to the day
            date(2000 + int(yy) if not cent else int(cent + yy), int(mm), day)
        except ValueError:
            continue
        if luhn(yy + mm + dd + tail):
            out.append(
                Hit("pii_detected", base + m.start(), base + m.end(), "Swedish personal identity number", m.group(0))
            )
    for m in _SIN.finditer(run):
        digits = re.sub(r"\D", "", m.group(0))
        if digits[0] not in "08" and luhn(digits):
            out.append(
                Hit("pii_detected", base + m.start(), base + m.end(), "Canadian social insurance number", m.group(0))
            )
    if not out:
        for m in _CARD.finditer(run):
            if _card_ok(m.group(0)):
                out.append(Hit("pii_detected", base + m.start(), base + m.end(), "payment card number", m.group(0)))
    return out


def _pii_value(key: str, value: str) -> bool:
    v = value.strip("\"' ")
    if "email" in key:
        return bool(_EMAIL.search(v)) and "example." not in v.lower()
    digits = sum(c.isdigit() for c in v)
    if "address" in key:
        return digits >= 1 and sum(c.isalpha() for c in v) >= 4
    if "passport" in key or "licen" in key or "national" in key or "tax" in key or "patient" in key or "medical" in key:
        return digits >= 4 and len(v) <= 40
    return digits >= 4 and len(v) <= 60


_ROLES = "user|assistant|human|system|developer|tool|function|ai|model|bot|agent|claude|chatgpt|gpt"
_TURN = re.compile(rf"(?P<r>{_ROLES})(?:\*\*|__|\])?[ \t]*(?:\*\*|__)?[ \t]*:(?!//)")
_LINE_LEAD = re.compile(r"[ \t]*(?:[>*\-|#]+[ \t]*)*(?:\*\*|__|\[)?$")
_SERIAL = re.compile(r"role[\"']?\s*[:=]\s*[\"']?(?P<r>user|assistant|system|developer|tool|function|human)\b")
_CANON = {
    "human": "user",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "agent": "assistant",
    "claude": "assistant",
    "chatgpt": "assistant",
    "gpt": "assistant",
    "function": "tool",
}
_OTHER_ROLES = (
    b"assistant",
    b"ai",
    b"model",
    b"bot",
    b"agent",
    b"claude",
    b"chatgpt",
    b"gpt",
    b"system",
    b"developer",
    b"tool",
    b"function",
)
_OTHER_ROLE_WORDS = gate_words(_OTHER_ROLES)
_BANK_WORDS = gate_words((b"iban", b"bank", b"account", b"sepa", b"transfer"))
_NINO_WORDS = gate_words((b"nino", b"insurance", b"ni"))
_ROLE_WORD, _USER_ROLES = gate_words((b"role",)), gate_words((b"user", b"human", b"assistant"))


def transcript_hits(ctx: Ctx, start: int = 0) -> list[Hit]:
    """``transcript_detected``: two or more conversation turns of different roles (``User:`` / ``Assistant:``
    at a line start, also quoted or emphasised, or serialized ``"role": "user"``) in the text from ``start``
    (the body). One hit spans from the first turn to the end of the last turn's line."""
    if not (ctx.any_of(_ROLE_WORD) or (ctx.any_of(_USER_ROLES) and ctx.any_of(_OTHER_ROLE_WORDS))):
        return []
    text, low = ctx.text, ctx.low
    events: list[tuple[int, int, str]] = []
    for m in _TURN.finditer(low, start):
        line_begin = low.rfind("\n", 0, m.start()) + 1
        if not _LINE_LEAD.match(low, line_begin, m.start()):
            continue
        role = m.group("r")
        events.append(
            (
                line_begin + len(low[line_begin : m.start()]) - len(low[line_begin : m.start()].lstrip(" \t>*-|#_[")),
                m.end(),
                _CANON.get(role, role),
            )
        )
    if ctx.any_of(_ROLE_WORD):
        for m in _SERIAL.finditer(low, start):
            role = m.group("r")
            events.append((m.start(), m.end(), _CANON.get(role, role)))
    roles = {r for _, _, r in events}
    if len(events) < 2 or len(roles) < 2 or not roles & {"user", "assistant"}:
        return []
    events.sort()
    first, last = events[0][0], events[-1][1]
    nl = text.find("\n", last)
    end = len(text) if nl < 0 else nl
    if end > first and text[end - 1] == "\r":
        end -= 1
    label = f"{len(events)} conversation turns ({', '.join(sorted(roles))})"
    return [Hit("transcript_detected", first, end, label, text[first:end])]
