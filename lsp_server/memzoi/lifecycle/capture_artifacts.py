"""Reading and saving capture artifacts (request, plan, decisions, review) as Memzoi does (reference page
"Evidence-backed capture"): an input artifact is a regular, non-symlink UTF-8 file of at most 2 MiB (JSON, or
YAML for a request or decisions file); ``--output`` installs the complete JSON artifact without replacing an
existing path, at a place its ``data_class`` allows:

* ``repo_safe``: anywhere but under the project's ``.memzoi`` or the runtime directories;
* ``private``: only under the project's runtime directory (never under the project root);
* ``blocked``: never saved (standard output only).

Saving an artifact is not a memory write (no git-plane file, no runtime row), so it is not a ledgered change.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from ..base.runtime import memzoi_home, project_runtime_dir
from ..ledger import Refusal

MAX_ARTIFACT_BYTES = 2 * 1024 * 1024


def read_artifact(path: str, what: str) -> Any:
    """The parsed artifact at ``path`` (``what`` names it in messages). Raises :class:`Refusal`
    (``invalid_capture_artifact``)."""
    from .session_input import yaml_document  # noqa: PLC0415 lazy: start-up

    def fail(why: str) -> Refusal:
        return Refusal("invalid_capture_artifact", f"{what} `{path}`: {why}; nothing was written")

    try:
        st = os.lstat(path)
    except OSError:
        raise fail("cannot be read") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        raise fail("must be a regular file, not a symbolic link")
    if st.st_size > MAX_ARTIFACT_BYTES:
        raise fail("is larger than 2 MiB")
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise fail("is not UTF-8 text") from None
    try:
        return json.loads(text)  # plan and review artifacts are JSON: numbers stay numbers
    except ValueError:
        return yaml_document(text, fail)  # a request or decisions file may be YAML


def _under(path: Path, top: Path) -> bool:
    try:
        path.relative_to(top)
    except ValueError:
        return False
    return True


def output_problem(root: Path, path: Path, data_class: str) -> str | None:
    """Why an artifact of ``data_class`` may not be saved at ``path``, else ``None``."""
    home = memzoi_home().resolve()
    target = path.resolve()
    if data_class == "blocked":
        return "a blocked artifact may only be printed (standard output), never saved"
    if data_class == "private":
        runtime = project_runtime_dir(root)
        if not _under(target, runtime.resolve()) or _under(target, root):
            from ..judge.pathsafety import shown_local_path  # noqa: PLC0415 lazy: start-up - the detectors, for a refusal only

            return (
                "a private artifact (a local or session candidate, such as a `Preference:` section) may be saved "
                f"only under this project's runtime directory, {shown_local_path(runtime)}, or printed with --json"
            )
        return None
    if _under(target, root / ".memzoi") or _under(target, home):
        return "a repo-safe artifact may not be saved under .memzoi or the runtime directories"
    return None


def save_artifact(root: str | os.PathLike[str], path: str, artifact: dict[str, Any]) -> str:
    """Install ``artifact`` as indented JSON at ``path`` (module docstring); returns the path written. Raises
    :class:`Refusal` (``artifact_output_refused``, ``artifact_exists``)."""
    top = Path(root).resolve()
    target = Path(path)
    problem = output_problem(top, target, artifact.get("data_class", "blocked"))
    if problem:
        raise Refusal("artifact_output_refused", f"--output `{path}`: {problem}; nothing was written")
    data = (json.dumps(artifact, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        raise Refusal("artifact_exists", f"--output `{path}` already exists; artifacts never replace a path") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return str(target)
