"""Where the two resident files are and what their caps are (reference ``zuno-memory.md`` §2 "Locations").

- global: ``$ZUNO_CONFIG_DIR/memory/MEMORY.md``, else ``~/.config/zuno/memory/MEMORY.md``; shared by every
  checkout;
- project: ``<root>/.zuno/RULES.md``.

The project file and its cap (3,000 characters) can be changed in ``[resident]`` of the project's
``.memzoi/config.toml`` (:class:`memzoi.judge.config_model.ResidentSection`). The global file and its cap (2,200 characters)
belong to the user: a repository's configuration never moves, renames or re-caps them (its ``global_path`` and
``global_char_limit`` are ignored, :data:`memzoi.judge.config.USER_ONLY`); only the user's own configuration can,
``[resident]`` of ``memzoi.toml`` in the Zuno configuration folder (``$ZUNO_CONFIG_DIR``, else
``~/.config/zuno``), as Zuno takes ``memory.global_char_limit`` from the user's configuration.

A problem of the project's configuration costs only its section: the resident files need ``[resident]`` (and a
proposal ``[promotion]``), so an error in ``[rules]`` or ``[mcp]`` changes nothing here.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..base.runtime import zuno_config_dir
from ..base.smallfile import read_small, why_unread
from ..base.vocabulary import RESIDENT_SCOPES as SCOPES
from ..judge.config import USER_ONLY, load_config
from ..judge.config_model import MemzoiConfig, ResidentSection
from ..judge.pathsafety import with_shown_paths
from ..judge.workspace import MEMZOI_DIR, find_project_root
from ..ledger import Refusal


@dataclass(frozen=True)
class ResidentFile:
    """One resident file: its ``scope`` (``global``/``project``), absolute ``path``, ``cap`` in characters, and the
    project's ``[safety] accepted_fingerprints`` (``accepted``), carried with the file so that the editor's scan
    and the write path's refusal read the same set (:mod:`.threats`)."""

    scope: str
    path: Path
    cap: int
    accepted: frozenset[str] = frozenset()


def default_global_path() -> Path:
    """``memory/MEMORY.md`` in Zuno's configuration folder (:func:`memzoi.base.runtime.zuno_config_dir`)."""
    return zuno_config_dir() / "memory" / "MEMORY.md"


def _config_problems(project_root: Path, sections: Sequence[str]) -> tuple[MemzoiConfig, str, list[str]]:
    """The loaded configuration (invalid sections replaced by their defaults, as the loader does), the
    configuration file as shown, and the problems that touch ``sections`` (or the whole file) as sentences."""
    loaded = load_config(project_root / MEMZOI_DIR)
    where = str(loaded.path) if loaded.path is not None else "config.toml"
    mine = [p for p in loaded.problems if not p.loc or (p.loc[0] in sections and not p.entry_only)]
    named = sorted({p.loc[0] for p in mine if p.loc})
    sections_named = " and ".join(f"[{n}]" for n in named) or "the configuration"
    return loaded.config, sections_named, [f"{where}: {p.detail or p.message}" for p in mine]


def project_config(project_root: Path, sections: Sequence[str] = ("resident",)) -> MemzoiConfig:
    """The project's configuration (defaults when absent). Raises :class:`Refusal` ``invalid_config`` when the
    file cannot be read or parsed, or when one of ``sections`` is invalid: resident writes never guess where the
    files are (``[resident]``) or whether to apply (``[promotion]``). Problems of other sections, and entries
    ignored on their own (a bad ``[rules]`` entry, a user-only key), cost only themselves. Reads use
    :func:`read_config` instead."""
    config, sections_named, mine = _config_problems(project_root, sections)
    if mine:
        # The loader's own wording ("defaults apply") is what *other* readers do; here the section is not
        # replaced by defaults, the write is refused, and the message says so (issue 34, trial defect).
        raise Refusal(
            "invalid_config",
            f"{'; '.join(mine)}; resident-memory changes are refused until {sections_named} "
            "is fixed (memzoi never guesses where the files are or whether to apply): run "
            "`memzoi check .memzoi/config.toml`",
        )
    return config


