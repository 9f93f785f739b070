"""Cross-file checks: lineage, proposal preconditions, duplicates, identities, and incremental re-evaluation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memzoi.base.findings import Severity
from memzoi.cli.main import main
from memzoi.judge.analysis import analyze_text
from memzoi.project.crossfile import FileFacts, Workspace, facts_from_analysis
from memzoi.read.render import render_packet
from memzoi.runs.check import check_paths

from . import builders

TARGET = "semantic/decisions/auth-client-validation"


def record(
    rid: str, *, status="active", scope="repo", scope_id=None, updated="2026-07-05T00:00:00Z", body=None, **fields
) -> str:
    """A record created on 2026-07-01 (the shared builder, with this module's defaults)."""
    return builders.record(
        rid,
        status=status,
        scope=scope,
        scope_id=scope_id,
        timestamp="2026-07-01T00:00:00Z",
        updated=updated,
        body=body or f"Body of {rid}",
        **fields,
    )


def proposal(
    pid: str,
    *,
    action="create",
    target=None,
    supersedes=(),
    scope="repo",
    proposed_at="2026-07-06T00:45:00Z",
    status="proposed",
    body=None,
) -> str:
    """A packet proposed (and timestamped) at ``proposed_at``; a resolved ``status`` adds its resolution."""
    fields = builders.packet_fields(
        pid,
        action=action,
        target=target,
        status=status,
        supersedes=list(supersedes),
        scope={"kind": scope},
        timestamp=proposed_at,
    )
    fields["proposal"]["proposed_at"] = proposed_at
    return render_packet(fields, body or f"Body of {pid}")


def rpath(rid: str) -> str:
    return f"ws/.memzoi/records/{rid}.md"


def ppath(pid: str, folder="pending") -> str:
    return f"ws/.memzoi/proposals/{folder}/{pid}.md"


def put(ws: Workspace, path: str, text: str) -> set[str]:
    return ws.update(path, analyze_text(text, path))


def codes(ws: Workspace, path: str) -> list[str]:
    return [f.code for f in ws.findings_for(path)]


def test_example_proposals_dangle_until_targets_exist(corpus, tmp_path):
    pending = tmp_path / ".memzoi/proposals/pending"
    pending.mkdir(parents=True)
    for src in sorted((corpus / "examples/proposals").glob("*.md")):
        shutil.copyfile(src, pending / src.name)
    report = check_paths([str(tmp_path / ".memzoi")])
    dangling = sorted(
        (Path(l.path).name, l.finding.message.split("`")[3])
        for l in report.findings
        if l.finding.code == "dangling_reference"
    )
    assert dangling == [("mem_2026_07_06_auth_supersede.md", TARGET), ("mem_2026_07_06_auth_tombstone.md", TARGET)]
    # A matching target (same scope kind as the packets, updated before they were proposed) ends it.
    target = tmp_path / f".memzoi/records/{TARGET}.md"
    target.parent.mkdir(parents=True)
    target.write_text(record(TARGET, scope="project"), encoding="utf-8")
    report = check_paths([str(tmp_path / ".memzoi/proposals")])  # only the packets are checked
    lineage = [
        l
        for l in report.findings
        if l.finding.code
        in ("dangling_reference", "proposal_target_inactive", "proposal_target_stale", "proposal_cross_scope")
    ]
    assert lineage == []


def test_example_proposals_via_cli_json(corpus, capsys):
    main(["check", str(corpus / "examples/proposals"), "--format", "json"])  # exit code: gate findings decide
    out = json.loads(capsys.readouterr().out)
    found = [(Path(f["path"]).name, f["code"], f["severity"]) for f in out["findings"]]
    assert ("mem_2026_07_06_auth_supersede.md", "dangling_reference", "warning") in found
    assert ("mem_2026_07_06_auth_tombstone.md", "dangling_reference", "warning") in found


def test_corpus_records_have_no_cross_file_findings(corpus):
    report = check_paths([str(corpus / "memzoi-repo")])
    assert [l for l in report.findings if l.finding.severity <= 2] == []


def test_incremental_updates_return_changed_paths():
    ws = Workspace()
    p = ppath("p1")
    assert put(ws, p, proposal("p1", action="tombstone", target="old")) == {p}
    assert codes(ws, p) == ["dangling_reference"]
    [f] = ws.findings_for(p)
    assert analyze_text(proposal("p1", action="tombstone", target="old"), p).text[f.start : f.end] == "old"
    r = rpath("old")
    assert put(ws, r, record("old")) == {p}  # the packet's finding cleared; the record has none
    assert codes(ws, p) == []
    assert put(ws, r, record("old")) == set()  # same facts: nothing to republish
    assert put(ws, r, record("old", status="superseded")) == {p}
    assert codes(ws, p) == ["proposal_target_inactive"]
    assert ws.remove(r) == {p}
    assert codes(ws, p) == ["dangling_reference"]
    assert ws.remove(p) == {p}
    assert ws.findings_for(p) == [] and ws.paths() == []


def test_record_lineage_and_lifecycle():
    ws = Workspace()
    new, old = rpath("new"), rpath("old")
    put(ws, new, record("new", supersedes="old", lineage={"kind": "renewal", "predecessor_id": "gone"}))
    assert codes(ws, new) == ["dangling_reference", "dangling_reference"]
    assert put(ws, old, record("old")) == {new}
    assert codes(ws, new) == ["lifecycle_inconsistent", "dangling_reference"]
    assert put(ws, old, record("old", status="superseded")) == {new}
    assert codes(ws, new) == ["dangling_reference"]
    assert ws.referrers("old") == [new] and ws.record_paths("old") == [old]


def test_record_proposal_id_refers_to_packets_but_db_ids_are_not_checked():
    ws = Workspace()
    r = rpath("made")
    put(ws, r, record("made", proposal_id="mem_packet_1"))
    assert codes(ws, r) == ["dangling_reference"]
    a = ppath("mem_packet_1", "resolved/applied")
    assert put(ws, a, proposal("mem_packet_1", status="applied")) == {r}
    assert codes(ws, r) == []
    put(ws, rpath("db"), record("db", proposal_id="prop_019f711c-6ce5-7072-be4b-3efae8243e1f"))
    assert codes(ws, rpath("db")) == []


def test_proposal_preconditions():
    ws = Workspace()
    put(ws, rpath("t"), record("t", scope="repo", updated="2026-07-10T00:00:00Z"))
    p = ppath("p")
    put(ws, p, proposal("p", action="supersede", supersedes=["t"], scope="project", proposed_at="2026-07-06"))
    assert sorted(codes(ws, p)) == ["proposal_cross_scope", "proposal_target_stale"]
    stale = [f for f in ws.findings_for(p) if f.code == "proposal_target_stale"][0]
    assert "2026-07-10T00:00:00Z" in stale.message
    # updated == proposed_at is allowed (<=); a date is UTC midnight
    put(ws, rpath("t"), record("t", scope="project", updated="2026-07-06T00:00:00Z"))
    assert codes(ws, p) == []
    put(ws, rpath("t"), record("t", scope="project", scope_id="other", updated="2026-07-06T00:00:00Z"))
    assert codes(ws, p) == ["proposal_cross_scope"]


def test_resolved_packets_are_not_checked_for_targets():
    ws = Workspace()
    a = ppath("done", "resolved/applied")
    put(ws, a, proposal("done", action="tombstone", target="missing", status="applied"))
    assert codes(ws, a) == []


def test_duplicate_content():
    ws = Workspace()
    a, b = rpath("a"), rpath("b")
    put(ws, a, record("a", body="Same body."))
    assert put(ws, b, record("b", body="Same body.  ")) == {a, b}
    assert codes(ws, a) == ["duplicate_content"] and codes(ws, b) == ["duplicate_content"]
    f = ws.findings_for(a)[0]
    assert analyze_text(record("a", body="Same body."), a).text[f.start : f.end] == "Same body."
    p = ppath("dup")
    put(ws, p, proposal("dup", body="Same body."))
    assert codes(ws, p) == ["duplicate_content"]
    assert put(ws, b, record("b", body="Same body.", status="tombstoned")) == {a, b, p}  # messages name twins
    assert codes(ws, b) == [] and codes(ws, a) == ["duplicate_content"]  # still the pending proposal
    assert ws.remove(p) == {a, p}  # p had findings: they are cleared
    assert codes(ws, a) == []


def test_a_supersede_packet_is_no_duplicate_of_the_record_it_replaces():
    # issue 28: a supersede starts as a copy of its record's body; that pair is the replacement, not a duplicate
    ws = Workspace()
    r, p = rpath("a"), ppath("sup")
    put(ws, r, record("a", body="Same body."))
    put(ws, p, proposal("sup", action="supersede", target="a", supersedes=["a"], body="Same body."))
    assert codes(ws, r) == [] and codes(ws, p) == []
    # any other copy is still a duplicate of both, and names only real twins
    c = rpath("c")
    put(ws, c, record("c", body="Same body."))
    assert codes(ws, r) == codes(ws, p) == codes(ws, c) == ["duplicate_content"]
    assert ws.findings_for(p)[0].data["others"] == [c]
    # a create packet copying the record is a duplicate, as before
    ws2 = Workspace()
    put(ws2, r, record("a", body="Same body."))
    q = ppath("copy")
    put(ws2, q, proposal("copy", body="Same body."))
    assert codes(ws2, r) == codes(ws2, q) == ["duplicate_content"]


def test_duplicate_content_is_judged_on_the_text_a_reviewer_sees():
    # A CRLF copy, a copy with trailing spaces on its lines and a copy with a trailing blank line read the same.
    ws = Workspace()
    body = "First line.\nSecond line."
    a, b, c = rpath("a"), rpath("b"), rpath("c")
    put(ws, a, record("a", body=body))
    put(ws, b, record("b", body=body).replace("\n", "\r\n"))
    put(ws, c, record("c", body="First line.   \nSecond line.\t\n\n"))
    assert codes(ws, a) == codes(ws, b) == codes(ws, c) == ["duplicate_content"]
    # Whitespace inside a line and a changed word are real differences.
    d, e = rpath("d"), rpath("e")
    put(ws, d, record("d", body="First  line.\nSecond line."))
    put(ws, e, record("e", body="First line.\nSecond lines."))
    assert codes(ws, d) == [] and codes(ws, e) == []


def test_duplicate_identity_across_pending_and_resolved():
    ws = Workspace()
    p, r = ppath("same"), ppath("same", "resolved/rejected")
    put(ws, p, proposal("same"))
    assert put(ws, r, proposal("same", status="rejected", body="Other.")) == {p, r}
    assert codes(ws, p) == ["duplicate_identity"] and codes(ws, r) == ["duplicate_identity"]
    # an error (Memzoi's inventory refuses it); the pending copy is told the identity is final
    (fp,) = ws.findings_for(p)
    (fr,) = ws.findings_for(r)
    assert fp.severity == fr.severity == Severity.ERROR
    assert "was already rejected (resolved/rejected/); an applied or rejected identity is final" in fp.message
    assert "rename the pending one" in fr.message
    # a packet whose frontmatter id collides with another's file id
    other = ppath("x2")
    put(ws, other, proposal("same", body="Third."))
    assert "duplicate_identity" in codes(ws, other)
    ws.remove(r)
    ws.remove(other)
    assert codes(ws, p) == []


def test_facts_round_trip_json():
    a = analyze_text(proposal("p", action="supersede", supersedes=["t"]), ppath("p"))
    facts = facts_from_analysis(a)
    again = FileFacts.from_json(json.loads(json.dumps(facts.to_json())))
    assert again == facts


def test_broken_target_still_counts_as_existing():
    ws = Workspace()
    put(ws, rpath("t"), builders.edit(record("t"), "confidence: 1", "confidence: high"))
    p = ppath("p")
    put(ws, p, proposal("p", action="tombstone", target="t"))
    assert codes(ws, p) == []


def test_updates_stay_cheap_with_thousands_of_twins(monkeypatch):
    """10,000 active records with one body: building evaluates each file a bounded number of times (linear, not
    quadratic), and one edit re-evaluates a handful of files (naming the first twins never re-evaluates all of
    them). Counted in evaluations, not timed."""
    evaluated: list[str] = []
    evaluate = Workspace._evaluate

    def counting(self, path, f):
        evaluated.append(path)
        return evaluate(self, path, f)

    monkeypatch.setattr(Workspace, "_evaluate", counting)
    ws = Workspace()
    facts = [
        FileFacts(kind="record", role="record", ident=f"r{i:05d}", status="active", content="h" * 64, body_span=(0, 1))
        for i in range(10_000)
    ]
    for i, f in enumerate(facts):
        ws.update(f"p/{i:05d}", f)
    assert len(evaluated) <= 5 * len(facts), len(evaluated)
    evaluated.clear()
    changed = ws.update(
        "p/05000",
        FileFacts(
            kind="record", role="record", ident="r05000", status="superseded", content="h" * 64, body_span=(0, 1)
        ),
    )
    assert changed == {"p/05000"}  # only its own finding went away; the others still name the first twins
    assert "and others" in ws.findings_for("p/00001")[0].message
    assert len(evaluated) <= 10, evaluated


# --- robustness: any frontmatter shape gives facts, findings with valid spans, and never an exception ---------

from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,  # noqa: E402
)

