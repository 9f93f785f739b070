"""The detectors' fast paths give exactly what the plain scans give.

Each shortcut in the detectors rests on a fact about a pattern (its shortest match, the characters it can
contain, a substring every match has, the absence of look-around). These tests check those facts on the
patterns themselves and compare each shortcut with the plain whole-text scan it replaces on generated text.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from memzoi.safety import (
    context,
    controls,
    credentials,
    injection,
    keyed,
    memzoi_entropy,
    memzoi_rules,
    memzoi_url,
    pii,
    tokens,
)
from memzoi.safety.context import LONG, Ctx
from memzoi.safety.entropy import shannon
from memzoi.safety.memzoi_entropy import entropy_value
from memzoi.safety.memzoi_source import (
    ENTROPY_PLACEHOLDERS,
    ENTROPY_THRESHOLD,
    MAX_ENTROPY_TOKEN,
    MIN_ENTROPY_TOKEN,
)

try:  # the regex parser is private; the width facts are checked where it exists
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - other Python versions
    sre_parse = None

_SHAPES = {label: rx for label, rx, _ in tokens._TOKEN_SHAPES + tokens._CLOUD_SHAPES}
_LOOKAROUND = re.compile(r"\(\?<?[=!]|\\b|\\B|\^|\$")


def _min_width(rx: str) -> int:
    return sre_parse.parse(rx.removeprefix("(?low)")).getwidth()[0]


@pytest.mark.skipif(sre_parse is None, reason="re._parser not available")
def test_long_only_shapes_match_16_or_more_characters():
    for label in tokens._LONG_ONLY | tokens._LONG_NEEDLES.keys():
        assert _min_width(_SHAPES[label]) >= LONG, label
    # the one shape left out really is shorter
    assert _min_width(_SHAPES["Slack token"]) < LONG


def test_long_only_shapes_have_no_lookaround_and_match_no_whitespace():
    for label in tokens._LONG_ONLY | tokens._LONG_NEEDLES.keys():
        rx = _SHAPES[label]
        assert not _LOOKAROUND.search(rx.replace(r"\$", "")), label
        assert r"\s" not in rx and " " not in rx and "^" not in rx.replace("[^", ""), label


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_match_of_a_needled_shape_holds_a_needle(data):
    for label, needles in tokens._LONG_NEEDLES.items():
        rx = _SHAPES[label].removeprefix("(?low)")
        sample = data.draw(st.from_regex(rx, fullmatch=True), label=label)
        assert any(n in sample for n in needles), label
        assert tokens._guard(needles) in sample, label
        assert not any(c.isspace() for c in sample), label


def test_guard_is_in_every_needle():
    for needles in tokens._LONG_NEEDLES.values():
        guard = tokens._guard(needles)
        assert all(guard in n for n in needles)


_WORDS = st.sampled_from(
    [
        "token",
        "password",
        "number",
        "key",
        "api",
        "session",
        "pass",
        "bypass",
        "secret",
        "phone",
        "_",
        "-",
        ".",
        ":",
        "=",
        " ",
        "\t",
        "\n",
        ": ",
        "=>",
        ":=",
        "'",
        '"',
        "#",
        "/",
        "x9",
        "é",
        "\u0130",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_WORDS, max_size=40).map("".join))
@example("token: 'token:token'")  # a full run drew it: the pair inside the quoted value is one more match
def test_keyed_matches_equal_a_scan_that_looks_inside_quoted_values(text):
    # keyed._matches is finditer's scan, tried only at the stems, that goes on inside a match's quoted value (where
    # a scan of that YAML scalar alone finds its own pairs) rather than after it
    ctx = Ctx(text)
    stems = tuple(keyed.STEM_GATES)
    pattern = keyed._pattern(stems)
    fast = [(m.span(), m.groupdict()) for m in keyed._matches(pattern, ctx.low, stems)]
    plain: list[tuple[tuple[int, int], dict[str, str | None]]] = []
    pos = 0
    while (m := pattern.search(ctx.low, pos)) is not None:
        plain.append((m.span(), m.groupdict()))
        pos = m.start("v") + 1 if ctx.low[m.start("v")] in "\"'" else m.end()
    assert fast == plain


_DIGITS = st.sampled_from(["0", "1", "4", "9", " ", "-", "+", "--", "  ", "a", "T", ":", "/", "\n", "٣", "é"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_DIGITS, max_size=60).map("".join))
def test_digit_runs_equal_finditer(text):
    fast = [m.span() for m in pii._digit_runs(Ctx(text))]
    assert fast == [m.span() for m in pii._DIGIT_RUN.finditer(text)]


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s<>\"'`]+", fullmatch=True))
def test_url_scheme_is_read_as_urlsplit_reads_it(raw):
    try:
        scheme = urlsplit(raw).scheme
    except ValueError:
        return
    assert scheme == raw[: raw.index(":")].lower()


def test_token_shapes_found_in_long_runs_and_slack_token_anywhere():
    key = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9"
    slack = "xoxb-" + "12ab34cd56"
    for text in (f"token {key} here", f"slack token: {slack}"):
        labels = {h.label for h in tokens.token_hits(Ctx(text))}
        assert labels, text


_SPACES = st.sampled_from(
    [
        "a",
        "B",
        "9",
        "-",
        "/",
        " ",
        "\t",
        "\n",
        "\r\n",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x1f",
        "\x85",
        "\xa0",
        "\u2028",
        "é",
        "aaaaaaaaaaaaaaaa",
        "Zz09+/=_-.:@%",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_SPACES, max_size=40).map("".join))
def test_long_runs_are_the_long_parts_of_str_split(text):
    expected, cursor = [], 0
    for run in (w for w in text.split() if len(w) >= LONG):
        cursor = text.index(run, cursor)
        expected.append((cursor, run))
        cursor += len(run)
    assert Ctx(text).longs == expected


def test_words_are_the_declared_gate_words_of_the_text():
    ctx = Ctx("Password: x; see the API-key and a tokenizer, 2026-07-06")
    assert b"password" in ctx.words and b"api" in ctx.words and b"key" in ctx.words
    assert b"see" not in ctx.words  # not a gate word
    assert ctx.all_words >= {b"see", b"tokenizer", b"2026", b"07"}
    assert ctx.words == ctx.all_words & context._VOCABULARY
    assert ctx.has(b"password", b"cookie") and not ctx.has(b"cookie")
    with pytest.raises(ValueError, match="undeclared"):
        ctx.has(b"see")


_TOKENISH = st.sampled_from(
    [
        "AKIA",
        "ASIA",
        "ghp_",
        "gho_",
        "github_pat_",
        "sk-",
        "sk-proj-",
        "SK",
        "oy2",
        "cio",
        "9876543210:AA",
        ":AA",
        "AIza",
        "ATBB",
        "ATATT3",
        "GR1348941",
        "xoxb-",
        "xoxe.xoxb-1-",
        "eyJ",
        "eyJhbGciOiJIUzI1NiJ9.",
        "LTAI",
        "AKID",
        "key-",
        "k_live_",
        "k_test_",
        "rk_",
        "test",
        "secret_",
        "ntn_",
        "lin_api_",
        "hf_",
        "npm_",
        "Q7",
        "zX9",
        "0123456789abcdef",
        "ABCDEFGHIJKLMNOP",
        "qRsTuVwXyZ012345",
        "12ab34cd56",
        " ",
        "\n",
        "_",
        "-",
        ".",
        "=",
        "é",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TOKENISH, max_size=30).map("".join))
@example("xoxb-" + "12ab34cd56 is short")  # the one shape whose match can be shorter than a long run
@example("x " + "AKIA" + "ABCDEFGHIJKLMNOP" + " and " + "eyJhbGciOiJIUzI1NiJ9." + "qRsTuVwXyZ012345.ab")
def test_long_run_shortcuts_equal_searching_the_whole_text(text):
    # With long_text set to the whole text every needle and shape test falls back to the plain search, so the
    # results must be the same as with the real long runs.
    fast, plain = Ctx(text), Ctx(text)
    plain.__dict__["long_text"] = text
    for detector in (tokens.token_hits, tokens.cloud_hits, credentials.session_hits):
        assert detector(fast) == detector(plain), detector.__name__


@settings(max_examples=200, deadline=None)
@given(st.sets(st.sampled_from(sorted(injection._RULE_WORDS)), max_size=12))
def test_opened_rules_equal_the_plain_gate(words):
    words = frozenset(words)
    plain = tuple(r for r in injection._COMPILED if all(not words.isdisjoint(g) for g in r[3]))
    assert injection._opened_rules(words) == plain
    assert injection._opened_rules(words) == plain  # and again from the cache


@settings(max_examples=200, deadline=None)
@given(st.sets(st.sampled_from(sorted(keyed._ALL_GATES)), min_size=1, max_size=8))
def test_stems_for_equal_the_plain_gate(words):
    words = frozenset(words)
    stems = tuple(s for s, gate in keyed.STEM_GATES.items() if not words.isdisjoint(gate))
    assert keyed._stems_for(words) == (stems, keyed._pattern(stems))


_MEMZOI_WORDS = st.sampled_from(
    [
        "-----BEGIN ",
        "RSA ",
        "PRIVATE KEY",
        "-----",
        "Authorization",
        "authorization: ",
        "Proxy-",
        "bearer ",
        "Basic ",
        "AKIA",
        "asia",
        "ghp_",
        "GHS_",
        "github_pat_",
        "xoxb-",
        "XOXS-",
        "sk_live_",
        "sk_test_",
        "npm_",
        "AIza",
        "eyJ",
        "set-cookie",
        "Cookie",
        ": ",
        "=",
        "session",
        "sessionid",
        "csrf_token",
        "auth",
        "auth_token",
        "postgres",
        "ql",
        "mongodb+srv",
        "redis",
        "amqps",
        "mssql",
        "://",
        "export ",
        "TOKEN",
        "DEPLOY_",
        "api_key",
        "PASSWORD",
        '"type"',
        '"service_account"',
        '"private_key_id"',
        "AccountKey=",
        "SharedAccessSignature sr=",
        "ABCDEFGHIJKLMNOP",
        "q7Zx9W2v",
        "0123456789",
        ".",
        ",",
        ";",
        " ",
        "\n",
        "\t",
        "\r\n",
        "ſ",
        "K",
        "é",
        "\u3000",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_MEMZOI_WORDS, max_size=40).map("".join))
@example("csrf_token\u017f=-----BEGIN")  # found by hypothesis: a folded letter inside an assigned name
def test_memzoi_rule_shortcuts_equal_the_plain_search(text):
    # The shortcuts run only where memzoi_hits uses them: texts with a case-folding oddity (ſ, K, İ, ı) are searched
    # the plain way, because the lower-cased gates cannot see those letters.
    ctx = Ctx(text)
    plain_only = memzoi_rules.needs_plain_search(text)
    for rule in memzoi_rules.RULES:
        fast = [(m.span(), m.group(0)) for m in memzoi_rules.pattern_matches(rule, ctx, plain_only)]
        plain = [(m.span(), m.group(0)) for m in rule.regex.finditer(text)]
        assert fast == plain, rule.detector


_ENTROPY_PIECES = st.sampled_from(
    [
        "aB3dE5fG7hJ9kL1m",
        "N3pQ5rS7tU9vW1xY",
        "+/",
        "==",
        "-_",
        "0123456789abcdef",
        " ",
        "\n",
        "sha256:",
        "sha512-",
        "é",
        "Zz",
        "example",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ENTROPY_PIECES, max_size=40).map("".join))
@example("x " + "aB3dE5fG7hJ9kL1m" + "N3pQ5rS7tU9vW1xY" + "+/" + " y " + "sha512-" + "aB3dE5fG7hJ9kL1m" * 20)
def test_entropy_on_long_runs_equals_the_plain_search(text):
    # without armored blocks, the hits cover exactly the plain candidates that qualify (adjacent ones merged)
    covered = set()
    for h in memzoi_entropy.entropy_hits(Ctx(text)):
        covered.update(range(h.start, h.end))
    plain = set()
    for m in memzoi_entropy._TOKEN_CANDIDATE.finditer(text):
        if memzoi_entropy.entropy_value(m.group(0)):
            plain.update(range(m.start(), m.end()))
    assert covered == plain


_URL_WORDS = st.sampled_from(
    [
        "https",
        "http",
        "ssh",
        "x",
        "git+ssh",
        "a.b-c",
        "://",
        ":",
        "//",
        "/",
        "user",
        "@",
        "?",
        "token=",
        "&",
        "=",
        "<",
        ">",
        " ",
        "\n",
        "é",
        "_",
        "0",
        "verylongschemename",
        ".",
        ")",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_URL_WORDS, max_size=30).map("".join))
def test_url_candidates_equal_finditer(text):
    fast = [m.span() for m in memzoi_url.url_candidates(text)]
    assert fast == [m.span() for m in memzoi_url._URL_CANDIDATE.finditer(text)]


_CONTROL_PIECES = st.sampled_from(
    ["a", " ", "\t", "\n", "\r", "\r\n", "\x00", "\x1b", "\x0b", "\x1f", "\x7f", "\u00a0", "é", "\u2028"]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_CONTROL_PIECES, max_size=30).map("".join))
def test_the_control_character_fast_path_equals_the_regex(text):
    assert controls.control_spans(text) == [m.span() for m in controls._IN_FILE.finditer(text)]
    assert controls.control_spans(text, breaks=False) == [m.span() for m in controls._IN_LINE.finditer(text)]


def _plain_shannon(value: str) -> float:
    n = len(value)
    return -sum([c / n * math.log2(c / n) for c in Counter(value).values()]) if value else 0.0


def _plain_entropy_value(token: str) -> bool:
    """Memzoi's ``bounded_entropy`` test on one candidate, written out the plain way (``detectors.rs``)."""
    token = token.strip("=")
    if not MIN_ENTROPY_TOKEN <= len(token) <= MAX_ENTROPY_TOKEN or re.fullmatch(r"[0-9a-fA-F]+", token):
        return False
    if any(p in token.lower() for p in ENTROPY_PLACEHOLDERS):
        return False
    classes = sum(
        any(c in group for c in token)
        for group in (string.ascii_lowercase, string.ascii_uppercase, string.digits, "_-+/")
    )
    return classes >= 3 and _plain_shannon(token) >= ENTROPY_THRESHOLD


_TOKEN_PIECES = st.sampled_from(
    [*"0123456789abcdefABCDEF", *"ghijkmnpqrstuvwxyzGHJKLMNPQRSTUVWXYZ_-+/=", "example", "Redacted", "xxxxxxxx"]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TOKEN_PIECES, min_size=28, max_size=270).map("".join))
@example("0123456789abcdefABCDEF" * 2)  # all hex, 22 distinct characters: Memzoi skips it
@example("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY")
def test_entropy_value_and_shannon_equal_the_plain_rule(token):
    assert entropy_value(token) == _plain_entropy_value(token)
    assert shannon(token) == _plain_shannon(token)  # the tabled terms give the very same float
    assert shannon(token * 3) == _plain_shannon(token * 3)  # longer than the table


def test_fewer_distinct_characters_than_the_floor_cannot_reach_the_threshold():
    """What lets :func:`entropy_value` skip a token by its distinct characters before anything else, and all-hex
    tokens with it: entropy is at most log2 of the distinct count."""
    assert math.log2(memzoi_entropy._MIN_DISTINCT - 1) < ENTROPY_THRESHOLD
    assert len(set(string.hexdigits)) < memzoi_entropy._MIN_DISTINCT
