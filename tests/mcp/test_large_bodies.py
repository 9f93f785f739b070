"""Large bodies: Memzoi's write-safety floor runs whatever the size, the proposer never writes a packet it could not
scan whole or one over Memzoi's limit for a file, and a large file already on disk that holds a token is an error
for ``memzoi check`` and refused by ``memzoi proposals apply``."""

from __future__ import annotations

import json

from memzoi.agent import tools
from memzoi.cli.main import main as memzoi
from memzoi.judge.analysis import analyze_path
from memzoi.judge.policy import FIELD_LIMIT
from memzoi.read.render import DESCRIPTION_LIMIT

from .. import builders
from .conftest import all_bytes, draft_args

PENDING = ".memzoi/proposals/pending"


def _token() -> str:
    return "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"  # assembled at run time


def _call(project, **over) -> tools.ToolResult:
    # these bodies are about Memzoi's own limits: the agent channel's cap is raised to its largest value
    (project / ".memzoi" / "config.toml").write_text("[mcp]\nmax_body_bytes = 524288\n", encoding="utf-8")
    return tools.call(tools.Session(project, "big-agent", tools.RateLimit(50)), "propose_memory", draft_args(**over))


def test_one_line_body_with_a_token_is_refused(project, home):
    res = _call(project, body="filler " * 43000 + " " + _token())  # about 301 KB on one line
    assert res.is_error, res.text
    assert res.data["error"]["code"] == "blocked" and "credential_token" in res.data["error"]["reasons"]
    assert list((project / PENDING).iterdir()) == []
    assert _token().encode() not in all_bytes(home) + all_bytes(project)


def test_one_line_body_is_not_repeated_whole_as_description(project):
    body = "word " * 60000  # 300 KB on one line: twice that would be over the limit for one file
    res = _call(project, body=body)
    assert not res.is_error, res.text
    packet = project / res.data["path"]
    assert packet.stat().st_size < FIELD_LIMIT
    description = analyze_path(packet).document.data["description"]
    assert len(description) == DESCRIPTION_LIMIT and description.endswith("word…")


def test_packet_over_the_file_limit_is_refused(project, home):
    body = "word " * ((FIELD_LIMIT - 200) // 5)  # every field under the limit, the rendered file over it
    res = _call(project, body=body)
    assert res.is_error and res.data["error"]["code"] == "candidate_too_large", res.text
    assert list((project / PENDING).iterdir()) == []


def _old_packet(pid: str) -> str:
    """A packet as the proposer used to write it: a one-line body of 301 KB and the same line as description."""
    line = "filler " * 43000 + " " + _token()
    return builders.packet(
        pid,
        type="fact",
        title="Big one",
        description=line,
        body=line,
        created_by="agent",
        proposal={"action": "create", "proposed_by": "agent", "proposed_at": builders.PACKET_TIME, "reason": "test"},
    )


def test_large_packet_on_disk_is_an_error_and_is_never_applied(project, home, capsys):
    pid = "big-one"
    packet = project / PENDING / f"{pid}.md"
    packet.write_text(_old_packet(pid), encoding="utf-8")
    assert packet.stat().st_size > FIELD_LIMIT
    capsys.readouterr()
    code = memzoi(["check", str(packet), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    errors = {f["code"] for f in out["findings"] if f["severity"] == "error"}
    assert code == 1 and "credential_token" in errors, out
    assert _token() not in json.dumps(out)
    code = memzoi(["proposals", "apply", pid, "--root", str(project), "--actor", "reviewer", "--json"])
    refused = json.loads(capsys.readouterr().out)
    assert code != 0 and refused["error"]["code"] in ("credential_token", "candidate_too_large"), refused
    assert packet.is_file()
    assert _token().encode() not in all_bytes(project / ".memzoi" / "records") + all_bytes(home)
