"""``private_personal_data`` warnings: e-mail addresses and phone numbers written in prose, with no key naming
them (a labelled ``email: …`` or ``phone_number: …`` is ``pii_detected``, :mod:`.pii`).

Repository memory is read by everyone who can read the repository, and a person's address or number is the
personal data Memzoi's git-plane gate keeps out (its ``private_personal_data`` reason). An unlabelled value is only
probably personal, so it is a warning: the reviewer decides. What is never flagged:

* addresses at the documentation domains of RFC 2606 / RFC 6761 (``example.com``, ``example.org``,
  ``example.net``, ``*.example``, ``*.test``, ``*.invalid``, ``*.localhost``, ``*.local``) and at ``localhost``;
* obvious placeholders (``user@``, ``you@``, ``name@``, ``someone@``, ``john.doe@``, ``foo@`` …, a ``<…>`` or
  ``{…}`` template) and role or machine mailboxes (``noreply@``, ``support@``, ``security@``, ``git@`` …), which
  name no person;
* an address that is the user part of a URL or an SSH remote (``git@github.com:org/repo``);
* phone numbers reserved for fiction (North American ``555-01xx``), runs of one digit, ``123-456-7890`` and its
  kin; and digit groups that are dates, versions, times, addresses or parts of an identifier.

A phone number is an international number (``+`` and a country code, 8 to 15 digits in groups) or a North American
one written ``(NNN) NNN-NNNN`` / ``NNN-NNN-NNNN`` / ``NNN.NNN.NNNN``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..base.findings import Severity
from .base import Hit
from .context import Ctx
from .prefilter import register

_EMAIL = re.compile(
    r"(?<![\w.+%/-])([A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,24})(?![\w@-]|\.[A-Za-z0-9])"
)
_DOC_DOMAINS = ("example.com", "example.org", "example.net", "example.edu")
_DOC_TLDS = ("example", "test", "invalid", "localhost", "local", "internal", "lan")
_PLACEHOLDERS = frozenset(
    {
        "user",
        "username",
        "user.name",
        "you",
        "your",
        "your.name",
        "yourname",
        "your-name",
        "name",
        "first.last",
        "firstname.lastname",
        "someone",
        "somebody",
        "anyone",
        "nobody",
        "me",
        "email",
        "mail",
        "address",
        "foo",
        "bar",
        "baz",
        "test",
        "tester",
        "john",
        "jane",
        "john.doe",
        "jane.doe",
        "johndoe",
        "janedoe",
        "alice",
        "bob",
        "carol",
        "x",
        "xx",
        "xxx",
        "abc",
        "a",
        "b",
        "c",
        "dev",
        "developer",
        "author",
        "maintainer",
        "owner",
        "example",
        "noreply",
        "no-reply",
        "donotreply",
        "do-not-reply",
        "support",
        "security",
        "info",
        "help",
        "contact",
        "admin",
        "administrator",
        "root",
        "postmaster",
        "hostmaster",
        "webmaster",
        "abuse",
        "team",
        "hello",
        "sales",
        "billing",
        "privacy",
        "legal",
        "press",
        "jobs",
        "careers",
        "git",
        "bot",
        "ci",
        "build",
        "deploy",
        "notifications",
    }
)
_INTL = re.compile(r"(?<![\w+.-])\+[1-9]\d{0,2}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]\d{1,6}){2,5}(?![\w.-]?\d)")
_NANP = re.compile(r"(?<![\w.+/(-])(?:\((\d{3})\) ?(\d{3})-|(\d{3})([-.])(\d{3})\4)(\d{4})(?![\w.-]?\d)")
_GATE_INTL = register("contacts.intl", _INTL)
_GATE_NANP = register("contacts.nanp", _NANP)


def _placeholder_email(local: str, domain: str) -> bool:
    d = domain.lower()
    if d in _DOC_DOMAINS or d.endswith(tuple("." + x for x in _DOC_DOMAINS)) or d.rsplit(".", 1)[-1] in _DOC_TLDS:
        return True
    if d.split(".")[0] == "example" or "noreply" in d or "no-reply" in d:
        return True
    base = local.lower().split("+", 1)[0]
    return base in _PLACEHOLDERS or base.strip("x._-") == "" or any(c * 4 in base for c in "x0")


def _email_hits(text: str) -> list[Hit]:
    out = []
    for m in _EMAIL.finditer(text):
        s, e = m.span()
        word = text[max(0, s - 200) : s].split()[-1:] or [""]
        if "://" in word[0] or text[e : e + 1] == ":" or (s and text[s - 1] in "{$"):
            continue  # a URL's user part, an SSH remote, a template
        if _placeholder_email(m.group(1), m.group(2)):
            continue
        out.append(Hit("private_personal_data", s, e, "e-mail address", m.group(0), severity=Severity.WARNING))
    return out


def _fictional(digits: str) -> bool:
    """A placeholder number: one digit repeated, an ascending run, or North America's fictional 555-01xx."""
    national = digits[-10:]
    return (
        len(set(digits)) <= 2
        or "1234567" in digits
        or "0123456" in digits
        or "9876543" in digits
        or (len(national) == 10 and national[3:6] == "555" and national[6:8] == "01")
        or national.endswith("0000000")
    )


def _phone_hits(text: str, intl: bool = True, nanp: bool = True) -> list[Hit]:
    out = []
    for m in _INTL.finditer(text) if intl else ():
        digits = re.sub(r"\D", "", m.group(0))
        if 8 <= len(digits) <= 15 and not _fictional(digits):
            out.append(
                Hit("private_personal_data", m.start(), m.end(), "phone number", m.group(0), severity=Severity.WARNING)
            )
    for m in _NANP.finditer(text) if nanp else ():
        area, exchange = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(5))
        digits = area + exchange + m.group(6)
        if area[0] in "01" or exchange[0] in "01" or _fictional(digits):
            continue  # not a valid North American area code or exchange, or a placeholder
        out.append(
            Hit("private_personal_data", m.start(), m.end(), "phone number", m.group(0), severity=Severity.WARNING)
        )
    return out


def contact_hits(ctx: Ctx, known: Sequence[Hit] = ()) -> list[Hit]:
    """``private_personal_data`` warnings for e-mail addresses and phone numbers in ``ctx``'s text (see the module
    docstring), leaving out any that overlaps a ``pii_detected`` hit in ``known`` (the labelled value is that)."""
    text = ctx.text
    hits = _email_hits(text) if "@" in text else []
    if any(c in text for c in "+(-."):
        intl, nanp = ctx.may(_GATE_INTL), ctx.may(_GATE_NANP)
        if intl or nanp:
            hits += _phone_hits(text, intl, nanp)
    pii = [(h.start, h.end) for h in known if h.code == "pii_detected"]
    return [h for h in hits if not any(s < h.end and h.start < e for s, e in pii)]
