"""The memory types and lanes of Memzoi's current profile (reference ``memzoi-format.md`` §1.2), as ``Literal`` types
in a module that imports only :mod:`typing`: the agent tools' argument models (:mod:`memzoi.agent.arguments`) name
them without loading the record and proposal models (:mod:`memzoi.models`, with the YAML reader some 20 ms of the
CPU of an MCP session's first ``search_memory``, issue 29), which re-export them under their usual names
(:data:`memzoi.models.common.MemoryType`, :data:`memzoi.models.common.Lane`).
"""

from typing import Literal

MemoryType = Literal[
    "fact",
    "preference",
    "decision",
    "procedure",
    "episode",
    "relationship",
    "warning",
    "failed_attempt",
    "risk",
    "instruction_projection",
]
Lane = Literal["session", "semantic", "episodic", "procedural"]

__all__ = ["Lane", "MemoryType"]
