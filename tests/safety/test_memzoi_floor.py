"""Memzoi's write-safety rules are the floor: every match is an error with Memzoi's reason code whose range covers
the matched text, in frontmatter values and in the body, whatever our own detectors think of the value."""

from __future__ import annotations

import base64
import random
import re
import string
from pathlib import Path

import pytest

from memzoi.base.findings import Severity
from memzoi.judge.analysis import analyze_text
from memzoi.safety import collect_hits
from memzoi.safety.memzoi_entropy import entropy_value
from memzoi.safety.memzoi_source import (
    MEMZOI_PATTERNS,
    TOKEN_CANDIDATE_SOURCE,
    URL_CANDIDATE_SOURCE,
    alternatives,
    rust_to_python,
)
from memzoi.safety.memzoi_url import credentialed

from ..eval import reference
from ..eval.memzoi_cases import cases
from .helpers import SAFETY_CODES, record, workspace

_SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "memzoi-format.md"
#: The project's facts about Memzoi's format (the shared reference beside the project; the test skips without it).
REFERENCE = _SHARED
R = random.Random(12)


def rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


@pytest.mark.skipif(not REFERENCE.exists(), reason="the shared reference folder is absent")
def test_patterns_are_memzois_source_text():
    section = REFERENCE.read_text(encoding="utf-8").split("### 3.3", 1)[1].split("### 3.4", 1)[0]
    for name, _, source in MEMZOI_PATTERNS:
        if name == "known_credential_prefix":  # the reference lists its alternatives one per line
            assert all(f"`{alt}`" in section for alt in alternatives(source)), name
        else:
            assert f"`{source}`" in section, name
    assert f"`{URL_CANDIDATE_SOURCE}`" in section and f"`{TOKEN_CANDIDATE_SOURCE}`" in section


def test_patterns_equal_the_independent_copy_of_the_evaluation():
    assert {name: (code, src) for name, code, src in MEMZOI_PATTERNS} == reference.PATTERNS


def test_rust_to_python_spells_out_white_space():
    assert rust_to_python(r"a\s*b") == r"a[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*b"
    assert rust_to_python(r"[^\s,;]").startswith(r"[^\t\n") and rust_to_python(r"[^\s,;]").endswith(",;]")
    assert (
        re.fullmatch(rust_to_python(r"\S+"), "ab\x1c") is not None
    )  # U+001C is not White_Space (Python's \s takes it)
    assert rust_to_python(r"\.[a-z]\\s") == r"\.[a-z]\\s"


def _place(tmp_path: Path, text: str, where: str) -> tuple[str, int]:
    """A record holding ``text`` in a frontmatter block scalar or in the body; and where ``text`` starts."""
    if where == "frontmatter":
        indented = "\n".join("    " + line for line in text.splitlines())
        doc = record(extra=f"capture:\n  note: |\n{indented}\n")
        return doc, doc.index(indented) + 4
    doc = record(body=text)
    return doc, doc.index(text)


@pytest.mark.parametrize("case", cases(), ids=lambda c: f"{c.detector}:{c.alternative}")
@pytest.mark.parametrize("where", ["frontmatter", "body"])
def test_each_alternative_is_an_error_covering_the_match(tmp_path, case, where):
    path = workspace(tmp_path) / "records" / "rec.md"
    doc, offset = _place(tmp_path, case.positive, where)
    found = [f for f in analyze_text(doc, path).findings if f.code in SAFETY_CODES]
    spans = [
        (s + offset, e + offset) for d, s, e in reference.matches(case.positive, key_blocks=False) if d == case.detector
    ]
    assert spans, case
    for s, e in spans:
        s += len(doc[s:e]) - len(doc[s:e].lstrip())  # leading white space taken in by ^\s* is not covered
        assert any(
            f.code == case.code and f.severity == Severity.ERROR and f.start <= s and e <= f.end for f in found
        ), (case, [(f.code, f.start, f.end) for f in found], (s, e))
    near, _ = _place(tmp_path, case.near_miss, where)
    assert [f.code for f in analyze_text(near, path).findings if f.code in SAFETY_CODES] == []


@pytest.mark.parametrize(
    "snippet, code",
    [
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIB\n", "private_key"),  # header-only: a 4-character body
        ("postgres://app:" + "HUNTER" + "TWO@db.internal/prod", "connection_string"),
        ("mysql://root:" + "PASSWORD@10.0.0.5:3306/app", "connection_string"),
        ("TOKEN" + "=abc", "environment_secret"),
        ("SECRET" + "=abc", "environment_secret"),
        ("API_KEY" + "=abc", "environment_secret"),
    ],
)
def test_the_fixtures_that_passed_before_are_errors(tmp_path, snippet, code):
    path = workspace(tmp_path) / "records" / "rec.md"
    found = [f for f in analyze_text(record(body=snippet), path).findings if f.code == code]
    assert found and all(f.severity == Severity.ERROR for f in found)


