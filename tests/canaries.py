"""Secret canaries built at run time (no credential is in the repository's files) and the checks that none was
stored or echoed: :func:`assert_not_stored` reads every database under a folder, raw (with its ``-wal`` and
``-journal``) and dumped, and :func:`assert_not_in` checks a text. Neither ever quotes what it checks."""

from __future__ import annotations

import secrets
import sqlite3
import string
from pathlib import Path

import pytest

_ALNUM = string.ascii_letters + string.digits


def canary() -> str:
    """A fresh GitHub-token-shaped value (``ghp_`` and 36 random letters and digits): a credential detector
    flags it, and no other text of a test holds it by chance."""
    return "ghp_" + "".join(secrets.choice(_ALNUM) for _ in range(36))


def assert_not_in(text: str, *values: str, what: str = "the output") -> None:
    """None of ``values`` appears in ``text`` (the failure never quotes either)."""
    # pytest.fail, not assert: an assertion's report would quote the canary
    for i, value in enumerate(values):
        if value in text:
            pytest.fail(f"canary {i} appears in {what}")


def assert_not_stored(folder: Path, *values: str) -> int:
    """No file under ``folder`` named ``*.db``, ``*.db-wal`` or ``*.db-journal`` holds one of ``values``, in its raw
    bytes (the text, and its lower-cased form) or in its SQL dump. Returns how many databases were read (a caller
    asserts some were, so the check cannot pass on an empty folder)."""
    read = 0
    for path in sorted(folder.rglob("*.db*")):
        if not path.is_file():
            continue
        raw = path.read_bytes()
        for i, value in enumerate(values):
            if value.encode() in raw or value.lower().encode() in raw.lower():
                pytest.fail(f"canary {i} is stored in {path.name}")
        if path.suffix == ".db":
            read += 1
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                assert_not_in("\n".join(conn.iterdump()), *values, what=f"the dump of {path.name}")
            finally:
                conn.close()
    return read
