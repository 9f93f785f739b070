"""The hyperscan prefilter (:mod:`memzoi.safety.prefilter`) changes no finding: both engines give the same hits on
the shared corpus and on generated texts, and without hyperscan every pattern is searched as before."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.judge.analysis import analyze_path, analyze_text
from memzoi.safety import collect_hits, context, memzoi_rules, prefilter, prepared  # noqa: F401 - prepared declares and compiles

from .helpers import record

HAVE_HYPERSCAN = importlib.util.find_spec("hyperscan") is not None
needs_hyperscan = pytest.mark.skipif(not HAVE_HYPERSCAN, reason="hyperscan is not installed on this platform")


@contextmanager
def engine(enabled: bool) -> Iterator[None]:
    """Run the block with the prefilter on or off, then put back what was in use."""
    before = prefilter.engine_name() == "hyperscan"
    prefilter.set_enabled(enabled)
    try:
        yield
    finally:
        prefilter.set_enabled(before)


def both(fn, *args):
    with engine(False):
        plain = fn(*args)
    with engine(True):
        assert prefilter.engine_name() == "hyperscan"
        gated = fn(*args)
    return plain, gated


def _hits(text: str):
    return [(h.code, h.start, h.end, h.label, h.memzoi) for h in collect_hits(text, body_start=0)]


def _findings(path):
    return [(f.code, f.start, f.end, f.message) for f in analyze_path(path).findings]


@needs_hyperscan
@pytest.mark.corpus
def test_both_engines_agree_on_the_corpus(corpus):
    paths = sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix in (".md", ".toml", ".yml", ".yaml"))
    assert len(paths) >= 24
    gated_files = 0
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        plain, gated = both(_hits, text)
        assert plain == gated, path
        plain_f, gated_f = both(_findings, path)
        assert plain_f == gated_f, path
        with engine(True):
            gated_files += prefilter.possible(text) is not None
    assert gated_files > len(paths) // 2  # the prefilter answered for most files: the comparison compared something


_alphabet = st.sampled_from(
    list("abcAZ09 _-+/=:.()\n\t\"'`<>{}$%#@;,")
    + [
        "\x1c",
        "\u00a0",
        "\u2028",
        "é",
        "\u212a",
        "+44 20 7946 0958",
        "+1 (415) 555 2671",
        "(212) 555-0143",
        "212-867-5309",
        "415.867.5309",
        "555",
        "+",
        "1-2-3",
        "ghp_",
        "AKIA",
        "ASIA",
        "xoxb-",
        "sk_live_",
        "npm_",
        "AIza",
        "github_pat_",
        "A1b2C3d4E5f6G7h8",
        "eyJ",
        "-----BEGIN ",
        "PRIVATE KEY-----",
        "Authorization: Bearer ",
        "Set-Cookie: ",
        "session=",
        "csrf_token: ",
        "postgres://",
        "redis://",
        "export ",
        "API_KEY=",
        "DB_PASSWORD = ",
        '"type": "service_account"',
        '"private_key_id":',
        "AccountKey=",
        "SharedAccessSignature sr=",
        "password: ",
        "\r\n",
    ]
)


@needs_hyperscan
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_alphabet, max_size=60).map("".join))
def test_both_engines_agree_on_generated_texts(text):
    plain, gated = both(_hits, text)
    assert plain == gated
    plain_a, gated_a = both(
        lambda t: [(f.code, f.start, f.end) for f in analyze_text(record(body=t or "x")).findings], text
    )
    assert plain_a == gated_a


@needs_hyperscan
def test_the_prefilter_gates_clean_text_and_passes_a_match():
    with engine(True):
        assert prefilter.possible("Use pnpm, not npm, in this repository.") == frozenset()
        phone = "call " + "+44 20 " + "7946 0958"
        assert "contacts.intl" in (prefilter.possible(phone) or ())
        # texts the engines read differently are never gated
        assert prefilter.possible("caf\u00e9") is None
        assert prefilter.possible("a\x1cb") is None
        assert [h.code for h in collect_hits(phone)] == ["private_personal_data"]


def test_ascii_source_drops_only_code_points_no_ascii_text_holds():
    assert prefilter.ascii_source(r"[\t\u2000-\u200a]x") == rb"[\t\xff-\xff]x"
    assert prefilter.ascii_source(r"\\u2000\u00e9") == rb"\\u2000\u00e9"  # an escaped backslash; a Latin-1 escape


def test_the_plain_search_is_used_when_the_prefilter_is_off():
    with engine(False):
        assert prefilter.engine_name() == "re"
        assert prefilter.possible("Use pnpm.") is None
        phone = "call " + "(212) 867-" + "5309"
        assert [h.code for h in collect_hits(phone)] == ["private_personal_data"]


def test_without_hyperscan_the_fallback_finds_the_same():
    """A process where ``import hyperscan`` fails (as on a platform without its wheel) uses ``re`` and finds the
    planted number; so does ``MEMZOI_PREFILTER=re``."""
    script = (
        "import sys; sys.modules['hyperscan'] = None\n"
        "from memzoi.safety import prepared, prefilter, collect_hits\n"
        "phone = 'call ' + '+1 (415) ' + '867 5309'\n"
        "print(prepared.ENGINE, prefilter.possible('x'), [h.code for h in collect_hits(phone)])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["re", "None", "['private_personal_data']"]
    env_script = script.replace("sys.modules['hyperscan'] = None", "import os; os.environ['MEMZOI_PREFILTER'] = 're'")
    out = subprocess.run([sys.executable, "-c", env_script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["re", "None", "['private_personal_data']"]


def test_hyperscan_is_declared_and_installed_where_its_wheels_exist():
    """The prefilter is a dependency of the package (with the marker of the platforms PyPI has wheels for); where the
    marker holds, an install has it, so the detectors' fast path is what users run (the `re`-only fallback is for
    the other platforms, not a silent result of a lost dependency)."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    declared = [Requirement(r) for r in requires("memzoi-lsp") or () if Requirement(r).name == "hyperscan"]
    assert declared, "hyperscan is not among memzoi-lsp's dependencies"
    if declared[0].marker is None or declared[0].marker.evaluate({"extra": ""}):
        assert HAVE_HYPERSCAN, "hyperscan is declared for this platform but not installed"
        assert prefilter.engine_name() == "hyperscan"


