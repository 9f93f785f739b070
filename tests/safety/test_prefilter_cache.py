"""The prefilter's databases kept between runs (:mod:`memzoi.safety.prefilter_cache`) answer exactly as freshly
compiled ones, and a damaged, foreign or stale cache is compiled anew, never used."""

from __future__ import annotations

import importlib.util
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi.safety import prefilter, prepared  # noqa: F401 - prepared declares every pattern and gate word
from memzoi.safety.context import _TO_SPACE
from memzoi.safety.prefilter_cache import DatabaseCache, cache_file, read_cache

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("hyperscan") is None, reason="hyperscan is not installed on this platform"
)


def _engines(cache: DatabaseCache | None) -> tuple[prefilter._Engine, prefilter._Words]:
    import hyperscan

    return (
        prefilter._Engine(hyperscan, dict(prefilter._PATTERNS), cache),
        prefilter._Words(hyperscan, set(prefilter._WORDS), cache),
    )


def _answers(engines: tuple[prefilter._Engine, prefilter._Words], texts: list[str]) -> list[tuple]:
    engine, words = engines
    out = []
    for text in texts:
        data = text.encode("ascii", "replace")
        out.append((engine.possible(data), words.found(text.lower().encode("ascii", "replace").translate(_TO_SPACE))))
    return out


def _cached_twice(tmp_path: Path) -> tuple[DatabaseCache, tuple]:
    import hyperscan

    first = DatabaseCache(hyperscan, tmp_path)
    _engines(first)
    assert first.stats == {"hits": 0, "misses": 2} and first.save()
    again = DatabaseCache(hyperscan, tmp_path)
    engines = _engines(again)
    assert again.stats == {"hits": 2, "misses": 0} and not again.save()  # nothing new: not rewritten
    return again, engines


def _corpus_texts(corpus: Path) -> list[str]:
    paths = sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix in (".md", ".toml", ".yml", ".yaml"))
    return [p.read_text(encoding="utf-8", errors="replace") for p in paths]


@pytest.mark.corpus
def test_databases_read_back_answer_as_compiled_ones_on_the_corpus(tmp_path, corpus):
    _, cached = _cached_twice(tmp_path)
    texts = _corpus_texts(corpus)
    assert len(texts) >= 24
    # and texts some pattern matches (built here, not stored: the corpus holds no secret)
    texts += [t + " in " + texts[0] for t in ("call +44 20 " + "7946 0958", "AKIA" + "Z" * 16, "ghp_" + "a1B2" * 9)]
    fresh = _answers(_engines(None), texts)
    assert _answers(cached, texts) == fresh
    assert any(p for p, _ in fresh) and any(w for _, w in fresh)  # the comparison compared matches, not only misses


_pieces = st.sampled_from(
    list("abcAZ09 _-+/=:.()\n\t\"'`<>{}$%#@;,")
    + ["ghp_", "AKIA", "xoxb-", "sk_live_", "npm_", "AIza", "eyJ", "-----BEGIN ", "PRIVATE KEY-----"]
    + ["Authorization: Bearer ", "postgres://", "API_KEY=", "password: ", "token", "secret", "+44 20 7946 0958"]
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(st.lists(_pieces, max_size=40).map("".join), min_size=1, max_size=5))
def test_databases_read_back_answer_as_compiled_ones_on_generated_texts(tmp_path_factory, texts):
    _, cached = _cached_twice(tmp_path_factory.mktemp("hs"))
    assert _answers(cached, texts) == _answers(_engines(None), texts)


def _rewrite(path: Path, change) -> None:
    data = marshal.loads(path.read_bytes())
    path.write_bytes(marshal.dumps(change(data)))
    os.chmod(path, 0o600)


@pytest.mark.parametrize(
    "damage",
    [
        "garbage file",
        "flipped byte under its checksum",
        "bytes hyperscan refuses, with a matching checksum",
        "another shape",
    ],
)
def test_a_damaged_cache_is_compiled_anew_and_rewritten(tmp_path, damage):
    import hashlib

    import hyperscan

    first = DatabaseCache(hyperscan, tmp_path)
    _engines(first)
    first.save()
    path = cache_file(tmp_path, hyperscan)
    if damage == "garbage file":
        path.write_bytes(b"\x00not marshal" * 10)
    elif damage == "flipped byte under its checksum":
        _rewrite(path, lambda d: {k: (c, b[:100] + bytes([b[100] ^ 1]) + b[101:]) for k, (c, b) in d.items()})
    elif damage == "bytes hyperscan refuses, with a matching checksum":
        junk = b"not a hyperscan database" * 50
        _rewrite(path, lambda d: {k: (hashlib.blake2b(junk, digest_size=16).digest(), junk) for k in d})
    else:
        _rewrite(path, lambda d: {k: ("text", 3) for k in d})
    again = DatabaseCache(hyperscan, tmp_path)
    engines = _engines(again)
    assert again.stats == {"hits": 0, "misses": 2}
    texts = ["Use pnpm, not npm.", "call +44 20 7946 0958", "password: " + "hunter" + "22", "api token secret key"]
    assert _answers(engines, texts) == _answers(_engines(None), texts)
    assert again.save() and len(read_cache(path)) == 2  # rewritten whole


def test_a_database_of_other_patterns_is_never_used(tmp_path):
    import hyperscan

    cache = DatabaseCache(hyperscan, tmp_path)
    one = cache.compiled([b"alpha[0-9]+"], [int(hyperscan.HS_FLAG_SINGLEMATCH)])
    cache.save()
    again = DatabaseCache(hyperscan, tmp_path)
    other = again.compiled([b"beta[0-9]+"], [int(hyperscan.HS_FLAG_SINGLEMATCH)])
    flagged = again.compiled([b"alpha[0-9]+"], [int(hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_CASELESS)])
    assert again.stats == {"hits": 0, "misses": 2}

    def matches(db, data: bytes) -> list[int]:
        seen: list[int] = []
        db.scan(data, match_event_handler=lambda i, s, e, f, c: seen.append(i))
        return seen

    assert matches(one, b"x alpha7") == [0] and matches(other, b"x alpha7") == []
    assert matches(other, b"beta1") == [0] and matches(flagged, b"ALPHA1") == [0]


def _prepare_in_a_process(home: Path, *, judging: bool) -> None:
    code = (
        "from memzoi.runs.checkimports import load_judging; load_judging()\n" if judging else ""
    ) + "import memzoi.safety.prepared as p; assert p.ENGINE == 'hyperscan', p.ENGINE\n"
    env = {**os.environ, "MEMZOI_HOME": str(home)}
    env.pop("MEMZOI_PREFILTER", None)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)


def test_a_judging_run_keeps_the_databases_and_an_import_alone_writes_nothing(tmp_path):
    home = tmp_path / "home"
    _prepare_in_a_process(home, judging=False)
    assert not list(home.rglob("hyperscan-db-*"))  # importing a module never writes a file
    _prepare_in_a_process(home, judging=True)
    (kept,) = home.rglob("hyperscan-db-*")
    assert kept.stat().st_mode & 0o777 == 0o600 and len(read_cache(kept)) == 2
    before = kept.stat().st_mtime_ns, kept.read_bytes()
    _prepare_in_a_process(home, judging=True)  # read back, nothing compiled: not rewritten
    assert (kept.stat().st_mtime_ns, kept.read_bytes()) == before
