"""The regex code cache (:mod:`memzoi.base.regexcache`): a pattern built from stored code is the pattern ``re``
compiles (same text, flags, groups and engine code), for every pattern the judging modules compile at import too;
a damaged file is ignored and rewritten; nothing stays patched outside the context."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

from memzoi.base import regexcache

PATTERNS = [
    (r"a(?P<name>b+)c", 0),
    (r"(?i)ghp_[a-z0-9]{36}", 0),
    (r"^\s*-{3}\s*$", re.MULTILINE),
    (r"[\u00e9\U0001f600]+|(x)(?:y)?", re.IGNORECASE | re.DOTALL),
    (rb"\x00(?P<k>[^\n]+)", 0),
    (r"\bword\b", re.ASCII | re.VERBOSE),
]


def _fresh(pattern, flags):
    """A pattern compiled by ``re``'s own compiler (not its cache of patterns)."""
    return re._compiler.compile(pattern, flags)


def test_patterns_built_from_stored_code_are_the_ones_re_compiles(tmp_path):
    with regexcache.regex_code_cache(tmp_path) as first:
        made = [re._compiler.compile(p, f) for p, f in PATTERNS]
    assert first == {"hits": 0, "misses": len(PATTERNS)}
    with regexcache.regex_code_cache(tmp_path) as second:
        again = [re._compiler.compile(p, f) for p, f in PATTERNS]
    assert second == {"hits": len(PATTERNS), "misses": 0}
    for (p, f), a, b in zip(PATTERNS, made, again, strict=True):
        fresh = _fresh(p, f)
        assert a == b == fresh  # text, flags and engine code
        assert (b.groups, b.groupindex, b.flags) == (fresh.groups, fresh.groupindex, fresh.flags)
    assert again[0].match("abbc").group("name") == "bb"


def test_nothing_stays_patched_and_debug_or_locale_patterns_are_compiled_as_usual(tmp_path):
    original = re._compiler.compile
    with regexcache.regex_code_cache(tmp_path) as stats:
        re._compiler.compile(rb"[a-z]+", re.LOCALE)
    assert stats == {"hits": 0, "misses": 0}
    assert re._compiler.compile is original
    with regexcache.regex_code_cache(None) as stats:  # no directory: nothing is patched
        assert re._compiler.compile is original


def test_a_damaged_or_foreign_file_is_ignored_and_rewritten(tmp_path):
    path = regexcache.cache_file(tmp_path)
    assert path is not None
    for damaged in (b"not marshal", b"\xe9" * 40):
        path.write_bytes(damaged)
        assert regexcache.read_cache(path) == {}
        with regexcache.regex_code_cache(tmp_path) as stats:
            got = re._compiler.compile(r"x(y)", 0)
        assert stats["misses"] == 1 and got == _fresh(r"x(y)", 0)
        assert len(regexcache.read_cache(path)) == 1


def test_every_pattern_the_judging_modules_compile_is_the_same_from_the_cache(tmp_path):
    script = textwrap.dedent(
        """
        import re, sys
        from memzoi.runs.checkimports import load_judging
        load_judging()
        bad = total = 0
        for name, mod in list(sys.modules.items()):
            if not name.startswith("memzoi"):
                continue
            for value in list(vars(mod).values()):
                if isinstance(value, re.Pattern):
                    total += 1
                    bad += value != re._compiler.compile(value.pattern, value.flags)
        print(total, bad)
        """
    )
    env = {**os.environ, "MEMZOI_HOME": str(tmp_path)}
    runs = [
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
        for _ in range(2)
    ]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr
    (cached,) = list((tmp_path / "cache").glob("regex-code-*.marshal"))
    assert len(regexcache.read_cache(cached)) > 100
    total, bad = map(int, runs[1].stdout.split())  # the second run built them from the cache
    assert total > 50 and bad == 0


def test_stored_code_the_engine_rejects_is_compiled_anew(tmp_path):
    path = regexcache.cache_file(tmp_path)
    assert path is not None
    with regexcache.regex_code_cache(tmp_path):
        re._compiler.compile(r"a(b)c", 0)
    (key, entry), *_ = regexcache.read_cache(path).items()
    from memzoi.base.codecache import write_cache

    for code in ([999_999, 1, 2], ["x"], [2**70]):
        write_cache(path, {key: (entry[0], code, *entry[2:])})
        with regexcache.regex_code_cache(tmp_path) as stats:
            got = re._compiler.compile(r"a(b)c", 0)
        assert stats == {"hits": 0, "misses": 1} and got == _fresh(r"a(b)c", 0)
