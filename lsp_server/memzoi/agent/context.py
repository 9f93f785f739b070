"""``memzoi context`` and ``memzoi handoff``: a task's context pack with the plane of every item.

Memzoi's lifecycle document ("Runtime local and session continuity"): runtime rows "are included in
context/handoff only with explicit ``--include-local`` or ``--include-session``. Their recall and precheck
citations carry ``provenance: runtime``; Git records carry ``provenance: git``. A runtime row never becomes shared
repo truth merely because it was recalled, exported, or included in a context pack." And ("Destination, plane,
lane, and provenance"): recall output carries separate ``provenance=`` and ``destination=`` fields.

So a pack is built in two sections that never mix:

* ``records``: the repository pack of :func:`memzoi.agent.context_pack.build_context_pack` (admitted, active, current
  records; ranked by path score then text match), each item with ``provenance: git``, ``destination: repo``;
* ``runtime``: only when asked, the private local records (``--include-local``; ``destination: local``) and the
  open, current session checkpoints (``--include-session``; ``destination: session``) relevant to the task (any
  query term in their text, or an ``applies_to`` matching a path), each with ``provenance: runtime``, labelled in
  the text as private runtime memory that is not repository truth, after the repository records in the budget.

A handoff (:func:`handoff`) is the pack for the next session: the same two sections, with every open, current
checkpoint (their task is the continuity being handed off) when ``include_session`` is set.
Token counting is :data:`memzoi.agent.context_pack.TOKEN_RULE`. Reads only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..base.clock import utc_now
from .context_pack import TOKEN_RULE, build_context_pack, estimate_tokens
from .query import terms
from .recall import best_binding, normalize_path

RUNTIME_LABEL = "private runtime memory (provenance runtime; not repository truth)"


def context_pack(
    root: Path,
    task: str,
    *,
    paths: list[str] | None = None,
    token_budget: int = 2000,
    include_local: bool = False,
    include_session: bool = False,
) -> dict[str, Any]:
    """The context pack of ``task`` over the project at ``root``: ``{task, paths, token_budget, tokens_used,
    token_counting, records: [... provenance git], runtime: [... provenance runtime], withheld, omitted,
    include_local, include_session}``. ``paths`` are repository-relative (:func:`normalize_path` raises
    :class:`~memzoi.ledger.Refusal` ``invalid_value`` otherwise); ``token_budget`` in estimated tokens."""
    return _pack(root, task, paths or [], token_budget, include_local, include_session, every_checkpoint=False)


def handoff(
    root: Path,
    task: str = "",
    *,
    paths: list[str] | None = None,
    token_budget: int = 2000,
    include_local: bool = False,
    include_session: bool = False,
) -> dict[str, Any]:
    """The handoff pack for the next session: :func:`context_pack` of ``task`` (or of ``paths``), except that with
    ``include_session`` every open, current checkpoint is included whatever its words (``kind: handoff``)."""
    out = _pack(root, task, paths or [], token_budget, include_local, include_session, every_checkpoint=True)
    return {"kind": "handoff", **out}


def _pack(
    root: Path,
    task: str,
    paths: list[str],
    budget: int,
    include_local: bool,
    include_session: bool,
    *,
    every_checkpoint: bool,
) -> dict[str, Any]:
    wanted = [normalize_path(p, root) for p in paths]
    repo = build_context_pack(root, task, paths=wanted, token_budget=budget)
    for entry in repo["records"]:
        entry.update(provenance_line=entry.pop("provenance"), provenance="git", destination="repo")
    used, runtime, omitted = repo["tokens_used"], [], list(repo["omitted"])
    for item in _runtime_items(root, task, wanted, include_local, include_session, every_checkpoint):
        if used + item["tokens"] > budget:
            omitted.append(item["id"])
            continue
        used += item["tokens"]
        runtime.append(item)
    from ..safety.redact import scrub  # noqa: PLC0415 lazy: start-up - a secret typed into the task is never echoed

    return {
        "task": scrub(task) if task else task,
        "paths": wanted,
        "token_budget": budget,
        "tokens_used": used,
        "token_counting": TOKEN_RULE,
        "include_local": include_local,
        "include_session": include_session,
        "records": repo["records"],
        "runtime": runtime,
        "withheld": repo["withheld"],
        "omitted": omitted,
    }


def _relevant(words: list[str], text: str) -> bool:
    hay = text.casefold()
    return any(w in hay for w in words)


def _runtime_items(
    root: Path, task: str, wanted: list[str], include_local: bool, include_session: bool, every_checkpoint: bool
) -> list[dict[str, Any]]:
    words = terms(task) if task.strip() else []
    items: list[dict[str, Any]] = []
    if include_local:
        from ..ledger.local_records import list_local  # noqa: PLC0415 lazy: start-up

        for rec in sorted(list_local(root), key=lambda r: r.id):
            score, binding = best_binding(rec.applies_to, wanted) if wanted else (0, None)
            if score == 0 and not _relevant(words, f"{rec.title}\n{rec.body}\n{' '.join(rec.tags)}"):
                continue
            items.append(
                _item(
                    rec.id,
                    "local",
                    rec.type,
                    rec.lane,
                    rec.title,
                    rec.body,
                    score,
                    binding,
                    f"local record {rec.id}, {rec.type}/{rec.lane}, created {rec.created_at}",
                )
            )
    if include_session:
        from ..lifecycle.checkpoints import list_checkpoints  # noqa: PLC0415 lazy: start-up

        now = utc_now()
        for cp in sorted(list_checkpoints(root)[1], key=lambda c: c.id):
            if not cp.is_current(now):
                continue
            if not every_checkpoint and not _relevant(words, f"{cp.task}\n{cp.title}\n{cp.body}"):
                continue
            items.append(
                _item(
                    cp.id,
                    "session",
                    "episode",
                    "session",
                    cp.title,
                    cp.body,
                    0,
                    None,
                    f"checkpoint {cp.id} for task {cp.task!r}, version {cp.version}, started {cp.started_at}",
                    task=cp.task,
                )
            )
    items.sort(key=lambda i: (-i["path_score"], i["destination"], i["id"]))
    return items


def _item(
    rid: str,
    destination: str,
    type_: str,
    lane: str,
    title: str,
    body: str,
    score: int,
    binding: str | None,
    facts: str,
    **extra: Any,
) -> dict[str, Any]:
    line = f"provenance: runtime ({destination}), {facts}"
    block = f"## {title}\n\n[{RUNTIME_LABEL}]\n\n{body}\n\n{line}\n"
    return {
        "id": rid,
        "title": title,
        "type": type_,
        "lane": lane,
        "provenance": "runtime",
        "destination": destination,
        "path_score": score,
        "binding": binding,
        "tokens": estimate_tokens(block),
        "body": body,
        "provenance_line": line,
        "text": block,
        **extra,
    }
