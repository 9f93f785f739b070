"""The start-up caches of ``memzoi.base.codecache``: attrs' generated code taken from a marshal file is the code attrs
compiles itself, a damaged file is ignored, the protocol library's second start is served from the file, and a
deferred package ``__init__`` runs only when a name of its own is used."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import attr

from memzoi.base import codecache


def _make_class():
    @attr.s(eq=True, order=True, frozen=True, repr=True, slots=True)
    class Position:
        line: int = attr.ib()
        character: int = attr.ib(default=0)
        label: str | None = attr.ib(default=None)

    return Position


METHODS = ("__init__", "__eq__", "__lt__", "__repr__", "__setattr__")


def _codes(cls) -> dict[str, object]:
    return {m: getattr(cls, m).__code__ for m in METHODS if hasattr(getattr(cls, m), "__code__")}


def test_cached_code_is_the_code_attrs_compiles(tmp_path):
    reference = _make_class()
    with codecache.attrs_code_cache(tmp_path, ["attr"]) as first:
        filled = _make_class()
    with codecache.attrs_code_cache(tmp_path, ["attr"]) as second:
        cached = _make_class()
    assert first["misses"] > 0 and first["hits"] == 0
    assert second["hits"] == first["misses"] and second["misses"] == 0
    assert set(_codes(reference)) >= {"__init__", "__eq__", "__lt__", "__repr__"}
    # Code objects compare by bytecode, constants, names, flags (the `from __future__` ones included) and file.
    assert _codes(cached) == _codes(reference) == _codes(filled)
    p, q = cached(1, 2, "a"), reference(1, 2, "a")
    assert (p.line, p.character, p.label) == (q.line, q.character, q.label) and repr(p) == repr(q)
    assert cached(1) < cached(2) and cached(1, 0) == cached(1)


def test_nothing_stays_patched_outside_the_context(tmp_path):
    import attr._make as make

    before = make._compile_and_eval
    with codecache.attrs_code_cache(tmp_path, ["attr"]):
        assert make._compile_and_eval is not before
    assert make._compile_and_eval is before
    with codecache.attrs_code_cache(None, ["attr"]) as stats:  # no directory: nothing patched, nothing written
        assert make._compile_and_eval is before
        _make_class()
    assert stats == {"hits": 0, "misses": 0}


def test_a_damaged_cache_file_is_ignored_and_rewritten(tmp_path):
    with codecache.attrs_code_cache(tmp_path, ["attr"]):
        _make_class()
    (path,) = tmp_path.glob("attrs-code-*.marshal")
    assert path.stat().st_mode & 0o777 == 0o600
    good = path.read_bytes()
    for damaged in (b"", good[: len(good) // 2], b"\x00garbage", b"{" + good[1:40], b"N"):
        path.write_bytes(damaged)
        assert codecache.read_cache(path) == {}
        with codecache.attrs_code_cache(tmp_path, ["attr"]) as stats:
            cls = _make_class()
        assert stats["hits"] == 0 and stats["misses"] > 0
        assert cls(3).line == 3
        assert len(codecache.read_cache(path)) == stats["misses"]


def test_a_symbolic_link_is_not_read(tmp_path):
    (tmp_path / "real").mkdir()
    with codecache.attrs_code_cache(tmp_path / "real", ["attr"]):
        _make_class()
    (real,) = (tmp_path / "real").glob("attrs-code-*.marshal")
    assert codecache.read_cache(real)
    link = tmp_path / "link.marshal"
    link.symlink_to(real)
    assert codecache.read_cache(link) == {}


def test_another_version_gets_another_file_and_the_old_one_goes(tmp_path):
    path = codecache.cache_file(tmp_path, ["attr"])
    assert path is not None and path == codecache.cache_file(tmp_path, ["attr"])
    assert codecache.cache_file(tmp_path, ["attr", "pytest"]) != path
    assert codecache.cache_file(tmp_path, ["no_such_package_memzoi"]) is None
    stale = tmp_path / "attrs-code-00000000000000000000.marshal"
    codecache.write_cache(stale, {})
    with codecache.attrs_code_cache(tmp_path, ["attr"]):
        _make_class()
    assert [p.name for p in tmp_path.glob("attrs-code-*")] == [path.name]


def test_the_protocol_library_starts_from_the_cache_the_second_time(tmp_path):
    script = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        from memzoi.base.codecache import attrs_code_cache
        with attrs_code_cache(Path({str(tmp_path)!r}), ["lsprotocol", "cattrs"]) as stats:
            import lsprotocol.types as t
        assert t.Position(line=1, character=2) == t.Position(line=1, character=2)
        print(json.dumps(stats))
    """)
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300
            ).stdout
        )
        for _ in range(2)
    ]
    assert runs[0]["misses"] > 300 and runs[0]["hits"] == 0
    assert runs[1]["hits"] >= runs[0]["misses"] - 5 and runs[1]["misses"] <= 5


def test_a_deferred_package_init_runs_at_the_first_name_of_its_own(tmp_path, monkeypatch):
    pkg = tmp_path / "memzoi_heavy_pkg"
    (pkg / "light").mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import sys\nsys.memzoi_heavy_ran = True\nfrom .light.part import VALUE\nWHOLE = VALUE * 2\n"
    )
    (pkg / "light" / "__init__.py").write_text("")
    (pkg / "light" / "part.py").write_text("VALUE = 21\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delattr(sys, "memzoi_heavy_ran", raising=False)
    try:
        assert codecache.defer_package_init("memzoi_heavy_pkg")
        assert not codecache.defer_package_init("memzoi_heavy_pkg")  # already registered
        from memzoi_heavy_pkg.light.part import VALUE

        assert VALUE == 21 and not hasattr(sys, "memzoi_heavy_ran")
        import memzoi_heavy_pkg

        assert memzoi_heavy_pkg.WHOLE == 42 and sys.memzoi_heavy_ran
        from memzoi_heavy_pkg import VALUE as again

        assert again == 21
    finally:
        for name in [m for m in sys.modules if m.startswith("memzoi_heavy_pkg")]:
            del sys.modules[name]
    assert not codecache.defer_package_init("memzoi_no_such_pkg")
    assert not codecache.defer_package_init("json.decoder")  # a module, not a package
