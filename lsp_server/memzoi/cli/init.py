"""``memzoi init [PATH] [--project-id ID] [--json]``: create the ``.memzoi`` layout and the runtime directory.

Creates ``.memzoi/records/`` and ``.memzoi/proposals/pending/`` (existing folders are kept), a
``.memzoi/config.toml`` when there is none (with ``[project] id`` when ``--project-id`` is given), and the private
runtime directory ``${MEMZOI_HOME:-~/.memzoi}/projects/<repository-key>/``. A folder it makes is never more open
than the folder above it (:func:`memzoi.base.newfolders.make_folders`: ``.memzoi`` takes the project folder's
permission bits, within the umask, and its folders take those of ``.memzoi``). Never overwrites a file: with an
existing config.toml whose ``[project] id`` differs, ``--project-id`` is not written and a line on stderr says so
(``not_applied`` in the JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._common import add_command, add_root_json

_TEMPLATE = """# Memzoi project settings (shared with the team; never put secrets here).
# A memory with `scope: project` may reach the repository only when its scope id equals [project] id.
{project}
# [safety]
# Fingerprints of high_entropy_value findings reviewed and accepted as not secret:
# accepted_fingerprints = []

# [rules]
# Severity per code, disabled codes and ignored files (globs relative to .memzoi), for memzoi check, pre-commit
# and the editor. A code Memzoi refuses a file for cannot be disabled, downgraded or ignored: secrets, gate codes,
# and framing/schema errors (invalid_value, unknown_key, missing_key, yaml_syntax ...: Memzoi cannot type the record).
# severity = {{ legacy_profile = "error" }}
# disabled = []
# ignore = []

# [promotion]
# When an agent's private local-memory or resident-memory candidate is applied without a human decision:
# "review" (the default: every candidate waits), "high_confidence" (at or above auto_confidence) or "automatic".
# Repository proposal packets are never promoted. An invalid value refuses those proposals (memzoi check names it).
# mode = "review"
# auto_confidence = 0.9

