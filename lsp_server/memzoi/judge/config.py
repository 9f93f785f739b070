"""The project configuration file ``.memzoi/config.toml``: loader, problems and cache (the model of its sections is
:mod:`memzoi.judge.config_model`).

Memzoi keeps its project id in ``.memzoi/config.toml`` (``[project] id``, reference §3.2: a ``project``-scoped
memory is repo-safe only when its scope id equals it). This project adds one section of its own:

```toml
[project]
id = "memzoi"

[safety]
# fingerprints of high_entropy_value findings a reviewer accepted as not secret
accepted_fingerprints = ["3f1c…64 hex…"]
# how an unsigned JWT (alg none, empty signature) is graded outside example fences
unsigned_jwt = "warning"

[promotion]
# runtime-plane candidates only (local records, resident memory); see memzoi.base.promotion
mode = "review"
auto_confidence = 0.9

[resident]
# Zuno's project resident file (see memzoi.resident); these are the defaults. The user's global file
# (global_path, global_char_limit) is set only in the user's own $ZUNO_CONFIG_DIR/memzoi.toml: here they are ignored
project_path = ".zuno/RULES.md"                      # relative to the project root
project_char_limit = 3000

[mcp]
# proposals one memzoi-mcp process accepts per minute (0: none; refused ones count too)
proposals_per_minute = 20
# the largest body an agent may propose, in UTF-8 bytes
max_body_bytes = 32768

[rules]
# severity per code, disabled codes, ignored files (relative to .memzoi); see memzoi.judge.rules
severity = { legacy_profile = "error" }
disabled = ["retention_query_only"]
ignore = ["records/archive/**"]
```

Memzoi's sections (``[project]``, ``[workflow]``) and unknown sections are kept out of the model but never judged:
the real Memzoi owns the file too and may add fields. The other sections are this project's own, so a key none of
them knows (``disable`` in ``[rules]``, ``proposals_per_minut`` in ``[mcp]``) is reported, as is a header close
to one of them (``[promotoin]``; :mod:`memzoi.judge.config_keys`).
Reading is total and never drops a valid setting silently: a missing file gives the defaults; an entry of ``[rules]``
that is not valid is left out and the rest of the section applies; any other invalid value costs its section,
whose defaults then apply; the user-only ``[resident]`` keys (:data:`USER_ONLY`) and unknown keys are ignored on
their own; an
unreadable or unparsable file gives the defaults. Each problem is a one-line error
naming the file, the setting and what was ignored, and a :class:`ConfigProblem` that :mod:`memzoi.judge.configfile`
places in the file (the ``invalid_config`` finding, which fails ``memzoi check``). Loads are cached by path, mtime
and size.
"""

from __future__ import annotations

import os
import re
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..base.nesting import nesting_message
from ..base.smallfile import read_small
from .config_keys import unknown_keys
from .config_model import DEFAULT_CONFIG, MemzoiConfig
from .configplain import CONFIG_NAME, MEMZOI_SECTIONS
from .rules import screen_rules

#: The sections this project adds to Memzoi's file, whose keys it judges (:mod:`memzoi.judge.config_keys`).
_OWN_SECTIONS: dict[str, type[BaseModel]] = {
    n: a
    for n, f in MemzoiConfig.model_fields.items()
    if n not in MEMZOI_SECTIONS and isinstance(a := f.annotation, type) and issubclass(a, BaseModel)
}


@dataclass(frozen=True)
class ConfigProblem:
    """One problem of a configuration file: where (``loc``, keys from the top, e.g. ``("rules", "disabled",
    "private_key")`` for an item of a list; empty for the whole file; ``line``/``column``, 1-based, when the TOML
    parser names a position) and what is wrong and what was ignored (``message``, without the file name)."""

    loc: tuple[str, ...]
    message: str
    line: int | None = None
    column: int | None = None
    #: only this entry is ignored and the rest of its section applies (a bad ``[rules]`` entry, a user-only key)
    entry_only: bool = False
    #: what is wrong without the loader's consequence (``message`` adds it), for a caller that refuses instead
    detail: str | None = None


