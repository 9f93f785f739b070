"""The context pack an agent asks for a task (``build_context_pack``): the admitted, active, current repository
records most relevant to the task and the paths it touches (Memzoi's ``applies_to`` scores, then text match), each
with a provenance line, cut to a token budget estimated without a tokenizer (:data:`TOKEN_RULE`). Unsafe records are
withheld (:mod:`memzoi.agent.recall`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .recall import Reader, applies_of, best_binding, normalize_path

#: How a context pack counts tokens: an estimate with no tokenizer, UTF-8 bytes / 4 rounded up.
TOKEN_RULE = "estimated: UTF-8 bytes of each entry's text divided by 4, rounded up"


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as a context pack counts them (:data:`TOKEN_RULE`)."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 4)


def _provenance_line(rec: dict[str, Any]) -> str:
    parts = [f"record {rec['id']} ({rec['path']})", f"{rec['type']}/{rec['lane']}", f"status {rec['status']}"]
    if rec.get("attestation"):
        parts.append(f"attestation {rec['attestation']}")
    if rec.get("source_kind"):
        parts.append(f"source {rec['source_kind']}" + (f" {rec['source_ref']}" if rec.get("source_ref") else ""))
    if rec.get("proposal_id"):
        parts.append(f"from proposal {rec['proposal_id']}")
    parts.append(f"updated {rec['updated_at']}")
    return "provenance: " + ", ".join(parts)


def build_context_pack(
    root: Path, task: str, *, paths: list[str] | None = None, token_budget: int = 2000
) -> dict[str, Any]:
    """A repo-only pack of the admitted, active, current records relevant to ``task`` (a natural query above the
    relevance floor, :mod:`memzoi.agent.query`) or to
    ``paths`` (:func:`memzoi.agent.recall.path_match_score` over ``applies_to``), ranked by path score, then text match, then id, and
    cut greedily to ``token_budget`` tokens counted as :data:`TOKEN_RULE` (an entry that does not fit is skipped
    and listed in ``omitted``). Unsafe records are listed in ``withheld`` and never included."""
    wanted = [normalize_path(p, root, field=f"paths[{i}]") for i, p in enumerate(paths or [])]
    with Reader(root) as r:
        text = r.text_scores(task)
        ranked: list[tuple[Any, ...]] = []
        withheld: list[dict[str, Any]] = []
        for rec in r.active():
            score, binding = best_binding(applies_of(rec), wanted) if wanted else (0, None)
            lexical = text.get(rec["rowid"])
            if score == 0 and lexical is None:
                continue
            if not r.usable(rec, withheld):
                continue
            ranked.append((-score, lexical is None, -(lexical or 0.0), rec["id"], rec, score, binding))
    ranked.sort(key=lambda t: t[:4])
    used, entries, omitted = 0, [], []
    for *_, rec, score, binding in ranked:
        prov = _provenance_line(rec)
        block = f"## {rec['title']}\n\n{rec['body']}\n\n{prov}\n"
        cost = estimate_tokens(block)
        if used + cost > token_budget:
            omitted.append(rec["id"])
            continue
        used += cost
        entries.append(
            {
                "id": rec["id"],
                "title": rec["title"],
                "type": rec["type"],
                "lane": rec["lane"],
                "path": rec["path"],
                "path_score": score,
                "binding": binding,
                "tokens": cost,
                "body": rec["body"],
                "provenance": prov,
                "text": block,
            }
        )
    return {
        "task": task,
        "paths": wanted,
        "token_budget": token_budget,
        "tokens_used": used,
        "token_counting": TOKEN_RULE,
        "records": entries,
        "withheld": withheld,
        "omitted": omitted,
    }