_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.text(max_size=8),
    st.sampled_from(["active", "proposed", "t", "supersede", "tombstone", "create", "repo"]),
)
_value = st.recursive(
    _scalar,
    lambda c: st.one_of(
        st.lists(c, max_size=3),
        st.dictionaries(
            st.sampled_from(["action", "target", "kind", "id", "predecessor_id", "proposed_at", "x"]), c, max_size=3
        ),
    ),
    max_leaves=6,
)
_keys = st.sampled_from(
    [
        "id",
        "kind",
        "status",
        "scope",
        "scope_id",
        "supersedes",
        "lineage",
        "proposal",
        "proposal_id",
        "updated",
        "timestamp",
        "materialization",
        "retention",
        "lane",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from([rpath("a"), rpath("b"), ppath("p"), ppath("p", "resolved/applied")]),
            st.dictionaries(_keys, _value, max_size=8),
            st.text(max_size=20),
        ),
        max_size=5,
    )
)
def test_workspace_never_raises_on_any_frontmatter(files):
    ws = Workspace()
    texts = {}
    for path, data, body in files:
        text = "---\n" + json.dumps(data) + "\n---\n\n" + body
        texts[path] = text
        ws.update(path, analyze_text(text, path))
    for path in ws.paths():
        for f in ws.findings_for(path):
            assert 0 <= f.start <= f.end <= len(texts[path])
    for path in list(ws.paths()):
        ws.remove(path)
    assert ws.paths() == []


