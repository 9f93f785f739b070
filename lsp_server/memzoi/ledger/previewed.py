"""The fingerprint of a previewed change: the reviewer acts on exactly what the preview showed.

A preview (:func:`memzoi.lifecycle.preview.preview`) is the :class:`ChangePlan` the change itself computes, made
without writing (:func:`memzoi.ledger.dry_run`). Its fingerprint is the BLAKE3 digest of the before bytes (or the
absence) of every file the plan writes (``files``) or only reads (``reads``: a supersede proposal's record), and
of what else decides the write from outside the project (``decides``: a materialization's candidate, plan and
decision, which live beside the project, and the record text they make). The editor sends it back with the change (``previewed``); :func:`memzoi.ledger.run_change` recomputes the plan under the
lifecycle lock and refuses it (``preview_stale``, nothing recorded or written) when any of those files differs from
what the preview showed: a packet edited on disk after the preview, a target record edited meanwhile, a record
created or deleted, a materialization's artifacts replaced by another consistent set. Every file it then writes is guarded against the same before bytes at the moment of the switch
(``external_drift``), so no edit slips in between the check and the write.

The fingerprint is an opaque string to clients: ``mzp1.`` then the base64url (no padding) of the canonical JSON of
``[[path, digest or null], …]`` sorted by path, so the refusal can name the files that changed (a ``decides``
label is keyed with a leading NUL, which no path holds). A change sent
without one (an older client, the CLI) runs as before, on the disk's bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from pathlib import Path

import blake3

from ..judge.pathsafety import shown_path
from .model import ChangePlan, Purged, Refusal
from .store import read_file_state

_PREFIX = "mzp1."
#: Keys ``decides`` labels apart from paths: no file path holds a NUL.
_LABEL = "\0"


def _digest(state: bytes | None | Purged) -> str | None:
    if state is None:
        return None
    if isinstance(state, Purged):
        return state.digest
    return blake3.blake3(state).hexdigest()


def states(plan: ChangePlan) -> dict[str, str | None]:
    """``{path: BLAKE3 hex of its before bytes, or None when absent}`` of every file ``plan`` writes or reads, and
    ``{NUL + label: digest}`` of what else decides its write (``plan.decides``)."""
    out = {path: _digest(state) for path, state in plan.reads.items()}
    out.update({f.path: _digest(f.before) for f in plan.files})
    out.update({_LABEL + label: digest for label, digest in plan.decides.items()})
    return out


def _shown(key: str) -> str:
    return key[len(_LABEL) :] if key.startswith(_LABEL) else shown_path(key)


def fingerprint(plan: ChangePlan) -> str:
    """The fingerprint of what ``plan`` acts on (see the module docstring): ``mzp1.`` + base64url JSON."""
    text = json.dumps(sorted(states(plan).items()), separators=(",", ":"), ensure_ascii=False)
    return _PREFIX + base64.urlsafe_b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii").rstrip("=")


def _decode(previewed: str) -> dict[str, str | None]:
    if not isinstance(previewed, str) or not previewed.startswith(_PREFIX):
        raise ValueError("not a preview fingerprint")
    raw = previewed[len(_PREFIX) :]
    data = base64.b64decode(raw + "=" * (-len(raw) % 4), altchars=b"-_", validate=True)
    pairs = json.loads(data.decode("utf-8", "surrogatepass"))
    if not isinstance(pairs, list):
        raise ValueError("not a preview fingerprint")
    out: dict[str, str | None] = {}
    for pair in pairs:
        path, digest = pair
        if not isinstance(path, str) or not (digest is None or isinstance(digest, str)):
            raise ValueError("not a preview fingerprint")
        out[path] = digest
    return out


def changed_since(plan: ChangePlan, previewed: str) -> list[str]:
    """The keys (paths, NUL + ``decides`` labels) whose state differs between the preview ``previewed`` and
    ``plan`` (a key in only one of them counts), sorted. Raises :class:`Refusal` (``invalid_arguments``) for a
    string that is no fingerprint."""
    try:
        shown = _decode(previewed)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise Refusal(
            "invalid_arguments", "`previewed` is not a preview's fingerprint; preview the change again"
        ) from None
    now = states(plan)
    return sorted(p for p in shown.keys() | now.keys() if shown.get(p, "-") != now.get(p, "-"))


def _stale(changed: list[str], operation: str) -> Refusal:
    # the files first: the refusal's path is a file when one changed
    changed.sort(key=lambda k: k.startswith(_LABEL))
    names = ", ".join(_shown(p) for p in changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
    return Refusal(
        "preview_stale",
        f"{names}: changed since the preview was shown, so the {operation} was refused and nothing was "
        "written; review the new preview and decide again",
        None if changed[0].startswith(_LABEL) else changed[0],
    )


def check_previewed(plan: ChangePlan, previewed: str | None) -> None:
    """Refuse ``plan`` when ``previewed`` is given and any file (or ``decides`` entry) differs from what that
    preview showed (``preview_stale``, naming them; nothing is recorded or written). ``None`` checks nothing."""
    if previewed is None:
        return
    changed = changed_since(plan, previewed)
    if changed:
        raise _stale(changed, plan.operation)


def check_on_disk(previewed: str | None, states_now: dict[str, bytes | None], operation: str) -> None:
    """Refuse ``preview_stale`` (the words of :func:`check_previewed`) when ``previewed`` names one of the files of
    ``states_now`` (``{project-relative path: its bytes on disk now, None when absent}``) with other bytes: the
    file changed on disk since the preview. For a caller that looks at a file before the change is planned (the
    editor, whose open buffer may still show the file as it was): the reviewer is offered the new preview, not told
    to reload a buffer. Files the fingerprint does not name, no fingerprint or a malformed one check nothing here
    (the change's own check under the lock refuses the latter)."""
    if previewed is None:
        return
    try:
        shown = _decode(previewed)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        return
    changed = [p for p, data in states_now.items() if p in shown and shown[p] != _digest(data)]
    if changed:
        raise _stale(changed, operation)


def check_files_on_disk(previewed: str | None, root: Path, paths: Iterable[Path], operation: str) -> None:
    """:func:`check_on_disk` of the files ``paths`` (absolute) of the project ``root``, read now (through
    :func:`memzoi.ledger.store.read_file_state`); a path outside the project or unreadable is left to the change's own
    checks."""
    if previewed is None:
        return
    now: dict[str, bytes | None] = {}
    for path in paths:
        try:
            rel = path.resolve().relative_to(root).as_posix()
            state = read_file_state(root, rel)
        except (ValueError, OSError, RuntimeError, Refusal):
            continue
        if state is None or isinstance(state, bytes):
            now[rel] = state
    check_on_disk(previewed, now, operation)


__all__ = ["changed_since", "check_files_on_disk", "check_on_disk", "check_previewed", "fingerprint", "states"]
