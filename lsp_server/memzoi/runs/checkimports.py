"""What a run of ``memzoi check`` that judges files imports, loaded at once (:func:`load_judging`) with the
patterns those modules compile taken from the regex code cache (:mod:`memzoi.base.regexcache`). A replayed run
(:mod:`memzoi.runs.checkreplay`) imports none of it; a run that judges even one file imports all of it.
"""

from __future__ import annotations

import importlib
import sys
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


def load_judging() -> None:
    """Import :data:`JUDGING` (once per process) with the patterns they compile taken from the regex code cache in
    ``$MEMZOI_HOME/cache`` (:mod:`memzoi.base.regexcache`): a replayed run imports none of it; a judging run
    imports all of it anyway. The hyperscan prefilter's databases, when a run compiles them, are kept in the same
    folder (:func:`memzoi.safety.prefilter.keep_in`)."""
    if all(name in sys.modules for name in JUDGING):
        return
    from ..base.regexcache import regex_code_cache  # noqa: PLC0415 lazy: start-up
    from ..base.runtime import memzoi_home, private_dir  # noqa: PLC0415 lazy: start-up

    try:
        directory: Path | None = private_dir(memzoi_home() / "cache")
    except OSError:
        directory = None
    with regex_code_cache(directory):
        for name in JUDGING:
            importlib.import_module(name)
    from ..safety import prefilter  # noqa: PLC0415 lazy: start-up

    # the prefilter's databases, compiled before the workers fork (memzoi.safety.prepared), are kept there too
    prefilter.keep_in(directory)


__all__ = ["JUDGING", "load_judging"]
