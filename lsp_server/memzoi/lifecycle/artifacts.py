"""The files of one materialization outside the repository's memory: which artifact a JSON file is, where its
siblings are, and writing a new one.

Memzoi's materialization (reference ``memzoi-format.md`` §4) passes a candidate, a plan and a decision as JSON
artifacts; none of them is memory, so they are never written inside ``.memzoi``. The editor keeps them side by
side as ``X.json``, ``X.plan.json`` and ``X.decision.json``; the command line writes one where ``--output`` says.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..base.nesting import json_too_deep
from ..ledger import Refusal
from .materialize import DECISION_SCHEMA, PLAN_SCHEMA
from .materialize_candidate import CANDIDATE_SCHEMA

KINDS = {CANDIDATE_SCHEMA: "candidate", PLAN_SCHEMA: "plan", DECISION_SCHEMA: "decision"}


def artifact_set(path: Path) -> dict[str, Path]:
    """``{"candidate", "plan", "decision"}`` paths of the materialization ``path`` belongs to, whichever of the
    three it is (``X.json``, ``X.plan.json``, ``X.decision.json`` side by side)."""
    name = path.name
    for suffix in (".plan.json", ".decision.json", ".json"):
        if name.endswith(suffix):
            base = name[: -len(suffix)]
            break
    else:
        base = path.stem
    return {
        kind: path.with_name(base + suffix)
        for kind, suffix in (("candidate", ".json"), ("plan", ".plan.json"), ("decision", ".decision.json"))
    }


#: The steps of a materialization in order, and which of its three files each needs and must not find yet.
STEPS = (
    ("plan", ("candidate",), "plan"),
    ("decide", ("candidate", "plan"), "decision"),
    ("materialize", ("candidate", "plan", "decision"), None),
)


def offered_steps(files: dict[str, Path]) -> list[str]:
    """The next step of the materialization whose files are ``files`` (:func:`artifact_set`): ``plan`` for a
    candidate without a plan, ``decide`` for a candidate and plan without a decision, ``materialize`` once all three
    exist (the only step that writes to ``.memzoi``, so it is also previewable); ``[]`` for an incomplete set (a
    plan or decision without its candidate). Memzoi's order: candidate, plan, decision, materialize (reference
    ``memzoi-format.md`` §5)."""
    have = {kind for kind, path in files.items() if path.is_file()}
    return [step for step, needs, absent in STEPS if have >= set(needs) and (absent is None or absent not in have)]


def artifact_kind(text: str) -> str | None:
    """``candidate``, ``plan`` or ``decision`` for a materialization artifact's JSON text (by its ``schema``), else
    ``None`` (not JSON, too deep to read safely, or another document)."""
    if json_too_deep(text) is not None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    schema = data.get("schema") if isinstance(data, dict) else None
    return KINDS.get(schema) if isinstance(schema, str) else None  # a list or object `schema` is no kind either


def write_artifact(path: Path, artifact: dict[str, Any], *, same_ok: bool = False) -> None:
    """Write ``artifact`` as indented UTF-8 JSON to the new file ``path`` (created exclusively, mode 0644, never
    through a symlink). ``same_ok``: a file already holding exactly these bytes is accepted as written.

    Raises :class:`Refusal` ``unsafe_output_path`` (inside ``.memzoi``, or the parent is not an existing real
    directory) or ``output_exists`` (a file with other content is there); nothing is written then.
    """
    write_text_artifact(path, json.dumps(artifact, indent=2, ensure_ascii=False) + "\n", same_ok=same_ok)


def write_text_artifact(path: Path, data: str, *, same_ok: bool = False) -> None:
    """Write the text ``data`` (UTF-8) to the new file ``path`` outside ``.memzoi``, as :func:`write_artifact`
    does (the same refusals; a draft record from ``memzoi materialize template`` is written this way)."""
    absolute = path if path.is_absolute() else Path.cwd() / path
    if ".memzoi" in absolute.parts:
        raise Refusal("unsafe_output_path", f"{path}: artifacts are never written inside .memzoi")
    if not absolute.parent.is_dir() or absolute.parent.is_symlink():
        raise Refusal("unsafe_output_path", f"{path}: the parent must be an existing real directory")
    try:
        fd = os.open(absolute, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except FileExistsError:
        try:
            if same_ok and not absolute.is_symlink() and absolute.read_text(encoding="utf-8") == data:
                return
        except (OSError, UnicodeDecodeError):
            pass
        raise Refusal(
            "output_exists", f"{path} already exists with other content; remove it or choose a new file"
        ) from None
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(data)