def test_reusing_a_redacted_identity_is_a_duplicate():
    """A rejected non-repo-safe packet is archived as a receipt named by the token of its id; a new packet that
    reuses the original id meets it (Memzoi's identity matching, reference §2.6)."""
    from memzoi.project.crossfile import identity_token

    token = identity_token("mem_secret")
    assert identity_token(token) == token and token.startswith("redacted-identity-")
    ws = Workspace()
    receipt = ppath(token, "resolved/rejected")
    put(ws, receipt, proposal(token, status="rejected"))
    fresh = ppath("mem_secret")
    assert put(ws, fresh, proposal("mem_secret", body="New.")) == {fresh, receipt}
    assert codes(ws, fresh) == ["duplicate_identity"]
    assert "`mem_secret`" in ws.findings_for(fresh)[0].message
    assert ws.proposal_paths("mem_secret") == sorted([fresh, receipt])


# --- bulk load (the language server's first scan): the same findings as updates one by one ----------------------


def _scan_files() -> dict[str, FileFacts]:
    """Records and packets with every kind of cross-file relation: a lineage, a dangling reference, duplicates,
    a packet on a live and one on a missing target, a duplicate identity."""
    texts = {
        rpath("a"): record("a", body="Same body."),
        rpath("b"): record("b", body="Same body."),
        rpath("c"): record("c", supersedes=["a"], body="Body of c."),
        rpath("d"): record("d", supersedes=["gone"], body="Body of d."),
        ppath("p1"): proposal("p1", action="supersede", target="b", supersedes=["b"]),
        ppath("p2"): proposal("p2", action="tombstone", target="missing"),
        ppath("p3"): proposal("p3", body="Same body."),
        ppath("p3", "resolved/applied"): proposal("p3", status="applied", body="Other body."),
    }
    return {p: facts_from_analysis(analyze_text(t, p)) for p, t in texts.items()}


