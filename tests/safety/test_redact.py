"""Redaction of detected secrets in shown or stored text."""

from __future__ import annotations

from memzoi.judge.analysis import analyze_text
from memzoi.safety.redact import MARK, redact, secret_spans

from ..builders import edit
from ..test_framing_yaml import VALID
from .helpers import proposal


def test_redact_masks_overlaps_only():
    spans = [(2, 5), (4, 8), (12, 14)]
    assert secret_spans([]) == []
    assert redact("0123456789abcdef", [(2, 8), (12, 14)]) == f"01{MARK}89ab{MARK}ef"
    assert redact("0123456789", [(2, 8)], 4, 10) == f"{MARK}89"
    assert redact("0123456789", [(2, 8)], 8, 10) == "89"
    assert len(spans) == 3


def test_body_token_is_masked():
    token = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = VALID.replace("Use pnpm for installs.", f"The CI token is {token} for now.")
    a = analyze_text(text, ".memzoi/records/rec-x.md")
    spans = secret_spans(a.findings)
    assert spans
    shown = redact(a.text, spans, *a.document.body_span)
    assert token not in shown and MARK in shown and shown.startswith("The CI token is ")


def test_search_and_show_never_print_a_detected_token(tmp_path, monkeypatch, capsys):
    import json

    from memzoi.cli.main import main

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    token = "gh" + "p_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    root = tmp_path / "proj"
    records = root / ".memzoi" / "records"
    records.mkdir(parents=True)
    (records / "rec-x.md").write_text(VALID.replace("Use pnpm for installs.", f"Rotate the CI token {token} monthly."))
    pending = root / ".memzoi" / "proposals" / "pending"
    pending.mkdir(parents=True)
    (pending / "p-1.md").write_text(edit(proposal(), "id: prop\n", "id: p-1\n") + f"\nToken: {token}\n")
    monkeypatch.chdir(root)
    assert main(["rebuild", "--json"]) == 0
    capsys.readouterr()
    main(["search", "token", "--json"])
    out = capsys.readouterr().out
    # the hit is listed, its title and excerpt withheld with the reason (a record `check` refuses is no usable
    # memory: one rule for every reader, agent.recall.Reader.usable)
    hits = json.loads(out)["records"]
    assert token not in out and [h["id"] for h in hits] == ["rec-x"]
    assert hits[0]["title"] == "[withheld: credential_token]" and "rotate" not in out.lower()
    main(["proposals", "show", "p-1", "--json"])
    out = capsys.readouterr().out
    assert token not in out and json.loads(out)["body"]
    main(["proposals", "show", "p-1"])
    assert token not in capsys.readouterr().out


def test_a_value_secret_only_as_its_own_text_is_held_and_never_stored():
    """The ledger and the index keep out any text :func:`holds_secret` flags: that includes a value Memzoi's rule
    matches only as its own text (a name=value at its start, an escaped key id), with its decoded text."""
    from memzoi.safety.redact import holds_secret, secret_values

    from .. import builders

    anchored = "TOK" + "EN=<value>"
    key_id = "AK" + "IA" + "IOSFODNN7ABCDEFG"
    for text, decoded in [
        (builders.record("r", description=anchored), anchored),
        (builders.record("r", extra='source_ref: "\\u0041' + key_id[1:] + '"\n'), key_id),
    ]:
        assert decoded not in text or text.count(decoded) == 1
        assert holds_secret(text) and holds_secret(text.encode())
        assert decoded in secret_values(text)
    assert not holds_secret(builders.record("r", description="plain words"))
