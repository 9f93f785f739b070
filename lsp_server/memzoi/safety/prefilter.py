"""A hyperscan prefilter in front of the detectors' broad regular expressions, with Python's ``re`` as the fallback.

Some detector patterns (phone numbers, e-mail addresses, Memzoi's rules) run over nearly every text, and the usual
answer is "no match". hyperscan (https://intel.github.io/hyperscan/, PyPI ``hyperscan``) scans one text for all of
them at once in microseconds. It is only a gate: compiled with ``HS_FLAG_PREFILTER`` it reports a superset of the
patterns that can match (the hyperscan guide, "Prefiltering Mode": "no false negatives"), and a detector whose
pattern may match runs its exact ``re`` search as before, so the findings are those of the plain search
(``tests/safety/test_prefilter.py`` compares both engines on the corpus and on generated texts).

A detector module declares a pattern with :func:`register` when it is imported, and asks :meth:`Ctx.may
<memzoi.safety.context.Ctx.may>` (which calls :func:`possible` once per text) before its search. The database is
compiled by :func:`prepare` (importing :mod:`.prepared` does it), which runs over many files call before their
workers fork (:data:`memzoi.base.parallel.PRELOAD`); a single file's check does not pay for the compilation. The gate is used
only where both engines read a text the same way: texts of plain ASCII without the characters U+001C to U+001F
(Python's ``\\s`` includes them, hyperscan's does not). Any other text, a pattern hyperscan cannot compile, a
machine without the ``hyperscan`` package (it has wheels for CPython on Linux and macOS) or ``MEMZOI_PREFILTER=re``
in the environment mean: every pattern may match, the plain search runs.

The same engine finds a text's gate words (:func:`words_in`, the words :func:`memzoi.safety.context.gate_words`
declares, which :attr:`Ctx.words <memzoi.safety.context.Ctx.words>` keeps): one scan for every declared word
instead of splitting the text into all its words and looking each up, with the split as the fallback.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

from .prefilter_cache import DatabaseCache

#: the names and compiled patterns declared with :func:`register`, in declaration order
_PATTERNS: dict[str, re.Pattern[str]] = {}
#: the gate words declared with :func:`register_words` (by :func:`memzoi.safety.context.gate_words`)
_WORDS: set[bytes] = set()
#: ASCII characters that Python's ``\s`` reads as white space and hyperscan's does not
_UNLIKE = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")
#: a word :func:`words_in` can find: what a split of its text (only these bytes and spaces) can give
_WORD = re.compile(rb"[0-9a-z]+")
#: an escape of the pattern source: ``\\uXXXX`` / ``\\UXXXXXXXX`` (a code point above U+00FF) or any other one
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)


class _Engine:
    """One compiled hyperscan database of every registered pattern it accepts."""

    def __init__(self, hs: Any, patterns: dict[str, re.Pattern[str]], cache: DatabaseCache | None = None) -> None:
        self.hs = hs
        self.names: list[str] = []
        self.always: frozenset[str] = frozenset()
        accepted: list[tuple[str, bytes, int]] = []
        always = set()
        for name, regex in patterns.items():
            flags = _flags(hs, regex)
            if flags is None:
                always.add(name)  # never gated: the plain search always runs
                continue
            accepted.append((name, ascii_source(regex.pattern), flags))
        self.db: Any = None
        try:
            self.db = _compiled(hs, accepted, cache)
        except Exception:  # hyperscan.error: find the patterns it cannot approximate and leave them out
            always.update(name for name, src, flags in accepted if not _compiles(hs, src, flags))
            accepted = [a for a in accepted if a[0] not in always]
            self.db = _compiled(hs, accepted, cache)
        self.always = frozenset(always)
        self.names = [name for name, _, _ in accepted]
        self.local = threading.local()  # a scratch space belongs to one thread

    def possible(self, data: bytes) -> frozenset[str]:
        """The registered names that may match ``data``."""
        if self.db is None:
            return self.always
        names = self.names
        return self.always.union(names[i] for i in _scan(self.hs, self.db, self.local, data))


class _Words:
    """One compiled hyperscan database of the declared gate words, each as `` word `` (a maximal run of a text
    whose other bytes are spaces, as :func:`words_in` is given it)."""

    def __init__(self, hs: Any, words: set[bytes], cache: DatabaseCache | None = None) -> None:
        self.hs = hs
        self.count = len(words)  # the declarations it knows: a later one makes it stale (words_in falls back)
        # a word with another byte never comes out of a split of such a text: it can be left out
        self.words = sorted(w for w in words if _WORD.fullmatch(w))
        self.db: Any = None
        if self.words:
            self.db = (cache or DatabaseCache(hs, None)).compiled(
                [b" " + w + b" " for w in self.words], [int(hs.HS_FLAG_SINGLEMATCH)] * len(self.words)
            )
        self.local = threading.local()

    def found(self, spaced: bytes) -> frozenset[bytes]:
        """The declared words that are maximal runs of ``spaced`` (bytes ``[0-9a-z]`` and spaces only)."""
        if self.db is None:
            return frozenset()
        words = self.words
        return frozenset([words[i] for i in _scan(self.hs, self.db, self.local, b" " + spaced + b" ")])


#: this process's id, kept by a fork hook (``os.getpid()`` is a system call, and :func:`_scan` runs for every text)
_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def _seen(ident: int, start: int, end: int, flags: int, context: list[int]) -> None:
    context.append(ident)


def _scan(hs: Any, db: Any, local: threading.local, data: bytes) -> list[int]:
    """The ids of ``db``'s patterns that match ``data`` (each once: the patterns are single-match), with the
    scratch space of this thread and process."""
    scratch = getattr(local, "scratch", None)
    if scratch is None or getattr(local, "pid", None) != _pid:
        scratch = local.scratch = hs.Scratch(db)
        local.pid = _pid
    seen: list[int] = []
    db.scan(data, match_event_handler=_seen, context=seen, scratch=scratch)
    return seen


def _flags(hs: Any, regex: re.Pattern[str]) -> int | None:
    """hyperscan flags for ``regex`` (prefilter, one report per pattern, and the ``re`` flags it has), or None
    for a flag hyperscan has no counterpart for (``re.VERBOSE``)."""
    if regex.flags & re.VERBOSE:
        return None
    flags = hs.HS_FLAG_PREFILTER | hs.HS_FLAG_SINGLEMATCH | hs.HS_FLAG_ALLOWEMPTY
    if regex.flags & re.IGNORECASE:
        flags |= hs.HS_FLAG_CASELESS
    if regex.flags & re.MULTILINE:
        flags |= hs.HS_FLAG_MULTILINE
    if regex.flags & re.DOTALL:
        flags |= hs.HS_FLAG_DOTALL
    return int(flags)


def ascii_source(pattern: str) -> bytes:
    """``pattern`` as hyperscan reads it for texts of plain ASCII: every escaped code point above U+00FF
    (``\\u2028``) becomes ``\\xff``, a byte no ASCII text holds (so a class keeps its ASCII members, a range of
    such code points matches nothing in the text, and outside a class it never matches, as in Python for ASCII
    text); a literal non-ASCII character becomes UTF-8 bytes, which no ASCII text holds either."""

    def one(m: re.Match[str]) -> str:
        esc = m.group(0)
        return "\\xff" if esc[1] in "uU" and int(esc[2:], 16) > 0xFF else esc

    return _ESCAPE.sub(one, pattern).encode("utf-8")


def _compiled(hs: Any, accepted: list[tuple[str, bytes, int]], cache: DatabaseCache | None = None) -> Any:
    if not accepted:
        return None
    return (cache or DatabaseCache(hs, None)).compiled([src for _, src, _ in accepted], [f for _, _, f in accepted])


def _compiles(hs: Any, source: bytes, flags: int) -> bool:
    try:
        _compiled(hs, [("", source, flags)])
    except Exception:  # hyperscan.error: a construct it cannot approximate; the plain search stays
        return False
    return True


_lock = threading.Lock()
_engine: _Engine | None = None
_words: _Words | None = None
_disabled = False
_missing = False
#: where the compiled databases are kept between runs (:func:`keep_in`); ``None``: compiled in every process
_cache_dir: Path | None = None


def _load() -> _Engine | None:
    global _engine, _missing, _words
    if _disabled or _missing:
        return None
    with _lock:
        if os.environ.get("MEMZOI_PREFILTER", "") == "re":
            _missing = True  # asked for the plain search
            return None
        if _engine is None and not _disabled:
            try:
                import hyperscan  # noqa: PLC0415 lazy: platform - an optional dependency with wheels on some platforms

                cache = DatabaseCache(hyperscan, _cache_dir)
                _engine = _Engine(hyperscan, dict(_PATTERNS), cache)
            except Exception as err:  # ImportError, or hyperscan.error from a database it cannot build
                logging.getLogger(__name__).debug("hyperscan prefilter not used: %s", type(err).__name__)
                _missing = True
                return None
            try:
                _words = _Words(hyperscan, set(_WORDS), cache)
            except Exception as err:  # hyperscan.error: the words are then found by splitting the text
                logging.getLogger(__name__).debug("hyperscan gate words not used: %s", type(err).__name__)
            cache.save()
        return _engine


def keep_in(directory: Path | None) -> None:
    """Keep the compiled databases in ``directory`` (a private cache folder, :mod:`.prefilter_cache`) from the next
    :func:`prepare` on, and read them from there when they were compiled from the same patterns; ``None``: compile
    them in every process (the default: importing a module never writes a file)."""
    global _cache_dir
    _cache_dir = directory


def register(name: str, regex: re.Pattern[str]) -> str:
    """Declare ``regex`` (a compiled ``re`` pattern over ``str``) under ``name`` and return ``name``. Call it when
    the detector's module is imported, before any text is scanned; a later declaration is ignored by an engine
    already compiled (its name is then never gated). Raises ``ValueError`` for a name declared with another
    pattern."""
    known = _PATTERNS.get(name)
    if known is not None and known is not regex:
        raise ValueError(f"prefilter pattern {name!r} is declared twice")
    _PATTERNS[name] = regex
    return name


def register_words(words: frozenset[bytes]) -> None:
    """Declare gate words (lower-case ASCII alphanumeric, as bytes) for :func:`words_in`; called by
    :func:`memzoi.safety.context.gate_words`. A word declared after :func:`prepare` makes :func:`words_in` answer
    ``None`` from then on (the caller splits the text), so no declared word is ever missed."""
    _WORDS.update(words)


def possible(text: str) -> frozenset[str] | None:
    """The declared names whose pattern may match ``text`` (a superset of those that do), or ``None`` when every
    pattern must be searched: the prefilter is not prepared (:func:`prepare`), hyperscan is missing, or the two
    engines do not read ``text`` alike (see the module docstring)."""
    engine = _engine
    if engine is None or _disabled or not text.isascii():
        return None
    data = text.encode("ascii")
    # four byte searches: a character-class regex costs some 3 ns per character, these a fraction of that
    if _UNLIKE[0] in data or _UNLIKE[1] in data or _UNLIKE[2] in data or _UNLIKE[3] in data:
        return None
    return engine.possible(data)


def words_in(spaced: bytes) -> frozenset[bytes] | None:
    """The declared gate words (:func:`register_words`) that are words of ``spaced``, a text whose bytes are
    ``[0-9a-z]`` and spaces (its words: its maximal runs of the others, as ``spaced.split()`` gives them); the
    same set as ``set(spaced.split()) & declared``. ``None`` when the caller must split: the prefilter is not
    prepared or turned off, hyperscan is missing, or a word was declared after it was prepared."""
    words = _words
    if words is None or _disabled or words.count != len(_WORDS):
        return None
    return words.found(spaced)


def prepare() -> str:
    """Compile the prefilter of every pattern declared so far (about 70 ms, once per process: a run over many
    files calls it before its workers fork, see :mod:`.prepared`); a pattern declared later is never gated.
    Returns the engine in use: ``hyperscan``, or ``re`` when it is not installed, is turned off
    (:func:`set_enabled`, ``MEMZOI_PREFILTER=re``) or fails to compile."""
    return "hyperscan" if _load() is not None else "re"


def engine_name() -> str:
    """``hyperscan`` when the prefilter is prepared and in use, else ``re`` (every pattern searched)."""
    return "hyperscan" if _engine is not None and not _disabled else "re"


def set_enabled(enabled: bool) -> None:
    """Turn the hyperscan prefilter on or off in this process (off: every pattern is searched, as on a machine
    without hyperscan; on: as :func:`prepare`). For tests and measurements; ``MEMZOI_PREFILTER=re`` turns it off
    from the environment."""
    global _disabled
    with _lock:
        _disabled = not enabled
    if enabled:
        prepare()


__all__ = [
    "ascii_source",
    "engine_name",
    "keep_in",
    "possible",
    "prepare",
    "register",
    "register_words",
    "set_enabled",
    "words_in",
]
