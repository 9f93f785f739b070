"""One threat rule for the editor and the write path (reference §4): an accepted ``[safety]`` fingerprint has the
same effect in both, and only where an accepted fingerprint may ever apply."""

from __future__ import annotations

import random
import string

import pytest

from memzoi.ledger import Refusal
from memzoi.resident import editor, service, threats
from memzoi.resident.format import serialize
from memzoi.resident.scope import resident_file
from memzoi.safety.base import Hit
from memzoi.safety.fingerprint import fingerprint

from .conftest import configure, rules

#: A value our own detectors would report as high_entropy_value (injected below: today only Memzoi's floor emits
#: that code, and its matches can never be accepted).
OWN = "qZ7vK2mX9pL4wR8t"


@pytest.fixture
def own_entropy(monkeypatch):
    """Our own (non-floor) high_entropy_value hit on every occurrence of :data:`OWN`."""
    real = threats.collect_hits

    def collect(text, **kw):
        hits = real(text, **kw)
        at = text.find(OWN)
        if at >= 0:
            hits.append(Hit("high_entropy_value", at, at + len(OWN), "high-entropy value", OWN))
        return hits

    monkeypatch.setattr(threats, "collect_hits", collect)


def _accept(root, *fps):
    configure(root, "[safety]\naccepted_fingerprints = [" + ", ".join(f'"{fp}"' for fp in fps) + "]\n")


def _editor_blocks(root, entry) -> bool:
    file = resident_file(root, "project")
    return any(threats.blocks_write(f) for f in editor.findings(serialize([entry]), file, []))


def _write_blocks(root, entry) -> bool:
    try:
        cand = service.propose(
            root, scope="project", action="add", content=entry, reason="r", confidence=1, actor="a"
        ).candidate
        service.apply(root, cand.id, actor="a")
    except Refusal as err:
        assert err.code == "threat_blocked", err.message
        return True
    return False


def test_an_accepted_own_high_entropy_value_is_clean_in_the_editor_and_on_write(project, own_entropy):
    entry = f"The build id {OWN} is not a secret."
    assert _editor_blocks(project, entry) and _write_blocks(project, entry)
    _accept(project, fingerprint("high_entropy_value", "body", OWN))
    assert not _editor_blocks(project, entry)
    assert not _write_blocks(project, entry)  # the write path used to scan without the accepted set
    assert rules(project).read_text(encoding="utf-8") == entry
    # the reason goes through the same rule
    service.propose(
        project, scope="project", action="add", content="Other.", reason=f"see {OWN}", confidence=1, actor="a"
    )


def test_credentials_and_memzois_floor_can_never_be_accepted(project):
    rnd = random.Random(7)
    token = "gh" + "p_" + "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(36))
    floor = "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(44))
    file = resident_file(project, "project")
    fps = [
        f.data["fingerprint"]
        for text in (f"Deploy token {token}", f"Build {floor}")
        for f in editor.findings(text, file, [])
        if threats.blocks_write(f)
    ]
    assert len(fps) == 2
    _accept(project, *fps)
    for entry in (f"Deploy token {token}", f"Build {floor}"):
        assert _editor_blocks(project, entry) and _write_blocks(project, entry), entry
    assert not rules(project).exists()