def test_credentialed_url_reads_urls_as_memzoi_does():
    assert credentialed("https://deploy@git.internal/app.git")  # a user name alone counts
    assert credentialed("https://:pw@host/") and not credentialed("https://user:@host/".replace("user", ""))
    assert credentialed("https://h/x?client_secret=1") and credentialed("https://h/x?Page_Token=a+b")
    assert not credentialed("https://h/x?token=") and not credentialed("https://h/x?token=%20")
    assert not credentialed("https://h/x?tokens=1") and not credentialed("https://h/x#token=1")
    assert not credentialed("https://user@host:99999/") and not credentialed("https://user@/x")  # does not parse
    assert credentialed("ssh://git@github.com/org/repo.git")


def test_entropy_keeps_memzois_skips_only():
    token = rand(40)
    assert entropy_value(token) and entropy_value("==" + token + "==")
    assert not entropy_value(rand(64, "0123456789abcdef"))  # all hex
    assert not entropy_value(rand(16) + "Redacted" + rand(16))  # a placeholder word
    assert not entropy_value(rand(40, string.ascii_lowercase + string.digits))  # two classes
    assert [h.code for h in collect_hits(f"digest: sha256:{rand(40)}")] == ["high_entropy_value"]


def _b64(n: int) -> str:
    return base64.b64encode(bytes(R.randrange(256) for _ in range(n))).decode()


@pytest.mark.parametrize(
    "body",
    [
        "integrity SRI384",
        "digest SHA256",
        '<script src="a.js" integrity="SRI384">',
        "- `SHA256` is the release's digest",
    ],
)
def test_a_digest_context_in_text_never_quiets_memzois_entropy_rule(tmp_path, body):
    # Memzoi skips its rule for fields it types as digests, never for text that looks like a digest
    body = body.replace("SRI384", "sha384-" + _b64(48)).replace("SHA256", "sha256:" + _b64(32).rstrip("="))
    path = workspace(tmp_path) / "records" / "rec.md"
    found = [f for f in analyze_text(record(body=body), path).findings if f.code in SAFETY_CODES]
    assert [(f.code, f.severity) for f in found] == [("high_entropy_value", Severity.ERROR)]
    assert "Memzoi's write-safety gate refuses it" in found[0].message


def test_digests_stay_quiet_where_memzois_rule_does_not_match_or_the_field_is_typed(tmp_path):
    path = workspace(tmp_path) / "records" / "rec.md"
    hexd = rand(64, "0123456789abcdef")
    for body in (f"digest sha256:{hexd}", f"revision blake3:{hexd}", "integrity sha384-" + "example" * 10):
        assert [f.code for f in analyze_text(record(body=body), path).findings if f.code in SAFETY_CODES] == [], body
    # the materialization block's identities are fields Memzoi types as digests: its rule skips them (the block
    # itself is invalid, as the identities must be blake3:<hex>)
    typed = "sha256:" + _b64(32).rstrip("=")
    extra = f"materialization:\n  plan_id: {typed}\n  revision:\n    revision_hash: {typed}\n"
    codes = {f.code for f in analyze_text(record(extra=extra), path).findings}
    assert "high_entropy_value" not in codes and "materialization_metadata" in codes
    # any other field is text to Memzoi
    codes = {f.code for f in analyze_text(record(extra=f"source_ref: {typed}\n"), path).findings}
    assert "high_entropy_value" in codes


def test_long_runs_give_one_finding_and_armored_blocks_one_for_the_block():
    blob = base64.b64encode(bytes(R.randrange(256) for _ in range(600))).decode()
    (h,) = collect_hits(f"data: {blob}")  # Memzoi cuts the run in 256-character pieces: one finding for them
    assert h.code == "high_entropy_value" and h.start == len("data: ") and h.end - h.start >= 3 * 256
    lines = "\n".join(rand(64, string.ascii_letters + string.digits + "+/") for _ in range(6))
    block = f"-----BEGIN PGP MESSAGE-----\n\n{lines}\n=AbCd\n-----END PGP MESSAGE-----"
    text = f"Archived reply:\n\n{block}\n\nEnd."
    (h,) = collect_hits(text)
    assert h.code == "high_entropy_value" and text[h.start : h.end] == block and "PGP MESSAGE" in h.label
    key = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{lines}\n-----END PGP PRIVATE KEY BLOCK-----"
    assert [h.code for h in collect_hits(key)] == ["private_key"]


def test_our_heuristics_add_but_never_remove(tmp_path):
    # a placeholder-looking password and a template still fail Memzoi's rules, so they are errors here too
    for snippet, code in (
        ("redis://:CHANGEME@cache.internal:6379", "connection_string"),
        ("Authorization: Bearer <token>", "authorization_header"),
        ("cookie: session=<id>", "session_token"),
    ):
        assert code in {h.code for h in collect_hits(snippet) if h.severity in (None, Severity.ERROR)}, snippet