def _seen(ws: Workspace) -> dict[str, list[tuple[str, str, int, int]]]:
    return {p: [(f.code, f.message, f.start, f.end) for f in ws.findings_for(p)] for p in ws.paths()}


@settings(max_examples=60, deadline=None)
@given(st.permutations(sorted(_scan_files())), st.integers(0, 8))
def test_a_bulk_load_answers_as_updates_one_by_one(order, held):
    files = _scan_files()
    one_by_one, loaded = Workspace(), Workspace()
    for p in order:
        one_by_one.update(p, files[p])
    for i, p in enumerate(order):  # the first `held` files were fed before the scan (open documents)
        if i < held:
            loaded.update(p, files[p])
        else:
            loaded.load(p, files[p])
    expected = _seen(one_by_one)
    assert any(expected.values())  # the set has cross-file findings to get right
    assert _seen(loaded) == expected
    # after the load, a change reports what it changed as it would have
    a = rpath("a")
    assert loaded.remove(a) == one_by_one.remove(a)
    assert _seen(loaded) == _seen(one_by_one)


def test_a_change_after_a_bulk_load_reports_the_loaded_files_it_settles():
    files = _scan_files()
    ws = Workspace()
    for p, f in files.items():
        ws.load(p, f)
    # the first change evaluates the load: every loaded file with findings is reported changed with it
    changed = ws.update(rpath("e"), facts_from_analysis(analyze_text(record("e"), rpath("e"))))
    assert {p for p in files if ws.findings_for(p)} <= changed
    assert ws.update(rpath("e"), facts_from_analysis(analyze_text(record("e"), rpath("e")))) == set()


