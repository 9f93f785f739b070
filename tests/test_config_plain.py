"""A configuration holding only Memzoi's own sections is told valid without the models
(:mod:`memzoi.judge.configplain`) exactly where :func:`memzoi.judge.config.parse_config` finds no problem in it, and a
replayed ``memzoi check`` of a project with such a file loads no validation model."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from hypothesis import given, settings, strategies as st

from memzoi.judge.config import parse_config
from memzoi.judge.configplain import plainly_valid, plainly_valid_text

_SCALARS = st.one_of(
    st.text(st.sampled_from("ab -é\t"), max_size=6),
    st.integers(-3, 3),
    st.booleans(),
    st.lists(st.integers(0, 2), max_size=2),
)
_KEYS = st.sampled_from(["id", "name", "proposal_approval", "severity", "disabled", "mode", "x"])
_SECTIONS = st.sampled_from(["project", "workflow", "rules", "safety", "promotoin", "reflection", "resident", "extra"])


def _toml(value: object) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, bool) else str(value).lower()


def _render(config: dict[str, object]) -> str:
    lines = []
    for section, body in config.items():
        if isinstance(body, dict):
            lines.append(f"[{section}]")
            lines += [f"{key} = {_toml(value)}" for key, value in body.items()]
        else:
            lines.insert(0, f"{section} = {_toml(body)}")
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_SECTIONS, st.one_of(st.dictionaries(_KEYS, _SCALARS, max_size=3), _SCALARS), max_size=3))
def test_told_valid_only_where_the_models_find_no_problem(config):
    text = _render(config)
    if plainly_valid_text(text):
        loaded = parse_config(text)
        assert loaded.problems == () and loaded.errors == ()


def test_the_common_files_are_told_and_the_others_left_to_the_models(tmp_path):
    assert plainly_valid_text('[project]\nid = "memzoi"\n\n[workflow]\nproposal_approval = "human"\n')
    assert plainly_valid_text("")
    for text in ('[project]\nid = ""\n', "[project]\nid = 3\n", "project = 1\n", "[rules]\ndisabled = []\n", "[x\n"):
        assert not plainly_valid_text(text)
    (tmp_path / "config.toml").write_bytes(b'[project]\nid = "\xff"\n')
    assert not plainly_valid(tmp_path)  # not UTF-8: the models' loader reports it
    assert not plainly_valid(tmp_path / "missing")


def test_a_replayed_check_of_a_project_with_memzois_sections_loads_no_model(tmp_path):
    from .builders import record, record_path, write

    project = tmp_path / "p"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(project, record_path("alpha"), record("alpha"))
    (project / ".memzoi/config.toml").write_text('[project]\nid = "demo"\n', encoding="utf-8")
    script = textwrap.dedent(
        """
        import contextlib, io, json, sys
        from memzoi.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()):
            main(["check", ".memzoi", "--format", "json"])
        print(json.dumps(sorted(m for m in sys.modules if m in ("pydantic", "memzoi.judge.config", "memzoi.judge.config_model"))))
        """
    )
    env = {"MEMZOI_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], cwd=project, capture_output=True, text=True, env=env, timeout=120
        )
        for _ in range(3)
    ]
    assert all(r.returncode == 0 for r in runs), runs[-1].stderr
    assert "pydantic" in json.loads(runs[0].stdout)  # the first run judged
    assert json.loads(runs[-1].stdout) == []  # the last one replayed
