"""What an agent tool is and what it works with: :class:`Tool` (name, argument model, handler, annotations),
:class:`ToolResult`, the connection's :class:`Session` and the proposal :class:`RateLimit`. The table of tools and
the channel's rules are :mod:`memzoi.agent.tools`; the tools themselves are :mod:`.tools_memory`,
:mod:`.tools_resident`, :mod:`.tools_recall` and :mod:`.resident_turn`.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .schema import input_schema, output_schema


@dataclass
class ToolResult:
    """What a tool returns: ``data`` (structured JSON), ``text`` (readable) and whether it is an error."""

    data: dict[str, Any]
    text: str
    is_error: bool = False

    @classmethod
    def error(cls, code: str, message: str, **extra: Any) -> ToolResult:
        """An error result ``{"error": {"code", "message", …}}``."""
        return cls({"error": {"code": code, "message": message, **extra}}, f"{code}: {message}", True)


class RateLimit:
    """At most ``limit`` events in any ``window`` seconds (sliding window; thread-safe). ``clock`` is injectable
    for tests (monotonic seconds)."""

    def __init__(self, limit: int, window: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def take(self) -> float | None:
        """Record one event and return ``None``, or return the seconds to wait when the limit is reached."""
        with self._lock:
            now = self.clock()
            while self._times and now - self._times[0] >= self.window:
                self._times.popleft()
            if len(self._times) >= self.limit:
                return self.window - (now - self._times[0]) if self._times else self.window
            self._times.append(now)
            return None


@dataclass
class Session:
    """One agent connection: the project root, the client's name (the actor of its proposals) and the
    process-wide proposal rate limit."""

    root: Path
    client: str
    limit: RateLimit


#: The MCP tool annotations of a tool that only reads (no write, nothing outside the project).
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}


@dataclass(frozen=True)
class OutputModel:
    """A tool's output model named by its module below :mod:`memzoi.agent` (``outputs``, ``outputs_recall``) and
    class, imported when its schema is first asked for (the server's ``tools/list``): the output models describe
    results and never build one, so a session's first call imports none of them (issue 29: some 10 ms of its CPU)."""

    module: str
    name: str

    def load(self) -> type[BaseModel]:
        """The model class. Raises ``ImportError`` or ``AttributeError`` for a name that is not one."""
        model: type[BaseModel] = getattr(importlib.import_module(f".{self.module}", __package__), self.name)
        return model


@dataclass(frozen=True)
class Tool:
    """A registered tool. ``handler(session, args)`` returns a :class:`ToolResult` or raises :class:`Refusal`."""

    name: str
    title: str
    description: str
    args: type[BaseModel]
    handler: Callable[[Session, Any], ToolResult]
    mutating: bool = False
    annotations: dict[str, Any] = field(default_factory=dict)
    output: OutputModel | None = None

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (an object schema, optional properties plain optional, with the
        model's ``examples``; :func:`memzoi.agent.schema.input_schema`)."""
        return input_schema(self.args)

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of a successful result's structured content (``output``), or ``None``."""
        return output_schema(self.output.load() if self.output is not None else None)
