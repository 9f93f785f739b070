"""Every lifecycle operation keeps the hand edits it does not own, or refuses naming the line.

The target is edited by hand after the proposal (or after its attestation): a hand-written ``description``, a
comment line in the frontmatter, a comment at the end of a key line, a comment in the body and trailing blank
lines, in LF or CRLF. Apply (create, supersede, tombstone), reject, materialize (update), re-attest and undo each
run against it: the written file keeps every one of them in place, re-parses to the intended record with no finding
at all, and undo restores the hand-edited bytes exactly. Hypothesis drives hand edits × operations.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memzoi import ledger
from memzoi.base.runtime import git_env
from memzoi.cli.main import main
from memzoi.judge.analysis import analyze_path
from memzoi.lifecycle import apply_proposal, propose_supersede, propose_tombstone, reject_proposal, undo
from memzoi.lifecycle.materialize import derive_decision, derive_plan, materialize_apply
from memzoi.lifecycle.materialize_candidate import build_candidate
from memzoi.lifecycle.reattest import reattest

from .. import builders
from ..ledger.faults import tree

TID = "keep-modules-small"
FIRST = "Keep modules under 400 lines."
BODY = f"{FIRST}\n\nSplit a module before it grows past that."
HAND_DESCRIPTION = "Module size rule, summarised by hand"
APPLIED = ".memzoi/proposals/resolved/applied"
REJECTED = ".memzoi/proposals/resolved/rejected"


@dataclass(frozen=True)
class Edits:
    """Which hand edits to make (each leaves a marker the test looks for afterwards)."""

    description: bool = True
    fm_comment: bool = True
    tail_comment: bool = True
    body_comment: bool = True
    trailing: int = 2

    def markers(self) -> list[str]:
        out = []
        if self.tail_comment:
            out.append("lane: semantic  # lane agreed by hand")
        if self.fm_comment:
            out.append("# scope agreed in review")
        if self.body_comment:
            out.append("<!-- hand note -->")
        return out


ALL = Edits()


def hand_edit(path: Path, edits: Edits, *, description_line: str | None = None) -> bytes:
    """Edit the file at ``path`` by hand as ``edits`` says (keeping its line endings); returns the new bytes."""
    raw = path.read_bytes().decode()
    nl = "\r\n" if "\r\n" in raw else "\n"
    t = raw.replace(nl, "\n")
    if edits.description:
        old = description_line or next(ln for ln in t.split("\n") if ln.startswith("description: "))
        t = builders.edit(t, old + "\n", f'description: "{HAND_DESCRIPTION}"\n', count=1)
    if edits.fm_comment:
        t = builders.edit(t, "\nscope:", "\n# scope agreed in review\nscope:", count=1)
    if edits.tail_comment:
        t = builders.edit(t, "\nlane: semantic\n", "\nlane: semantic  # lane agreed by hand\n", count=1)
    if edits.body_comment:
        first = next(ln for ln in t.split("\n---\n", 1)[1].split("\n") if ln and not ln.startswith("# "))
        t = builders.edit(t, f"\n{first}\n", f"\n{first}\n<!-- hand note -->\n", count=1)
    t += "\n" * edits.trailing
    data = t.replace("\n", nl).encode()
    path.write_bytes(data)
    return data


def assert_kept(path: Path, edits: Edits, newline: str) -> None:
    """``path`` keeps every hand edit of ``edits``, its line endings, and re-parses with no finding at all."""
    raw = path.read_bytes().decode()
    for marker in edits.markers():
        assert raw.count(marker) == 1, marker
    if edits.description:
        assert f'description: "{HAND_DESCRIPTION}"' in raw
    if edits.trailing:
        assert raw.endswith(newline * (edits.trailing + 1))
    assert set(re.findall(r"\r\n|\n", raw)) == {newline}
    analysis = analyze_path(path)
    assert analysis.model is not None and [f.code for f in analysis.findings] == [], path


def make_repo(base: Path, *, newline: str = "\n", attested: bool = False) -> Path:
    """A fresh git repository holding the target record ``TID`` (and nothing else under ``.memzoi``)."""
    root = base / "repo"
    subprocess.run(["git", "init", "-q", "--template=", str(root)], check=True, env=git_env())
    builders.write(
        root,
        builders.record_path(TID),
        builders.record(
            TID,
            type="preference",
            tags=["style"],
            body=BODY,
            newline=newline,
            attested=attested,
            updated="2026-07-05T20:16:46Z",
        ),
    )
    return root


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))


def target(root: Path) -> Path:
    return root / builders.record_path(TID)


def draft_of(root: Path, old: str, new: str) -> str:
    """A draft for an update: the current record without its attestation, with ``old`` edited to ``new``."""
    text = target(root).read_bytes().decode()
    nl = "\r\n" if "\r\n" in text else "\n"
    head, rest = text.split(f"{nl}materialization:{nl}", 1)
    return builders.edit(head + nl + rest[rest.index(f"---{nl}") :], old, new)


def run_and_undo(root: Path, op, check) -> None:
    """Run ``op()`` (a ledgered change), call ``check(result)``, undo it and compare the tree byte for byte."""
    before = tree(root)
    result = op()
    check(result)
    assert undo(root, result.change_id, actor="r").status == "undone"
    assert tree(root) == before


# --- one test per operation, all hand edits at once, LF and CRLF ------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("action", ["tombstone", "supersede"])
def test_apply_retire_keeps_the_targets_hand_edits(tmp_path, newline, action):
    root = make_repo(tmp_path, newline=newline)
    if action == "tombstone":
        packet = propose_tombstone(root, TID, reason="obsolete", actor="r").files[0].path
    else:
        packet = (
            propose_supersede(
                root, TID, title="Keep modules under 300 lines", body="Split at 300 lines.", reason="tighter", actor="r"
            )
            .files[0]
            .path
        )
    hand_edit(target(root), ALL)

    def check(result):
        assert_kept(target(root), ALL, newline)
        model = analyze_path(target(root)).model
        assert model.status == ("tombstoned" if action == "tombstone" else "superseded")
        assert model.description == HAND_DESCRIPTION  # not the first body line
        body = analyze_path(target(root)).document.body.replace("\r\n", "\n")
        assert body.startswith(f"{FIRST}\n<!-- hand note -->\n")

    run_and_undo(root, lambda: apply_proposal(root, Path(packet).name[:-3], actor="r"), check)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("operation", ["apply", "reject"])
def test_resolving_a_create_packet_keeps_its_hand_edits(tmp_path, newline, operation):
    root = make_repo(tmp_path)
    pending = builders.write(
        root,
        builders.packet_path("mem-new"),
        builders.packet(
            "mem-new", title="Prefer composition", body="Prefer composition to inheritance.", newline=newline
        ),
    )
    hand_edit(pending, ALL)
    folder = APPLIED if operation == "apply" else REJECTED
    resolved = root / folder / "mem-new.md"

    def check(result):
        assert_kept(resolved, ALL, newline)
        model = analyze_path(resolved).model
        assert model.status == ("applied" if operation == "apply" else "rejected")
        assert model.description == HAND_DESCRIPTION
        if operation == "apply":
            new = root / builders.record_path("prefer-composition")
            assert [f.code for f in analyze_path(new).findings] == []
            assert "<!-- hand note -->" in new.read_text()  # the body is the packet's body

    if operation == "apply":
        run_and_undo(root, lambda: apply_proposal(root, "mem-new", actor="r"), check)
    else:
        run_and_undo(root, lambda: reject_proposal(root, "mem-new", reason="not now", actor="r"), check)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_reattest_keeps_hand_edits_and_replaces_only_the_attestation(tmp_path, newline):
    root = make_repo(tmp_path, newline=newline, attested=True)
    hand_edit(target(root), ALL)
    assert "stale_attestation" in [f.code for f in analyze_path(target(root)).findings]

    def check(result):
        assert_kept(target(root), ALL, newline)
        assert analyze_path(target(root)).document.data["materialization"]["action"] == "update"

    run_and_undo(root, lambda: reattest(root, TID, actor="r"), check)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_materialize_update_keeps_hand_edits_it_does_not_change(tmp_path, newline):
    root = make_repo(tmp_path, newline=newline, attested=True)
    hand_edit(target(root), ALL)
    reattest(root, TID, actor="r")  # the hand edits are reviewed: the record is current again
    draft = draft_of(root, f"  - style{newline}", f"  - size{newline}")
    cand = build_candidate(root, draft, action="update")
    plan = derive_plan(cand)

    def check(result):
        assert_kept(target(root), ALL, newline)
        assert analyze_path(target(root)).model.tags == ["size"]

    run_and_undo(
        root,
        lambda: materialize_apply(root, cand, plan, derive_decision(plan, "2026-08-01T00:00:00Z"), actor="r"),
        check,
    )


def test_a_changed_body_follows_the_update_and_a_written_description_follows_it(tmp_path):
    root = make_repo(tmp_path, attested=True)
    hand_edit(target(root), Edits(description=False, body_comment=False))  # comments only: still current
    draft = draft_of(root, FIRST, "Keep modules under 300 lines.")
    cand = build_candidate(root, draft, action="update")
    plan = derive_plan(cand)
    materialize_apply(root, cand, plan, derive_decision(plan, "2026-08-01T00:00:00Z"), actor="r")
    model = analyze_path(target(root)).model
    assert model.description == "Keep modules under 300 lines."  # the renderer's own description follows the body
    assert_kept(target(root), Edits(description=False, body_comment=False), "\n")


# --- refusals ---------------------------------------------------------------------------------------------------


def test_a_comment_inside_the_attestation_refuses_reattest_naming_the_line(tmp_path, capsys):
    root = make_repo(tmp_path, attested=True)
    hand_edit(target(root), Edits())
    secretish = "note-" + "q7Zr" * 3  # built at run time: the message must not carry the comment's text
    text = builders.edit(target(root).read_text(), "\n  action: create\n", f"\n  # {secretish}\n  action: create\n")
    target(root).write_text(text)
    line = text[: text.index(secretish)].count("\n") + 1
    before = tree(root)
    with pytest.raises(ledger.Refusal) as err:
        reattest(root, TID, actor="r")
    assert err.value.code == "hand_edit_conflict"
    assert f"line {line} is a comment line inside `materialization`" in err.value.message
    assert secretish not in err.value.message and tree(root) == before
    capsys.readouterr()
    assert main(["reattest", TID, "--root", str(root), "--json"]) == 1
    out = capsys.readouterr().out
    assert json.loads(out)["error"]["code"] == "hand_edit_conflict" and secretish not in out
    assert tree(root) == before


def test_a_comment_inside_a_retired_attestation_refuses_apply(tmp_path, capsys):
    root = make_repo(tmp_path, attested=True)
    packet = propose_tombstone(root, TID, reason="obsolete", actor="r").files[0].path
    path = target(root)
    path.write_text(builders.edit(path.read_text(), "\n  revision:\n", "\n  # kept by hand\n  revision:\n"))
    before = tree(root)
    with pytest.raises(ledger.Refusal) as err:
        apply_proposal(root, Path(packet).name[:-3], actor="r")
    assert err.value.code == "hand_edit_conflict" and "inside `materialization`" in err.value.message
    assert tree(root) == before
    assert main(["proposals", "apply", Path(packet).name[:-3], "--root", str(root)]) == 1
    assert "memzoi: hand_edit_conflict: " in capsys.readouterr().err and tree(root) == before


# --- property: hand edits × operations --------------------------------------------------------------------------

OPERATIONS = ("tombstone", "supersede", "apply-create", "reject", "reattest", "materialize-update")


def _update(root: Path, newline: str):
    """A materialize update of ``TID`` (its tag ``style`` becomes ``size``) drafted from the file as it is now."""
    cand = build_candidate(root, draft_of(root, f"  - style{newline}", f"  - size{newline}"), action="update")
    plan = derive_plan(cand)
    return materialize_apply(root, cand, plan, derive_decision(plan, "2026-08-01T00:00:00Z"), actor="r")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.builds(Edits, st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.integers(0, 3)),
    operation=st.sampled_from(OPERATIONS),
    newline=st.sampled_from(["\n", "\r\n"]),
)
def test_every_operation_keeps_any_hand_edits(edits, operation, newline):
    with tempfile.TemporaryDirectory() as tmp:
        root = make_repo(Path(tmp), newline=newline, attested=operation in ("reattest", "materialize-update"))
        if operation in ("tombstone", "supersede"):
            made = (
                propose_tombstone(root, TID, reason="obsolete", actor="r")
                if operation == "tombstone"
                else propose_supersede(root, TID, title="Replacement", body="New rule.", reason="x", actor="r")
            )
            edited, packet = target(root), Path(made.files[0].path).name[:-3]
            op = lambda: apply_proposal(root, packet, actor="r")  # noqa: E731
        elif operation == "materialize-update":
            edited = target(root)
            op = lambda: _update(root, newline)  # noqa: E731
        elif operation == "reattest":
            edited = target(root)
            edits = Edits(edits.description, edits.fm_comment, edits.tail_comment, True, edits.trailing)
            op = lambda: reattest(root, TID, actor="r")  # noqa: E731
        else:
            edited = builders.write(
                root,
                builders.packet_path("mem-new"),
                builders.packet("mem-new", title="Prefer composition", body="Prefer composition.", newline=newline),
            )
            op = (
                (lambda: apply_proposal(root, "mem-new", actor="r"))
                if operation == "apply-create"
                else (lambda: reject_proposal(root, "mem-new", reason="no", actor="r"))
            )
        hand_edited = hand_edit(edited, edits)
        before = tree(root)
        result = op()
        written = (
            edited if edited.exists() else root / (APPLIED if operation == "apply-create" else REJECTED) / "mem-new.md"
        )
        assert_kept(written, edits, newline)
        undo(root, result.change_id, actor="r")
        assert tree(root) == before and edited.read_bytes() == hand_edited
