"""Zuno's resident memory: two small capped files pasted into every agent prompt, changed only through
reviewed candidates (reference ``zuno-memory.md``).

Modules: :mod:`.format` (entries, delimiter, caps, prompt block), :mod:`.locator` (operations and how a
locator selects an entry), :mod:`.scope` (file locations and caps from ``[resident]``), :mod:`.threats` (the
detector scan), :mod:`.store` (reading, drift checks, backups, exact replacement under the file's OS lock),
:mod:`.candidates` (the durable candidate table), :mod:`.reconcile` (restart classification, never a replay),
:mod:`.service` (propose, promotion, apply, reject, undo, recovery), :mod:`.views` (what the CLI and the editor
show), :mod:`.editor` (findings, hovers and lenses of the resident files).

Layer 4 of the core (project = resident): Zuno's resident memory files and their reviewed candidates.

May import: base, read, judge, models, safety, ledger, project, resident.
"""
