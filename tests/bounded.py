"""Running a process that a regression could make read without end (a link to ``/dev/zero``) or wait forever (a
FIFO): under an address-space limit, so it fails with ``MemoryError`` instead of eating the machine's memory, and
with a timeout, so a hang fails the test instead of stopping the run. Never read such a file in the test process."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

#: The address space a bounded process may take (bytes): ample for a command or a server, far below the machine.
MEMORY_LIMIT = 3 * 1024**3
#: Seconds a bounded command may take (a hang fails the test here).
TIMEOUT = 90

BIN = Path(sys.executable).parent


def limit_memory() -> None:
    """``preexec_fn``: cap the child's address space at :data:`MEMORY_LIMIT` (its children inherit it)."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (its first item a console script of this environment, e.g. ``memzoi``) bounded; raises
    ``subprocess.TimeoutExpired`` (failing the test) when it takes longer than :data:`TIMEOUT`."""
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=TIMEOUT,
        preexec_fn=limit_memory,  # noqa: PLW1509 - only sets a resource limit
    )


def module_command(module: str) -> list[str]:
    """``python -m module`` under :data:`MEMORY_LIMIT`, for a client that starts the server itself."""
    code = (
        "import resource, runpy, sys; "
        f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT})); "
        f"sys.argv[0] = {module!r}; runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
    )
    return [sys.executable, "-c", code]


def hostile(path: Path, kind: str) -> None:
    """Make ``path`` hostile: ``zero`` (a symlink to ``/dev/zero``, which git can carry), ``fifo`` (a named pipe with
    no writer), ``dir`` (a folder), ``big`` (a 10 MB regular file), ``bad`` (invalid TOML: the baseline)."""
    if kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "big":
        path.write_bytes(b"# " + b"x" * 10_000_000 + b"\n")
    else:
        path.write_text("[x\n", encoding="utf-8")