@dataclass(frozen=True)
class LoadedConfig:
    """A loaded configuration: the model (the valid settings, defaults for the rest), the file, any error text
    (one line per problem, naming the file) and the problems themselves."""

    config: MemzoiConfig = DEFAULT_CONFIG
    path: Path | None = None
    errors: tuple[str, ...] = field(default_factory=tuple)
    problems: tuple[ConfigProblem, ...] = field(default_factory=tuple)


_CACHE: dict[Path, tuple[tuple[int, ...], LoadedConfig]] = {}
_LOCK = threading.Lock()


def load_config(memzoi_dir: str | os.PathLike[str] | None) -> LoadedConfig:
    """Read ``<memzoi_dir>/config.toml``; cached by path, mtime (ns), size, ctime and inode (a caller that saw
    its bytes change without them, :meth:`memzoi.runs.projectstate.ProjectState.input_changes`, calls
    :func:`forget_config`). Never raises.

    ``memzoi_dir`` is the ``.memzoi`` directory (``Placement.memzoi_dir``); ``None`` gives the defaults.
    """
    if memzoi_dir is None:
        return LoadedConfig()
    path = Path(memzoi_dir) / CONFIG_NAME
    try:
        st = path.lstat()  # a link is refused by the read, not followed (memzoi.base.smallfile)
    except OSError:
        return LoadedConfig(path=path)
    stamp = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
    with _LOCK:
        hit = _CACHE.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    loaded = _read(path)
    with _LOCK:
        _CACHE[path] = (stamp, loaded)
    return loaded


def forget_config(memzoi_dir: str | os.PathLike[str]) -> None:
    """Drop the cached configuration of ``memzoi_dir`` (its bytes changed): the next :func:`load_config` reads it."""
    with _LOCK:
        _CACHE.pop(Path(memzoi_dir) / CONFIG_NAME, None)


def parse_config(text: str, path: Path | None = None) -> LoadedConfig:
    """Parse configuration text (TOML). Invalid content never stops the valid settings: a bad ``[rules]`` entry is
    left out (:func:`memzoi.judge.rules.screen_rules`), any other invalid value costs its section; each problem gives an
    error line (see the module docstring)."""
    where = str(path) if path is not None else CONFIG_NAME
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        problem = ConfigProblem(
            (),
            f"invalid TOML ({err}); fix the syntax (every setting uses its default until then)",
            int(m.group(1)) if m else None,
            int(m.group(2)) if m else None,
            detail=f"invalid TOML ({err}); fix the syntax",
        )
        return _loaded(DEFAULT_CONFIG, path, where, [problem])
    except RecursionError:  # tomllib recurses once per nested array or inline table
        return _loaded(DEFAULT_CONFIG, path, where, [ConfigProblem((), f"a value is {nesting_message()}")])
    problems: list[ConfigProblem] = []
    if "rules" in raw:
        raw["rules"], found = screen_rules(raw["rules"])
        problems += [
            ConfigProblem(
                ("rules", *loc),
                f"`{'.'.join(('rules', *loc[:1]))}`: {msg}; this entry is ignored, the other settings apply",
                entry_only=True,
            )
            for loc, msg in found
        ]
    problems += _user_only(raw)
    problems += [ConfigProblem(loc, msg, entry_only=True) for loc, msg in unknown_keys(raw, _OWN_SECTIONS, USER_ONLY)]
    try:
        return _loaded(MemzoiConfig.model_validate(raw), path, where, problems)
    except ValidationError as err:
        failed: dict[str, list[ConfigProblem]] = {}
        for e in err.errors():
            loc = tuple(str(p) for p in e["loc"])
            failed.setdefault(loc[0] if loc else "", []).append(ConfigProblem(loc, e["msg"]))
    for section, section_problems in failed.items():
        for problem in section_problems:
            detail = f"`{'.'.join(problem.loc)}`: {problem.message}"
            problems.append(
                ConfigProblem(
                    problem.loc,
                    f"{detail}; the [{section}] settings are ignored (defaults apply) until this is fixed",
                    detail=detail,
                )
            )
    kept = {k: v for k, v in raw.items() if k not in failed}
    try:
        config = MemzoiConfig.model_validate(kept)
    except ValidationError:  # cannot happen (sections validate apart), but a load never raises
        config = DEFAULT_CONFIG
    return _loaded(config, path, where, problems)