def test_the_paths_defining_a_record_id_follow_every_change_and_one_is_held_as_itself():
    """A record id defined by one file holds that path itself (not a set of one: issue 29, the server's peak RSS);
    defined by several, all of them, as files come, go, are loaded in bulk or change their id."""
    a, b, c = "/p/.memzoi/records/a.md", "/p/.memzoi/records/b.md", "/p/.memzoi/records/c.md"

    def facts(rid: str) -> FileFacts:
        return FileFacts(kind="record", role="record", ident=rid)

    ws = Workspace()
    ws.update(a, facts("x"))
    assert ws.record_paths("x") == [a] and ws._records["x"] is a
    ws.update(a, facts("x"))  # the same facts again
    ws.update(b, facts("x"))
    ws.load(c, facts("x"))
    assert ws.record_paths("x") == [a, b, c]
    assert [f.code for f in ws.findings_for(b)] == [f.code for f in ws.findings_for(a)]
    ws.remove(b)
    assert ws.record_paths("x") == [a, c]
    ws.update(a, facts("y"))  # a's id changes
    assert ws.record_paths("x") == [c] and ws._records["x"] is c and ws.record_paths("y") == [a]
    ws.remove(c)
    assert ws.record_paths("x") == [] and "x" not in ws._records
    bulk = Workspace.of({a: facts("x"), b: facts("x"), c: facts("z")})
    assert bulk.record_paths("x") == [a, b] and bulk._records["z"] is c
