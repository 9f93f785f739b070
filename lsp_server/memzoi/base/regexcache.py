"""A start-up cache of compiled regular expressions (issue 29, "warm ``check``, one file changed").

The detectors, the YAML reader and the path rules compile some 210 patterns when they are imported; parsing and
compiling them took some 32 ms of the 170 ms of CPU the imports of a one-file ``memzoi check`` take at 10,000
records, 4 ms with this cache (reading it: 1 ms). :func:`regex_code_cache` keeps,
per pattern, what ``re`` hands the regular-expression engine (``_sre.compile``'s arguments: the flags, the
compiled code as a list of integers, the group count and names) in a ``marshal`` file, and within the context
builds each pattern it holds from them instead of parsing and compiling it again. The result is the same pattern
object ``re.compile`` makes (the engine checks the code it is given); an entry is keyed by the pattern's type, text
and flags, and the file by the interpreter's version and the engine's magic number, so a code list is only ever used
with the engine and the exact text it was compiled for. Patterns with ``re.DEBUG`` or ``re.LOCALE`` are compiled as
usual. A file that cannot be read or holds anything but that mapping is ignored and rewritten (atomically, mode
0600, :func:`memzoi.base.codecache.write_cache`'s way) with the entries the process used, when more than one
pattern in twenty was compiled anew. Outside the context nothing is patched; where ``re``'s private compiler
lacks what this needs, the context does nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The cache files' name prefix (their temporary files' family, :mod:`memzoi.base.privatewrite`).
FILE_PREFIX = "regex-code-"
#: ``(flags, code, groups - 1, groupindex, indexgroup)`` as ``_sre.compile`` takes them after the pattern.
Entry = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]


def cache_file(directory: Path) -> Path | None:
    """``regex-code-<digest>.marshal`` in ``directory``, the digest covering the interpreter's version and the
    engine's magic number; ``None`` where the engine is not CPython's."""
    magic = getattr(getattr(getattr(re, "_compiler", None), "_sre", None), "MAGIC", None)
    if magic is None:
        return None
    key = hashlib.blake2b(f"{sys.version}\n{sys.implementation.name}\n{magic}".encode(), digest_size=10).hexdigest()
    return directory / f"{FILE_PREFIX}{key}.marshal"


def _key(pattern: str | bytes, flags: int) -> bytes:
    raw = pattern.encode("utf-8", "surrogatepass") if isinstance(pattern, str) else pattern
    kind = b"s" if isinstance(pattern, str) else b"b"
    return hashlib.blake2b(kind + flags.to_bytes(8, "little", signed=True) + raw, digest_size=16).digest()


def _sound(value: Any) -> bool:
    """Whether ``value`` has the shape of an :data:`Entry` (the engine checks the code itself when it is built:
    a code it rejects is compiled anew, :func:`regex_code_cache`)."""
    return (
        isinstance(value, tuple)
        and len(value) == 5
        and type(value[0]) is int
        and type(value[1]) is list
        and type(value[2]) is int
        and type(value[3]) is dict
        and type(value[4]) is tuple
    )


def read_cache(path: Path) -> dict[bytes, Entry]:
    """The entries stored in ``path`` (:func:`memzoi.base.codecache.load_private`: missing, unreadable, corrupt, a
    symbolic link or another user's is ``{}``); ``{}`` when it holds anything but a mapping of 16-byte keys to
    entries."""
    from .codecache import load_private  # noqa: PLC0415 lazy: start-up

    data = load_private(path)
    if not isinstance(data, dict) or not all(isinstance(k, bytes) and len(k) == 16 for k in data):
        return {}
    if not all(_sound(v) for v in data.values()):
        return {}
    return data


@contextlib.contextmanager
def regex_code_cache(directory: Path | None) -> Iterator[dict[str, int]]:
    """Within the context, ``re`` builds each pattern the cache file of :func:`cache_file` in ``directory``
    (created 0700 by the caller) holds from its stored code, and compiles the others as usual, noting them. At exit
    the file is rewritten with the entries used when more than one pattern in twenty was compiled anew. Yields counters ``{"hits",
    "misses"}``. Without a directory, or where ``re``'s compiler lacks what this needs, it does nothing but yield."""
    stats = {"hits": 0, "misses": 0}
    compiler: Any = getattr(re, "_compiler", None)
    parser: Any = getattr(re, "_parser", None)
    original: Any = getattr(compiler, "compile", None)
    needed: tuple[Any, Any, Any] = (
        getattr(compiler, "_code", None),
        getattr(parser, "parse", None),
        getattr(compiler, "_sre", None),
    )
    path = cache_file(directory) if directory is not None and original is not None and all(needed) else None
    if path is None:
        yield stats
        return
    code_of, parse, engine = needed
    stored = read_cache(path)
    used: dict[bytes, Entry] = {}
    skip = re.DEBUG | re.LOCALE

    def compile(p: Any, flags: int = 0) -> Any:
        if not isinstance(p, str | bytes) or flags & skip:
            return original(p, flags)
        key = _key(p, flags)
        entry = stored.get(key)
        if entry is not None:
            try:
                got = engine.compile(p, *entry)
            except (TypeError, ValueError, RuntimeError, OverflowError):  # code the engine rejects
                got = None
            if got is not None:
                stats["hits"] += 1
                used[key] = entry
                return got
        stats["misses"] += 1
        parsed = parse(p, flags)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for k, i in groupindex.items():
            indexgroup[i] = k
        made: Entry = (
            int(flags | parsed.state.flags),  # marshal keeps plain ints only (not re.RegexFlag)
            [int(c) for c in code_of(parsed, flags)],
            parsed.state.groups - 1,
            groupindex,
            tuple(indexgroup),
        )
        used[key] = made
        return engine.compile(p, *made)

    compiler.compile = compile
    try:
        yield stats
    finally:
        compiler.compile = original
        # a pattern whose text changes with each process (the standard library's tokenizer builds one from a set)
        # is a miss every time: the file is rewritten only when more than one in twenty was compiled anew
        if stats["misses"] * 20 > stats["hits"] + stats["misses"]:
            from .codecache import write_cache  # noqa: PLC0415 lazy: start-up

            write_cache(path, used, FILE_PREFIX)


__all__ = ["FILE_PREFIX", "Entry", "cache_file", "read_cache", "regex_code_cache"]