# [mcp]
# Proposals one memzoi-mcp process accepts per minute (0 refuses every proposal).
# proposals_per_minute = 20
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``init`` command."""
    p = add_command(
        sub,
        "init",
        help="create .memzoi/records, .memzoi/proposals/pending and the runtime directory",
        description="Create the .memzoi layout (records/, proposals/pending/ and a config.toml when there is none) "
        "and the private runtime directory under ${MEMZOI_HOME:-~/.memzoi}, in PATH itself. Existing folders and "
        "files are kept. Inside another project it refuses unless --nested is given, since commands run below a "
        "nested project no longer see the outer one.",
        examples=["memzoi init", "memzoi init ../other-repo --project-id my-project", "memzoi init sub --nested"],
        exits={
            1: "a .memzoi folder is a symlink",
            2: "usage error (PATH is not a directory, bad --project-id, PATH is inside another project without "
            "--nested); nothing is written",
        },
        project="creates",
    )
    p.add_argument(
        "path",
        nargs="?",
        default=None,
        metavar="PATH",
        help="the folder to make a project root, never searched upward (default: --root, else the current directory)",
    )
    p.add_argument("--project-id", help="project id written to .memzoi/config.toml ([project] id)")
    p.add_argument(
        "--nested",
        action="store_true",
        help="make a project inside another one (commands run below PATH then no longer see the outer project)",
    )
    add_root_json(
        p,
        json_help="print the created and existing paths as JSON",
        root_help="the same as PATH (default: the current directory, never searched upward)",
    )
    p.set_defaults(func=run)


def _project_id(config: Path) -> object:
    """``[project] id`` of the existing ``config`` (any value), or ``None`` when it cannot be read (safely:
    :func:`memzoi.base.smallfile.read_small`, never through a link or blocking on a FIFO) or has none."""
    import tomllib  # noqa: PLC0415 lazy: start-up

    from ..base.smallfile import read_small  # noqa: PLC0415 lazy: start-up

    try:
        data = tomllib.loads(read_small(config).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    project = data.get("project")
    return project.get("id") if isinstance(project, dict) else None


def _notes(root: Path, outer: str | None) -> list[str]:
    """What a new project's user would otherwise learn later from ``memzoi doctor``: the outer project a nested
    one hides, the loss outside git (said once here), and that the index is built by the first rebuild or scan."""
    from ..base.gitowner import git_refusal, refused_words  # noqa: PLC0415 lazy: start-up
    from ..judge.pathsafety import shown_local_path as shown  # noqa: PLC0415 lazy: start-up
    from ..project.admission import worktree_root  # noqa: PLC0415 lazy: start-up
    from ..runs.doctor import OUTSIDE_GIT  # noqa: PLC0415 lazy: start-up
    from ..stores.store import store_path  # noqa: PLC0415 lazy: start-up

    notes = []
    if outer is not None:
        notes.append(f"a nested project inside {shown(outer)}: commands run below here no longer see its records")
    if worktree_root(root.resolve()) is None:
        refused = git_refusal(root.resolve())  # git refuses a repository of another user: named, with its fix
        notes.append(OUTSIDE_GIT if refused is None else "; ".join(refused_words(shown(refused))))
    if not store_path(root.resolve()).exists():
        notes.append(
            "the index is not built yet: the first `memzoi rebuild` (or the editor's scan) builds it, so until then "
            "`memzoi doctor` warns about it"
        )
    return notes


def run(args: argparse.Namespace) -> int:
    """Run ``init``; returns the exit code."""
    from ..base.fsutil import atomic_write  # noqa: PLC0415 lazy: start-up
    from ..base.gitexclude import hide_temporaries  # noqa: PLC0415 lazy: start-up
    from ..base.newfolders import make_folders  # noqa: PLC0415 lazy: start-up
    from ..base.runtime import project_runtime_dir  # noqa: PLC0415 lazy: start-up
    from ..judge.pathsafety import shown_local_path as shown  # noqa: PLC0415 lazy: start-up
    from ..judge.projectroot import enclosing_project, marks_project  # noqa: PLC0415 lazy: start-up
    from ..models.common import is_identifier  # noqa: PLC0415 lazy: start-up

    given = args.path or args.root or "."
    root = Path(given)
    if not root.is_dir():
        print(f"memzoi: {shown(given)}: not a directory; create it first or pass the project root", file=sys.stderr)
        return 2
    if args.project_id is not None and not is_identifier(args.project_id):
        print("memzoi: --project-id must use lower-case letters, digits, `-` and `_`", file=sys.stderr)
        return 2
    outer = enclosing_project(root)
    if outer is not None and not marks_project(str(root)) and not args.nested:
        print(
            f"memzoi: {shown(root.resolve())} is inside the project at {shown(outer)}; a project made here would hide that "
            "project's records from every command run below it. Nothing was written; pass --nested to make a "
            "separate project here anyway",
            file=sys.stderr,
        )
        return 2
    created: list[str] = []
    existing: list[str] = []
    memzoi = root / ".memzoi"
    for d in (memzoi / "records", memzoi / "proposals" / "pending"):
        if d.is_symlink():
            print(
                f"memzoi: {shown(d)}: is a symlink; Memzoi never follows symlinks in .memzoi, replace it with a folder",
                file=sys.stderr,
            )
            return 1
        (existing if d.is_dir() else created).append(shown(d))
        make_folders(d)
    config = memzoi / "config.toml"
    not_applied: list[dict[str, str]] = []
    if config.exists() or config.is_symlink():
        existing.append(shown(config))
        if args.project_id is not None and _project_id(config) != args.project_id:
            not_applied.append(
                {
                    "option": "--project-id",
                    "message": (
                        f"{shown(config)} exists and is never overwritten, so --project-id was not written; set "
                        f'[project] id = "{args.project_id}" in it by hand if that is the project id'
                    ),
                }
            )
    else:
        project = f'[project]\nid = "{args.project_id}"\n' if args.project_id else '# [project]\n# id = "my-project"\n'
        config.parent.mkdir(parents=True, exist_ok=True)
        hide_temporaries(config.parent)  # before the temporary file of the write: never in a commit
        atomic_write(config, _TEMPLATE.format(project=project).encode("utf-8"))
        created.append(shown(config))
    runtime = project_runtime_dir(root, create=True)
    notes = _notes(root, outer)
    if args.json:
        print(
            json.dumps(
                {
                    "project_root": shown(root.resolve()),
                    "created": created,
                    "existing": existing,
                    "runtime_dir": shown(runtime),
                    "not_applied": not_applied,
                    "notes": notes,
                },
                indent=2,
            )
        )
    else:
        for p in created:
            print(f"created {p}")
        print(f"runtime directory: {shown(runtime)}")
        for line in notes:
            print(f"note: {line}")
    for note in not_applied:
        print(f"memzoi init: {note['message']}", file=sys.stderr)
    return 0
