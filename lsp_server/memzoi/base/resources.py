"""Files the package ships: the diagnostics reference (``docs/diagnostics.md``) and the JSON Schemas (``schemas/``).

A wheel carries them under ``memzoi/_data/`` (``setup.py`` copies them there at build time, so the repository
keeps one copy of each); a source checkout or editable install reads them from the repository. The language
server's links (``codeDescription.href``) point at the shipped reference as a ``file:`` URI: the editor runs on the
machine that has it installed. A SARIF file is uploaded and read elsewhere, where such a URI is a dead link to
another machine, so SARIF carries a ``helpUri`` only for :data:`PUBLIC_DOCS_URL`, a reference the project really
publishes (none yet: the rules embed the help text instead). A link must never point at a page that may not exist.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

#: Address of a published copy of ``docs/diagnostics.md`` that this project owns (``None``: there is none yet). Set
#: it when the project has one; SARIF rules then link each code's section there.
PUBLIC_DOCS_URL: str | None = None

#: The folder of the ``memzoi`` package (from this module's depth in it, so a move inside the package keeps it).
_PACKAGE = Path(__file__).resolve().parents[__name__.count(".") - 1]
_SOURCES = (_PACKAGE / "_data", _PACKAGE.parents[1])  # wheel, then repository checkout


def shipped(*parts: str) -> Path | None:
    """The shipped file ``parts`` (e.g. ``("docs", "diagnostics.md")``), or ``None`` when this installation
    lacks it (a broken install)."""
    for base in _SOURCES:
        path = base.joinpath(*parts)
        if path.is_file():
            return path
    return None


def diagnostics_href(code: str) -> str:
    """``file:`` URI of ``code``'s section in the shipped diagnostics reference (``…/diagnostics.md#code``); the
    ``memzoi explain CODE`` command prints the same section."""
    return f"{_diagnostics_reference()}#{code}"


@lru_cache(maxsize=1)
def _diagnostics_reference() -> str:
    """The shipped reference's URI, looked up once per process (the installation does not move under it; the
    language server links every diagnostic it publishes to it, and the lookup is a file-system stat)."""
    path = shipped("docs", "diagnostics.md")
    return path.as_uri() if path is not None else "memzoi:docs/diagnostics.md"


def public_diagnostics_href(code: str) -> str | None:
    """``code``'s section in the published reference (:data:`PUBLIC_DOCS_URL`), or ``None`` when the project
    publishes none: the link for output that leaves this machine (SARIF ``helpUri``)."""
    if not PUBLIC_DOCS_URL:
        return None
    return f"{PUBLIC_DOCS_URL.split('#', 1)[0]}#{code}"


@lru_cache(maxsize=1)
def diagnostic_sections() -> dict[str, str]:
    """Code → its Markdown section of the diagnostics reference (the text below ``### code``, trimmed)."""
    path = shipped("docs", "diagnostics.md")
    if path is None:
        return {}
    out: dict[str, str] = {}
    code: str | None = None
    lines: list[str] = []
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):  # a heading ends the section (fenced `# Title` lines do not)
            if code is not None:
                out[code] = "\n".join(lines).strip()
            m = re.fullmatch(r"### ([a-z0-9_]+)\s*", line)
            code, lines = (m.group(1), []) if m else (None, [])
            continue
        if code is not None:
            lines.append(line)
    if code is not None:
        out[code] = "\n".join(lines).strip()
    return out


def schema_names() -> list[str]:
    """Names of the shipped JSON Schemas (``record``, ``proposal``, …), sorted."""
    for base in _SOURCES:
        folder = base / "schemas"
        if folder.is_dir():
            found = sorted(p.name[: -len(".schema.json")] for p in folder.glob("*.schema.json"))
            if found:
                return found
    return []
