"""The language server's kept answer to ``initialize`` (issue 29, start-up): what lets ``memzoi-lsp`` answer before
it imports its protocol libraries.

The ``InitializeResult`` a server sends is computed from the client's ``initialize`` params and the server's code
(pygls's ``ServerCapabilitiesBuilder`` over the registered features and commands, LSP 3.17 §"Initialize Request"),
so for the same params and the same code it is the same JSON. The first start computes it as usual and keeps its
``result`` here; a later start with the same key sends the kept result at once, then imports the server, lets it
handle the same request and drops its response (a different one replaces the kept result and is logged).

* :func:`answer_key`: a BLAKE2 digest of the params (without ``processId``, which changes at every start) and a
  :func:`code_stamp` of the server's packages;
* :func:`read_answer` / :func:`write_answer`: ``initialize-<key>.json`` in a private directory (the memzoi home's
  ``cache``), written atomically; a missing, unreadable or damaged file is a miss, never an answer; at most
  :data:`MAX_KEPT` are kept (the oldest go).

Only capabilities are kept (no path, no setting value): the key is a digest, the file holds the result object.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: The kept answers' name prefix (their temporary files' family, :mod:`memzoi.base.privatewrite`).
PREFIX = "initialize-"
#: Kept answers beyond this many (one per workspace, client and code version) are removed, oldest first.
MAX_KEPT = 32


def code_stamp(packages: Iterable[str]) -> str:
    """A digest of the code of the top-level ``packages`` (found without importing them): the interpreter's
    version and, for each package, the path, size and modification time (ns) of every ``.py`` file of its own
    directory (subpackages not walked). An install or an edit of a file changes it. An absent package counts as
    ``missing``."""
    h = hashlib.blake2b(digest_size=16)
    h.update(sys.version.encode())
    for name in packages:
        spec = importlib.util.find_spec(name)
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        if not locations:
            h.update(f"{name}\0missing\0".encode())
            continue
        for location in locations:
            try:
                entries = sorted((e for e in os.scandir(location) if e.name.endswith(".py")), key=lambda e: e.name)
            except OSError:
                h.update(f"{location}\0unreadable\0".encode())
                continue
            for entry in entries:
                st = entry.stat()
                h.update(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def answer_key(params: Any, stamp: str) -> str:
    """The key of an ``initialize`` request's answer: a digest of ``params`` (a JSON object; ``processId``
    left out) as canonical JSON and the server's :func:`code_stamp` ``stamp``."""
    kept = {k: v for k, v in params.items() if k != "processId"} if isinstance(params, dict) else params
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.blake2b(f"{stamp}\0{text}".encode(), digest_size=16).hexdigest()


def read_answer(directory: Path | None, key: str) -> Any | None:
    """The kept ``result`` for ``key``, or ``None`` (no directory, no file, unreadable, or not a JSON object
    holding exactly ``key`` and a ``result`` object)."""
    if directory is None:
        return None
    try:
        data = json.loads((directory / f"{PREFIX}{key}.json").read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("result"), dict):
        return None
    return data["result"]


def write_answer(directory: Path | None, key: str, result: Any) -> bool:
    """Keep ``result`` (a JSON object) for ``key``, atomically (:func:`memzoi.base.privatewrite.write_private`: a
    temporary file renamed over, mode 0600; what killed writers of kept answers left goes first). Returns False when
    it could not be written (no directory, a full disk): the next start computes it again."""
    if directory is None or not isinstance(result, dict):
        return False
    from .privatewrite import write_private  # noqa: PLC0415 lazy: start-up

    data = json.dumps({"key": key, "result": result}, separators=(",", ":")).encode()
    if not write_private(directory / f"{PREFIX}{key}.json", data, family=PREFIX):
        return False
    _prune(directory)
    return True


def _prune(directory: Path) -> None:
    """Remove the oldest kept answers beyond :data:`MAX_KEPT` (a file another process removed first is fine)."""
    try:
        kept = [(e.stat().st_mtime_ns, e.path) for e in os.scandir(directory) if e.name.startswith(PREFIX)]
    except OSError:
        return
    for _, path in sorted(kept)[: max(0, len(kept) - MAX_KEPT)]:
        try:
            os.unlink(path)
        except OSError:
            pass


__all__ = ["MAX_KEPT", "PREFIX", "answer_key", "code_stamp", "read_answer", "write_answer"]