def read_config(project_root: Path) -> tuple[MemzoiConfig, str | None]:
    """The project's configuration for a *read* of the resident files, and the warning to show with it (``None``
    when ``[resident]`` and the file are valid). A read changes nothing, so an unreadable file or an invalid
    ``[resident]`` costs no answer: the files are read where the defaults (and the valid rest) put them, and the
    warning names the error and says that changes stay refused (:func:`project_config`). Never raises."""
    config, sections_named, mine = _config_problems(project_root, ("resident",))
    if not mine:
        return config, None
    return config, (
        f"{'; '.join(mine)}; the resident files were read where the defaults put them, and resident-memory "
        f"changes are refused until {sections_named} is fixed: run `memzoi check .memzoi/config.toml`"
    )


def user_config_path() -> Path:
    """The user's own configuration of the resident files: ``memzoi.toml`` beside Zuno's, in
    ``$ZUNO_CONFIG_DIR``, else ``$HOME/.config/zuno``."""
    return default_global_path().parent.parent / "memzoi.toml"


def user_resident() -> ResidentSection:
    """The ``global_path`` and ``global_char_limit`` of the user's own configuration (:func:`user_config_path`;
    defaults when it is absent). Raises :class:`Refusal` ``invalid_config`` naming the file (as
    :func:`~memzoi.judge.pathsafety.with_shown_paths` shows it: a folder's name may bear a secret) when it cannot be
    read or a value is invalid: the global file is never guessed."""
    path = user_config_path()
    try:
        # the user's own file: a link is followed (dotfile managers make them), but never a FIFO, device or a
        # file over the cap (memzoi.base.smallfile)
        raw = tomllib.loads(read_small(path, follow=True).decode("utf-8"))
    except FileNotFoundError:
        return ResidentSection()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as err:
        raise Refusal(
            "invalid_config",
            with_shown_paths(
                f"{path}: cannot read the user's configuration ({why_unread(err)}); "
                "fix or remove it (the global resident file is not guessed)",
                path,
            ),
        ) from None
    section = raw.get("resident", {})
    try:
        if not isinstance(section, dict):
            raise ValueError("[resident] must be a table")
        return ResidentSection.model_validate({k: v for k, v in section.items() if k in USER_ONLY})
    except (ValidationError, ValueError) as err:
        problems = err.errors(include_url=False, include_input=False) if isinstance(err, ValidationError) else []
        what = "; ".join(f"`resident.{'.'.join(str(x) for x in e['loc'])}`: {e['msg']}" for e in problems) or str(err)
        message = f"{path}: {what}; fix it (the global resident file is not guessed)"
        raise Refusal("invalid_config", with_shown_paths(message, path)) from None


def resident_file(project_root: Path, scope: str, config: MemzoiConfig | None = None) -> ResidentFile:
    """The resident file of ``scope`` for the project at ``project_root`` (absolute, resolved root).

    Raises :class:`Refusal` ``invalid_scope`` for another scope, ``invalid_config`` for an invalid configuration
    (the project's ``[resident]``; for the global file, the user's own, :func:`user_resident`).
    """
    if scope not in SCOPES:
        raise Refusal("invalid_scope", f"unknown scope `{scope}`; use global or project")
    config = config or project_config(project_root)
    section = config.resident
    if scope == "project":
        return ResidentFile(
            "project", project_root / Path(section.project_path), section.project_char_limit, config.accepted
        )
    user = user_resident()  # never the project's: a repository cannot steer the user's private file
    path = Path(os.path.expanduser(user.global_path)) if user.global_path else default_global_path()
    return ResidentFile("global", path.absolute(), user.global_char_limit, config.accepted)


def resident_files(project_root: Path, config: MemzoiConfig | None = None) -> list[ResidentFile]:
    """Both resident files of the project, global first (the prompt's order)."""
    config = config or project_config(project_root)
    return [resident_file(project_root, s, config) for s in SCOPES]


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def which_file(path: Path, roots: Sequence[Path] = ()) -> tuple[Path, ResidentFile] | None:
    """``(project root, resident file)`` when ``path`` is a resident file of one of ``roots`` or of the project
    found from ``path`` itself (``.zuno/RULES.md`` is found from its own folder); else ``None``. A project whose
    configuration is invalid is skipped."""
    for root in [*roots, find_project_root(path)]:
        try:
            files = resident_files(Path(root).resolve())
        except Refusal:
            continue
        for file in files:
            if _same(file.path, path):
                return Path(root).resolve(), file
    return None
