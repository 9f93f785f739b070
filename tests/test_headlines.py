"""Every finding's message starts with a short sentence (memzoi.base.headlines): what a one-line view shows (Error Lens,
Neovim's virtual text, `memzoi check`'s text lines) says what is wrong before the details and the fix."""

from __future__ import annotations

from memzoi.base.findings import CODES, finding
from memzoi.base.headlines import HEADLINES, detail, headed
from memzoi.judge.analysis import analyze_text
from tests import builders


def test_every_code_has_one_short_headline():
    assert set(HEADLINES) == set(CODES)
    for code, head in HEADLINES.items():
        if head is None:
            continue  # its message is its own headline (resident cap usage)
        assert head[0].isupper() and head.endswith(".") and len(head) <= 45, code
        assert head.count(". ") == 0, code


def test_a_message_gets_its_headline_once_and_keeps_its_details():
    got = finding("dangling_reference", "`supersedes` names record `x`, which does not exist; fix the id", 0, 1).message
    assert got == "Reference to a missing record. `supersedes` names record `x`, which does not exist; fix the id"
    assert headed("dangling_reference", got) == got  # never twice
    assert detail("dangling_reference", got) == "`supersedes` names record `x`, which does not exist; fix the id"
    assert headed("invalid_value", "lane is not valid") == "Invalid value. Lane is not valid"
    assert detail("invalid_value", "Invalid value. Lane is not valid") == "lane is not valid"
    # A message that starts with the headline's words already says it.
    assert headed("unknown_key", "unknown key `reviewer`: remove it") == "unknown key `reviewer`: remove it"
    own = "Entry written by hand, not reviewed. Approve a candidate to record it."
    assert headed("resident_hand_edit", own) == own  # already starts with a short sentence of its own
    long_own = (
        "A very long first sentence that goes on and on and says everything at once, naming every key and "
        "every value and every fix there is, before it stops. Then."
    )
    assert headed("unknown_key", long_own).startswith("Unknown key. A very long")


def test_a_checked_file_shows_the_headline_first():
    text = builders.record("r", extra="reviewer: someone\n")
    findings = analyze_text(text, "/p/.memzoi/records/r.md").findings
    unknown = [f for f in findings if f.code == "unknown_key"]
    assert unknown and unknown[0].message.casefold().startswith("unknown key")
    assert "`reviewer`" in unknown[0].message
    dangling = analyze_text(builders.record("s", supersedes="gone"), "/p/.memzoi/records/s.md").findings
    assert all(
        f.message.split(". ")[0] + "." == HEADLINES[f.code]
        or f.message.casefold().startswith(HEADLINES[f.code][:-1].casefold())
        for f in findings + dangling
        if HEADLINES.get(f.code)
    )
