"""Writing a repository maintenance plan to a file (``memzoi maintenance plan --output``): Memzoi's rule that
"--output is the sole optional write and must be outside the Git worktree and all managed runtime roots"
(``maintenance.rs@77169aa8``), as a new or replaced file written whole. Building the plan: :mod:`.maintenance`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..base.fsio import atomic_write
from ..base.runtime import memzoi_home
from ..ledger import Refusal


def _inside(path: Path, base: Path) -> bool:
    try:
        path.relative_to(base)
        return True
    except ValueError:
        return False


def write_plan(root: Path, plan: dict[str, Any], output: str | os.PathLike[str]) -> Path:
    """Write ``plan`` as pretty JSON to ``output`` (a new or replaced file, written atomically and durably by
    :func:`memzoi.base.fsio.atomic_write`, which keeps a replaced file's mode and leaves no temporary file when it
    fails). Memzoi: "--output is the sole optional write and must be outside the Git worktree and all managed
    runtime roots": an ``output`` inside the project, its git worktree or the memzoi home is refused
    (``output_inside_managed_root``) with nothing written. Returns the resolved path."""
    from ..project.admission import worktree_root  # noqa: PLC0415 lazy: start-up

    target = Path(output).expanduser().resolve()
    managed = [root.resolve(), memzoi_home().resolve()]
    top = worktree_root(root)
    if top is not None:
        managed.append(top.resolve())
    for base in managed:
        if _inside(target, base):
            raise Refusal(
                "output_inside_managed_root",
                f"--output {target} is inside {base}; a maintenance plan is "
                "written only outside the git worktree and the memzoi runtime home",
            )
    atomic_write(target, (json.dumps(plan, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return target
