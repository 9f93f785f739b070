"""The lifecycle writers run the gate `memzoi check` runs on what they would write, so none of them can write a
value `check` refuses: fed such a value, each refuses with the code `check` reports for it.

The values are ones only a scan of each decoded value as its own text finds (Memzoi's anchored rules at the start
of a value, an escaped invisible character); they are built from pieces at run time and never printed."""

from __future__ import annotations

import pytest

from memzoi.judge.analysis import analyze_text
from memzoi.lifecycle import Refusal, add_local, apply_proposal, propose_supersede, propose_tombstone, route_local
from memzoi.lifecycle.reattest import reattest

from .. import builders
from .conftest import PENDING, TARGET_ID

#: (value, the code `check` gives it): Memzoi's environment_secret and authorization_header at a value's start
#: (placeholders our own detectors leave alone), each of which a renderer writes as a quoted one-line value.
VALUES = [("TOK" + "EN=<value>", "environment_secret"), ("Author" + "ization: Bearer <token>", "authorization_header")]
IDS = ["env", "authorization"]


def _check_codes(text: str, path) -> set[str]:
    return {f.code for f in analyze_text(text, path).findings}


@pytest.mark.parametrize("value, code", VALUES, ids=IDS)
def test_check_refuses_the_value_in_a_packet_and_a_record(repo, value, code):
    packet = builders.packet("mem-probe", description=value)
    assert code in _check_codes(packet, repo / PENDING / "mem-probe.md")
    rec = builders.record("probe", description=value)
    assert code in _check_codes(rec, repo / ".memzoi/records/probe.md")


@pytest.mark.parametrize("value, code", VALUES, ids=IDS)
def test_a_supersede_proposal_with_such_a_title_is_refused_with_checks_code(repo, value, code):
    with pytest.raises(Refusal) as err:
        propose_supersede(repo, TARGET_ID, title=value, body="The replacement.", reason="Outdated.", actor="t")
    assert err.value.code == code
    assert not list((repo / PENDING).glob("*probe*"))


@pytest.mark.parametrize("value, code", VALUES, ids=IDS)
def test_a_tombstone_proposal_with_such_a_reason_is_refused_with_checks_code(repo, value, code):
    before = sorted(p.name for p in (repo / PENDING).iterdir())
    with pytest.raises(Refusal) as err:
        propose_tombstone(repo, TARGET_ID, reason=value, actor="t")
    assert err.value.code == code
    assert sorted(p.name for p in (repo / PENDING).iterdir()) == before


@pytest.mark.parametrize("value, code", VALUES, ids=IDS)
@pytest.mark.parametrize("write", ["apply", "route_local"])
def test_applying_or_routing_a_packet_holding_such_a_value_is_refused_with_checks_code(repo, value, code, write):
    path = repo / PENDING / "mem-probe.md"
    builders.write(repo, f"{PENDING}/mem-probe.md", builders.packet("mem-probe", description=value))
    assert code in _check_codes(path.read_text(encoding="utf-8"), path)
    with pytest.raises(Refusal) as err:
        (apply_proposal if write == "apply" else route_local)(repo, path, actor="t")
    assert err.value.code == code
    assert path.exists()


@pytest.mark.parametrize("value, code", VALUES, ids=IDS)
def test_a_local_record_with_such_a_title_is_refused_with_checks_code(repo, value, code):
    with pytest.raises(Refusal) as err:
        add_local(repo, title=value, body="Local body.", actor="t")
    assert err.value.code == code


@pytest.mark.parametrize("value, code", VALUES, ids=IDS)
def test_reattesting_a_record_holding_such_a_value_is_refused_with_checks_code(repo, value, code):
    rel = ".memzoi/records/probe.md"
    builders.write(repo, rel, builders.record("probe", description=value))
    before = (repo / rel).read_bytes()
    with pytest.raises(Refusal) as err:
        reattest(repo, "probe", actor="t")
    assert err.value.code == code
    assert (repo / rel).read_bytes() == before
