"""What a run of ``memzoi check`` that judges files imports, loaded at once (:func:`load_judging`) with the
patterns those modules compile taken from the regex code cache (:mod:`memzoi.base.regexcache`). A replayed run
(:mod:`memzoi.runs.checkreplay`) imports none of it; a run that judges even one file imports all of it. The language
server loads the part a document's diagnostics need (:data:`ANALYSING`) the same way when it registers a project.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from pathlib import Path

#: What judging a file imports (the analysis, the detectors, YAML, the configuration, the store's entries), loaded
#: by :func:`load_judging`.
JUDGING = (
    "memzoi.judge.config",
    "memzoi.judge.analysis",
    "memzoi.safety.scan",
    "memzoi.runs.checkfiles",
    "memzoi.stores.verdictcache",
    "memzoi.ledger.view",
    "memzoi.project.gitfacts",
)

#: What diagnosing one document needs of :data:`JUDGING` (the language server's first diagnostics come before the
#: store's modules load): the first modules of it, so that their patterns are a part of those ``check`` loads and
#: the cache file the two share is not rewritten by each in turn.
ANALYSING = JUDGING[:3]


def load_judging(names: tuple[str, ...] = JUDGING) -> None:
    """Import ``names`` (:data:`JUDGING`, or :data:`ANALYSING`; once per process) with the patterns they compile
    taken from the regex code cache in ``$MEMZOI_HOME/cache`` (:mod:`memzoi.base.regexcache`): a replayed run
    imports none of it; a judging run imports all of it anyway. The hyperscan prefilter's databases, when a run
    compiles them, are kept in the same folder (:func:`memzoi.safety.prefilter.keep_in`)."""
    if all(name in sys.modules for name in names):
        return
    directory = _cache_dir()
    with _patterns_in(directory):
        for name in names:
            # the import statement's route, which `python -X importtime` reports (import_module's is not)
            __import__(name)
    from ..safety import prefilter  # noqa: PLC0415 lazy: start-up

    # the prefilter's databases, compiled before the workers fork (memzoi.safety.prepared), are kept there too
    prefilter.keep_in(directory)


def cached_patterns() -> AbstractContextManager[dict[str, int]]:
    """:func:`memzoi.base.regexcache.regex_code_cache` of ``$MEMZOI_HOME/cache`` (none where that folder cannot be
    made): imports made within it take the patterns they compile from the cache (``memzoi check``'s judging
    imports; ``memzoi search`` and the MCP server, whose query scrub imports the detectors)."""
    return _patterns_in(_cache_dir())


def _cache_dir() -> Path | None:
    from ..base.runtime import memzoi_home, private_dir  # noqa: PLC0415 lazy: start-up

    try:
        return private_dir(memzoi_home() / "cache")
    except OSError:
        return None


def _patterns_in(directory: Path | None) -> AbstractContextManager[dict[str, int]]:
    from ..base.regexcache import regex_code_cache  # noqa: PLC0415 lazy: start-up

    return regex_code_cache(directory)


__all__ = ["ANALYSING", "JUDGING", "cached_patterns", "load_judging"]
