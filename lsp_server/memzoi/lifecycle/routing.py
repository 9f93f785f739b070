"""The runtime-plane input files in the editor: a session-end file (``{task, candidates[]}``,
:mod:`.session_input`) or an import manifest (``memzoi/import``, :mod:`.import_manifest`) gets findings, a preview
of its routing and an apply, all from the same planning the CLI runs (:mod:`.session_end`, :mod:`.import_plan`), so
the editor and ``memzoi session-end`` / ``memzoi import`` never disagree.

* :func:`input_kind` says whether a file is such an input (a ``.yml``/``.yaml`` file whose top level is
  ``version: memzoi/import``, or has ``task`` and ``candidates``);
* :func:`input_findings` are its findings (:func:`input_verdict` grades them by the project's rules): ``invalid_session_end`` / ``invalid_import_manifest`` (the schema), the
  gate's and detectors' codes on each repo candidate's would-be packet and on local/session content
  (``sensitivity_not_repo_safe``, ``credential_token``, …, or ``candidate_blocked`` for a destination rule without
  a diagnostic code of its own), ``repo_subset_blocked`` on the repo candidates an unsafe one blocks (import), and
  ``duplicate_content``; each on the candidate's first line; messages name codes and ids, never content;
* :func:`routing_preview` is the outcome per candidate before anything is written (which packet path or runtime
  row each would create, which are blocked and why), with what apply must see unchanged (the import ``plan_id``;
  for a session-end file the checkpoint set ``expected_version`` and ``previewed``, the fingerprint of the input
  file's bytes, the packets' paths and that version, :mod:`memzoi.ledger.previewed`);
* :func:`routing_apply` applies it: one ledgered change, refused when the state moved since the preview
  (``import_plan_stale``, ``version_conflict``, ``preview_stale``). Without ``previewed`` (the CLI, an older
  client) a session-end file is routed as it is on disk when applied, as before.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..base.findings import CODES, Finding, finding
from ..judge import pathsafety
from ..judge.revision import content_hash
from ..judge.workspace import find_project_root
from ..ledger import ChangePlan, Refusal, dry_run, preview_fingerprint
from ..read.text import LineIndex
from ..read.yaml12 import load
from ..read.yaml_tree import YMap, YSeq
from .common import PENDING, reserve_packet_id
from .propose import find_duplicate

_SUFFIXES = (".yml", ".yaml")
# Top-level keys: unindented YAML, or a JSON document's quoted keys.
_IMPORT = re.compile(r"""^(?:version|[\s{]*"version")\s*:\s*["']?memzoi/import""", re.M)
_TASK = re.compile(r"""^(?:task|[\s{]*"task")\s*:""", re.M)
_CANDIDATES = re.compile(r"""^(?:candidates|[\s{]*"candidates")\s*:""", re.M)
_INDEX = re.compile(r"candidates\[(\d+)\]")


def input_kind(path: str | os.PathLike[str] | None, text: str) -> str | None:
    """``"import"``, ``"session_end"`` or ``None`` for the file ``path`` with ``text`` (module docstring)."""
    if path is None or not str(path).endswith(_SUFFIXES):
        return None
    if _IMPORT.search(text):
        return "import"
    if _TASK.search(text) and _CANDIDATES.search(text):
        return "session_end"
    return None


def _spans(text: str) -> list[tuple[int, int]]:
    """The span of each candidate's first line (``[]`` when the YAML does not load)."""

    def line_of(offset: int) -> tuple[int, int]:
        start = text.rfind("\n", 0, offset) + 1
        end = text.find("\n", offset)
        return start, len(text) if end < 0 else end

    root = load(text, 0, len(text), line_of).root
    seq = root.entries.get("candidates", (None, None))[1] if isinstance(root, YMap) else None
    if not isinstance(seq, YSeq):
        return []
    return [(item.start, line_of(item.start)[1]) for item in seq.items]


def _at(spans: list[tuple[int, int]], index: int | None, text: str) -> tuple[int, int]:
    if index is not None and 0 <= index < len(spans):
        return spans[index]
    end = text.find("\n")
    return 0, len(text) if end < 0 else end


def _codes(reasons: list[str]) -> list[str]:
    return [r if r in CODES else "candidate_blocked" for r in reasons] or ["candidate_blocked"]


def _blocked(index: int, dest: str, reasons: list[str], span: tuple[int, int], tail: str) -> list[Finding]:
    out = []
    for code, reason in zip(_codes(reasons), reasons or ["blocked"]):
        out.append(
            finding(
                code,
                f"Candidate {index} ({dest}) is blocked by `{reason}`{tail}",
                *span,
                candidate=index,
                reason=reason,
            )
        )
    return out


def _session_findings(root: Path, text: str, where: str, spans: list[tuple[int, int]]) -> list[Finding]:
    from .session_end import classify  # noqa: PLC0415 lazy: start-up
    from .session_input import parse_session_end  # noqa: PLC0415 lazy: start-up

    doc = parse_session_end(text, where)
    out: list[Finding] = []
    for item in classify(root, doc, "editor"):
        out += _blocked(
            item["index"],
            item["destination"],
            item["reasons"],
            _at(spans, item["index"], text),
            "; the whole session-end batch writes nothing until it is fixed",
        )
    seen: dict[str, int] = {}
    for c in doc.candidates:
        if c.destination != "repo":
            continue
        key = content_hash(c.body)
        other = f"candidate {seen[key]}" if key in seen else find_duplicate(root, c.body)
        seen.setdefault(key, c.index)
        if other:
            out.append(
                finding(
                    "duplicate_content",
                    f"Candidate {c.index} has the same body as `{other}`; "
                    "session-end refuses the batch (duplicate_content)",
                    *_at(spans, c.index, text),
                    candidate=c.index,
                )
            )
    return out


def _import_findings(root: Path, text: str, where: str, spans: list[tuple[int, int]]) -> list[Finding]:
    from .import_plan import SPLIT  # noqa: PLC0415 lazy: start-up

    plan = _import_plan(root, text, where)
    out: list[Finding] = []
    for c in plan["candidates"]:
        i, dest, action = c["index"], c["classification"]["destination"], c["action"]
        span = _at(spans, i, text)
        if action["kind"] == "blocked" and action.get("reasons"):
            out += _blocked(
                i,
                dest,
                action["reasons"],
                span,
                "; it writes nothing"
                + (", and every repo candidate of this manifest is blocked with it" if dest == "repo" else ""),
            )
        elif action["kind"] == "blocked" and action["reason"] == SPLIT:
            out.append(finding("repo_subset_blocked", f"Candidate {i} is blocked: {SPLIT}", *span, candidate=i))
        elif action["kind"] == "duplicate":
            names = ", ".join(f"{m['kind']} `{m['id']}`" for m in action["matches"])
            out.append(
                finding(
                    "duplicate_content",
                    f"Candidate {i} has the same trimmed body as {names}; import writes nothing for it",
                    *span,
                    candidate=i,
                )
            )
    return out


def _import_plan(root: Path, text: str, where: str, actor: str = "cli") -> dict[str, Any]:
    from .import_plan import plan_import  # noqa: PLC0415 lazy: start-up

    return plan_import(root, text, where=where, actor=actor)


def input_findings(root: str | os.PathLike[str], path: str | os.PathLike[str], text: str) -> list[Finding]:
    """The (ungraded) findings of the runtime input file ``path`` whose text is ``text`` in the project ``root``
    (module docstring); ``[]`` for a file that is not such an input."""
    kind = input_kind(path, text)
    if kind is None:
        return []
    where = Path(path).name
    spans = _spans(text)
    try:
        if kind == "import":
            return _import_findings(Path(root), text, where, spans)
        return _session_findings(Path(root), text, where, spans)
    except Refusal as err:
        m = _INDEX.search(err.message)
        code = (
            err.code
            if err.code in CODES
            else ("invalid_import_manifest" if kind == "import" else "invalid_session_end")
        )
        return [finding(code, err.message, *_at(spans, int(m.group(1)) if m else None, text))]


def input_verdict(
    path: str | os.PathLike[str], text: str, root: str | os.PathLike[str], ctx: Any
) -> tuple[Finding, ...]:
    """What every surface shows on the input file ``path``: :func:`input_findings` graded by the project's rules
    (``ctx``: a :class:`memzoi.project.verdict.ProjectContext`) through :func:`memzoi.project.verdict.graded`, sorted."""
    from ..project.verdict import graded  # noqa: PLC0415 lazy: start-up

    return graded(path, input_findings(root, path, text), ctx)


def _input_key(root: Path, path: str | os.PathLike[str]) -> str:
    """What the fingerprint keys the input file by: its project-relative path (``/``-separated), or its absolute
    path outside the project (the editor's inputs are inside it)."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return str(resolved)


def _session_fingerprint(root: Path, doc: Any, text: str, key: str, actor: str) -> tuple[str, dict[str, Any] | None]:
    """The fingerprint of the session-end plan (:func:`.session_end.plan_session_end`) the apply would run, and the
    classification-only report when the batch is blocked. For a batch the plan refuses (blocked, duplicate) it is
    the fingerprint of the input file alone: the apply refuses it again unless the file changed, and then the
    fingerprint differs."""
    from .session_end import BatchBlocked, plan_session_end  # noqa: PLC0415 lazy: start-up

    reads: dict[str, bytes | None] = {key: text.encode("utf-8", "surrogatepass")}
    ctx: dict[str, Any] = {"actor": actor, "now": None, "operation_id": None, "fp": None, "reads": reads}
    blocked: list[dict[str, Any]] = []

    def build(r: Path) -> ChangePlan:
        try:
            return plan_session_end(r, doc, ctx)
        except BatchBlocked as err:
            blocked.append(err.report)
        except Refusal:
            pass
        return ChangePlan("session_end", [], reads=reads)

    return preview_fingerprint(dry_run(root, build)), (blocked[0] if blocked else None)


def _session_preview(root: Path, text: str, where: str, key: str, actor: str) -> dict[str, Any]:
    from . import checkpoints as cps  # noqa: PLC0415 lazy: start-up
    from .session_end import _draft, _packet_id  # noqa: PLC0415 lazy: start-up
    from .session_input import parse_session_end  # noqa: PLC0415 lazy: start-up

    doc = parse_session_end(text, where)
    version = cps.current_version(root)
    previewed, blocked = _session_fingerprint(root, doc, text, key, actor)
    shown = {"kind": "session_end", "expected_version": version, "previewed": previewed}
    if blocked is not None:
        return {**shown, "blocked": True, **blocked}
    items, reserved = [], set()
    for c in doc.candidates:
        item: dict[str, Any] = {"index": c.index, "destination": c.destination}
        if c.destination == "repo":
            base = _packet_id(_draft(doc.task, c))
            pid, n = reserve_packet_id(root, base), 2
            while pid in reserved:
                pid, n = reserve_packet_id(root, f"{base}-{n}"), n + 1
            reserved.add(pid)
            item |= {"outcome": "create_proposal", "proposal_id": pid, "path": f"{PENDING}/{pid}.md"}
        elif c.destination in ("local", "session"):
            item |= {"outcome": "create_runtime", "route": f"runtime_{c.destination}"}
        elif c.destination == "discard":
            item |= {"outcome": "skipped"}
        else:
            item |= {"outcome": "blocked", "reasons": ["needs_review"]}
        items.append(item)
    return {**shown, "blocked": False, "candidates": items}


def _import_preview(root: Path, text: str, where: str, actor: str) -> dict[str, Any]:
    plan = _import_plan(root, text, where, actor)
    items = []
    for c in plan["candidates"]:
        a = c["action"]
        item = {"index": c["index"], "destination": c["classification"]["destination"], "outcome": a["kind"]}
        item |= {k: a[k] for k in ("proposal_id", "path", "route", "reasons") if k in a}
        if a["kind"] == "blocked" and "reasons" not in a:
            item["reasons"] = [
                "needs_review" if c["classification"]["destination"] == "needs_review" else "repo_subset_blocked"
            ]
        if a["kind"] == "duplicate":
            item["matches"] = [{"kind": m["kind"], "id": m["id"]} for m in a["matches"]]
        items.append(item)
    return {
        "kind": "import",
        "plan_id": plan["plan_id"],
        "summary": plan["summary"],
        "blocked": any(i["outcome"] == "blocked" and i["destination"] == "repo" for i in items),
        "candidates": items,
    }


def routing_preview(
    project_root: str | os.PathLike[str], path: str | os.PathLike[str], text: str, *, actor: str = "cli"
) -> dict[str, Any]:
    """The outcome per candidate of the input file ``path`` (text ``text``) before anything is written:
    ``{"kind", "blocked", "candidates": [{"index", "destination", "outcome", "path"?, "proposal_id"?, "route"?,
    "reasons"?, "matches"?}], "plan_id"? (import), "summary"? (import), "expected_version"? and "previewed"?
    (session-end)}``. Blocked candidates carry reason codes only. Raises :class:`Refusal` (``not_a_routing_input``,
    the input's schema code). ``actor`` is part of an import plan's id: apply with the same one."""
    root = Path(project_root).resolve()
    kind = input_kind(path, text)
    if kind is None:
        raise Refusal(
            "not_a_routing_input",
            f"{Path(path).name} is neither a session-end file ({{task, "
            "candidates}}) nor an import manifest (version: memzoi/import)",
        )
    where = Path(path).name
    if kind == "import":
        return _import_preview(root, text, where, actor)
    return _session_preview(root, text, where, _input_key(root, path), actor)


def routing_apply(
    project_root: str | os.PathLike[str],
    path: str | os.PathLike[str],
    text: str,
    *,
    actor: str,
    plan_id: str | None = None,
    expected_version: int | None = None,
    source: str = "editor",
    previewed: str | None = None,
) -> dict[str, Any]:
    """Apply the routing :func:`routing_preview` showed: ``import apply`` with its ``plan_id``, or ``session-end``
    with the ``expected_version`` and ``previewed`` it saw (a moved state is refused: ``import_plan_stale``,
    ``version_conflict``, ``preview_stale``; ``previewed`` ``None`` checks nothing more). Returns the command's
    JSON outcome. Raises :class:`Refusal`, nothing written."""
    root = Path(project_root).resolve()
    kind = input_kind(path, text)
    where = Path(path).name
    if kind == "import":
        if not plan_id:
            raise Refusal("invalid_arguments", "apply the import with the `plan_id` its preview showed")
        from .import_apply import import_apply  # noqa: PLC0415 lazy: start-up

        return import_apply(root, text, plan_id=plan_id, where=where, actor=actor, path=str(path), source=source)
    if kind == "session_end":
        from .session_end import session_end  # noqa: PLC0415 lazy: start-up

        return session_end(
            root,
            text=text,
            where=where,
            expected_version=expected_version,
            actor=actor,
            source=source,
            input_path=_input_key(root, path),
            previewed=previewed,
        )
    raise Refusal("not_a_routing_input", f"{where} is neither a session-end file nor an import manifest")


def routing_arg(arg: str, report: Any) -> bool:
    """Check the command-line path ``arg`` as a session-end file or an import manifest of a project (YAML) when it
    is one, adding its findings (:func:`input_verdict`, what the editor shows) to ``report``
    (:class:`memzoi.runs.checkreport.CheckReport`); True when it was. ``memzoi check`` asks this before the walk, which
    only knows records, packets and resident files."""
    if not arg.endswith((".yml", ".yaml")) or not os.path.isfile(arg) or os.path.islink(arg):
        return False
    try:
        text = Path(arg).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    from ..project.verdict import ProjectContext  # noqa: PLC0415 lazy: start-up
    from ..runs.checkreport import Located  # noqa: PLC0415 lazy: start-up

    root = find_project_root(Path(arg))
    if input_kind(arg, text) is None or not (root / ".memzoi").is_dir():
        return False
    found = input_verdict(os.path.abspath(arg), text, root, ProjectContext.of(root / ".memzoi"))
    index = LineIndex(text)
    report.files_checked += 1
    report.findings.extend(
        Located(pathsafety.shown_path(arg), f, index.position(f.start), index.position(f.end)) for f in found
    )
    return True
