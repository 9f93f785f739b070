"""The tolerant frontmatter views (memzoi.base.views): a missing or mistyped field reads as None, an empty mapping or
an empty list, never as an exception, so the editor and the listings can describe a file the schema refuses."""

from __future__ import annotations

from memzoi.base.views import Frontmatter


def test_fields_read_as_stripped_text_or_none():
    fm = Frontmatter(
        {
            "id": " use-pnpm ",
            "title": "",
            "status": 5,
            "lane": ["semantic"],
            "updated": None,
            "timestamp": "2026-07-01T00:00:00Z",
        }
    )
    assert fm.id == "use-pnpm" and fm.title is None and fm.status is None and fm.lane is None
    assert fm.updated == "2026-07-01T00:00:00Z"  # the older profiles' field when `updated` is absent


def test_blocks_and_lists_of_any_shape():
    fm = Frontmatter(
        {
            "proposal": {"action": "supersede", "target": " old "},
            "supersedes": ["a", "", 3, "b"],
            "lineage": {"predecessor_id": "p"},
            "scope": {"kind": "repo"},
            "retention": "forever",
        }
    )
    assert (fm.proposal.action, fm.proposal.target, fm.proposal.reason) == ("supersede", "old", None)
    assert fm.supersedes_list == [(0, "a"), (3, "b")] and fm.supersedes is None
    assert fm.predecessor_id == "p" and fm.packet_scope == {"kind": "repo"} and fm.retention == {}
    assert Frontmatter({"supersedes": "old"}).supersedes_list == [(None, "old")]


def test_a_frontmatter_that_is_not_a_mapping_reads_as_empty():
    for data in (None, [], "text", 7):
        fm = Frontmatter(data)
        assert fm.id is None and fm.proposal.action is None and fm.supersedes_list == [] and fm.resolution == {}