def _loaded(config: MemzoiConfig, path: Path | None, where: str, problems: list[ConfigProblem]) -> LoadedConfig:
    if problems:
        # A message may name a value of the file (a key, a code, a pattern): never one a detector finds secret.
        from ..safety.redact import scrub  # noqa: PLC0415 lazy: start-up - the safety package imports this module

        problems = [
            ConfigProblem(
                p.loc, scrub(p.message), p.line, p.column, p.entry_only, None if p.detail is None else scrub(p.detail)
            )
            for p in problems
        ]
    return LoadedConfig(config, path, tuple(f"{where}: {p.message}" for p in problems), tuple(problems))


def load_section(memzoi_dir: str | os.PathLike[str] | None, name: str) -> tuple[BaseModel, tuple[str, ...]]:
    """One section of ``<memzoi_dir>/config.toml`` (``promotion``, ``mcp`` …) as the configuration holds it, and
    that section's problems: ``(model, errors)``. A section that does not validate is its defaults in the loaded
    configuration (:func:`parse_config` ignores it, the others apply); ``errors`` names its keys, or the whole
    file's problem when it cannot be read or is not TOML. A caller that acts on the section refuses to go on with
    errors: falling back to a default the file does not say would be silent."""
    loaded = load_config(memzoi_dir)
    where = str(loaded.path) if loaded.path is not None else CONFIG_NAME
    mine = tuple(
        f"{where}: {p.message}" for p in loaded.problems if not p.loc or (p.loc[0] == name and not p.entry_only)
    )
    return (getattr(DEFAULT_CONFIG, name) if mine else getattr(loaded.config, name)), mine


#: ``[resident]`` keys that only the user's own configuration may set (:mod:`memzoi.resident.scope`).
USER_ONLY = ("global_path", "global_char_limit")


def _user_only(raw: dict[str, Any]) -> list[ConfigProblem]:
    """Take the user-only ``[resident]`` keys and ``[reflection]`` out of a repository's ``raw`` configuration: it
    never moves or re-caps the user's global resident file, nor picks its reviewer. Each is a problem of itself."""
    problems = (
        [
            ConfigProblem(
                ("reflection",),
                "`reflection`: a repository's configuration cannot choose the model, "
                "endpoint or key that reviews your sessions; configure [reflection] in memzoi.toml in "
                "$ZUNO_CONFIG_DIR (see docs/resident-memory.md). This section is ignored, the other "
                "settings apply",
                entry_only=True,
            )
        ]
        if raw.pop("reflection", None) is not None
        else []
    )
    section = raw.get("resident")
    if not isinstance(section, dict):
        return problems
    found = [k for k in USER_ONLY if k in section]
    raw["resident"] = {k: v for k, v in section.items() if k not in USER_ONLY}
    return problems + [
        ConfigProblem(
            ("resident", k),
            f"`resident.{k}`: a repository's configuration cannot move, rename or re-cap the user's "
            "global resident file (MEMORY.md); only the user's own configuration can (`[resident]` of memzoi.toml in "
            "$ZUNO_CONFIG_DIR, see docs/resident-memory.md). This key is ignored, the other settings apply",
            entry_only=True,
        )
        for k in found
    ]


def _read(path: Path) -> LoadedConfig:
    try:  # bounded, never through a link nor blocking on a FIFO: a clone can carry config.toml -> /dev/zero
        text = read_small(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        problem = ConfigProblem(
            (),
            f"cannot read the configuration ({err}); check the file (every setting uses its default until then)",
            detail=f"cannot read the configuration ({err}); check the file",
        )
        return _loaded(DEFAULT_CONFIG, path, str(path), [problem])
    return parse_config(text, path)


def clear_cache() -> None:
    """Forget every cached configuration (tests, and the server after a settings reload)."""
    with _LOCK:
        _CACHE.clear()