def _split_words(text: str) -> frozenset[bytes]:
    """The gate words of ``text`` the plain way: every word of the text, kept when declared."""
    spaced = context.lower(text).encode("utf-8", "surrogatepass").translate(context._TO_SPACE)
    return frozenset(context._VOCABULARY.intersection(spaced.split()))


_words_alphabet = st.sampled_from(
    [*sorted(w.decode() for w in context._VOCABULARY)[::7], "api", "key", "API_KEY", "Token", "pass"]
    + list(" _-./:=\n\t0123456789aZé\u0130\u212a\u00a0\x1c")
)


@needs_hyperscan
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_words_alphabet, max_size=40).map("".join))
def test_the_gate_words_found_by_the_prefilter_are_those_of_a_split(text):
    with engine(True):
        spaced = context.lower(text).encode("utf-8", "surrogatepass").translate(context._TO_SPACE)
        assert prefilter.words_in(spaced) == _split_words(text)
        assert context.Ctx(text).words == _split_words(text)
        long = (text + " ") * (context.SCAN_WORDS_FROM // (len(text) + 1) + 1)  # found by the scan
        assert context.Ctx(long).words == _split_words(long)
    with engine(False):
        assert prefilter.words_in(b"api") is None
        assert context.Ctx(text).words == _split_words(text)


@needs_hyperscan
@pytest.mark.corpus
def test_the_gate_words_of_the_corpus_are_those_of_a_split(corpus):
    paths = sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix in (".md", ".toml", ".yml", ".yaml"))
    found = 0
    with engine(True):
        for path in paths:
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            assert context.Ctx(text).words == _split_words(text), path
            found += bool(_split_words(text))
    assert found > len(paths) // 2  # the corpus mentions gate words: the comparison compared something


def test_a_gate_word_declared_after_the_prefilter_is_still_found():
    """A word declared once the database is compiled makes the prefilter answer ``None`` for words, and the text
    is split instead: no declared word is ever missed."""
    script = (
        "from memzoi.safety import prepared, prefilter\n"
        "from memzoi.safety.context import Ctx, gate_words\n"
        "before = prefilter.words_in(b' api zqxlate ') is not None or prefilter.engine_name() == 're'\n"
        "gate_words([b'zqxlate'])\n"
        "print(before, prefilter.words_in(b' api zqxlate '), sorted(Ctx('the API zqxlate').words))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip().split(maxsplit=2) == ["True", "None", "[b'api', b'zqxlate']"]


@needs_hyperscan
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_alphabet, max_size=60).map("".join))
def test_the_rules_memzoi_searches_are_those_the_prefilter_may_match(text):
    for on in (True, False):
        with engine(on):
            ctx = context.Ctx(text)
            expected = tuple(r for r in memzoi_rules.RULES if ctx.may(memzoi_rules._GATES[r.detector]))
            assert memzoi_rules._rules_that_may_match(ctx) == expected


@needs_hyperscan
@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_worker_scans_with_its_own_scratch_space():
    import os

    phone = "call " + "+44 20 " + "7946 0958"
    with engine(True):
        expected = prefilter.possible(phone)
        assert expected and prefilter._engine.local.pid == os.getpid()
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # the child: same answer, from a scratch space made in this process
            ok = prefilter.possible(phone) == expected and prefilter._engine.local.pid == os.getpid()
            os.write(write, b"1" if ok else b"0")
            os._exit(0)
        os.close(write)
        got = os.read(read, 1)
        os.waitpid(child, 0)
        assert got == b"1"
        assert prefilter._engine.local.pid == os.getpid()  # the parent's own is kept
