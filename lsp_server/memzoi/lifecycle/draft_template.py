"""A complete draft record for ``memzoi materialize candidate``: every key a Memzoi record requires, filled with
values that validate, so a user edits a draft instead of guessing the keys one refusal at a time.

Source of the keys and their order: reference §1.4 (required keys: ``id``, ``kind``, ``profile``, ``type``,
``lane``, ``title``, ``scope``, ``visibility``, ``content_class``, ``status``, ``confidence``, ``timestamp``,
``retention``, ``origin``) and §1.5 (``render_okf_record_markdown``, okf.rs@164dcd6b); the candidate's draft
rules (repo scope and visibility, ``general_repo_knowledge``, status ``active``) are §5.1's.
"""

from __future__ import annotations

from ..judge.legacy import concept_slug
from ..read.render import render_record

#: The title the template carries unless another is given (its slug is the record's id).
EXAMPLE_TITLE = "Build with make"
EXAMPLE_BODY = "Run `make` from the repository root; `make test` runs the tests."


def draft_template(now: str, *, title: str = EXAMPLE_TITLE, body: str = EXAMPLE_BODY) -> str:
    """The text of a draft record (Markdown with frontmatter) that ``memzoi materialize candidate`` accepts as
    it is: an active repository decision in the semantic lane titled ``title`` (its id is the title's concept
    slug, :func:`memzoi.judge.legacy.concept_slug`), created at ``now`` (RFC 3339 with an offset, the record's
    ``timestamp``; the semantic lane's retention facts are ``{}``), with Memzoi's materialization origin.

    Raises ``ValueError`` when ``title`` has no character a slug keeps (nothing to name the record by)."""
    rid = concept_slug(title)
    if not rid:
        raise ValueError(f"the title {title!r} gives no record id; use letters or digits")
    data = {
        "id": rid,
        "kind": "memory",
        "profile": "memzoi",
        "type": "decision",
        "lane": "semantic",
        "title": title.strip(),
        "timestamp": now,
        "status": "active",
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "confidence": 1,
        "retention": {},
        "origin": {"origin_key": f"repository-record:{rid}", "route": "repository_materialization"},
    }
    return render_record(data, body.strip())
