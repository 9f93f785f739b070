"""Closed vocabularies that ``memzoi``'s parser lists in its help and ``choices``, in a module that imports nothing.

``memzoi --help`` builds the parser of every command; naming these words there must not load the ledger or
resident memory (SQLite, the detectors, pydantic). The modules that own each concept re-export their words under
their usual names (:data:`memzoi.ledger.RECOVERY_MODES`, :data:`memzoi.resident.scope.SCOPES`, …).
"""

#: How an uncertain change (ledger) or resident candidate is settled: put the before bytes back, complete the
#: after bytes, or accept the files as they are now.
RECOVERY_MODES = ("restore-before", "complete-after", "accept")
#: Resident memory files: Zuno's global ``MEMORY.md`` and the project's ``.zuno/RULES.md``.
RESIDENT_SCOPES = ("global", "project")
#: What a resident candidate does: add an entry, replace or remove the located one.
RESIDENT_ACTIONS = ("add", "replace", "remove")
#: Who proposes a resident candidate.
RESIDENT_SOURCES = ("user", "foreground_tool", "reflection")
