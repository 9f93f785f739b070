"""Which project an MCP session serves (memzoi.agent.project): --root, the client's roots, CLAUDE_PROJECT_DIR,
the working directory; the first holding .memzoi wins, else the first candidate, so the advice names it."""

from __future__ import annotations

from pathlib import Path

from memzoi.agent.project import choose_project, no_project_message, root_uri_path


def _project(path: Path) -> Path:
    (path / ".memzoi" / "records").mkdir(parents=True)
    return path.resolve()


def test_order_of_the_sources(tmp_path):
    a, b, c = _project(tmp_path / "a"), _project(tmp_path / "b"), _project(tmp_path / "c")
    home = tmp_path / "home"
    home.mkdir()
    env = {"CLAUDE_PROJECT_DIR": str(b)}
    assert choose_project(a, [c.as_uri()], env, home).root == a
    assert choose_project(None, [c.as_uri()], env, home).root == c
    assert choose_project(None, [], env, home).root == b
    assert choose_project(None, [], {}, c / ".memzoi" / "records") == choose_project(None, [], {}, c)
    assert choose_project(None, [], {}, c).source == "cwd"


def test_a_root_without_memzoi_gives_way_to_the_next_source(tmp_path):
    b = _project(tmp_path / "b")
    plain = tmp_path / "plain"
    plain.mkdir()
    chosen = choose_project(None, [plain.as_uri(), "https://example.com/x"], {"CLAUDE_PROJECT_DIR": str(b)}, plain)
    assert chosen.root == b and chosen.source == "CLAUDE_PROJECT_DIR" and chosen.found


def test_without_any_project_the_first_candidate_is_named(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    chosen = choose_project(None, [plain.as_uri()], {}, tmp_path)
    assert not chosen.found and chosen.source == "roots"
    assert "memzoi init" in no_project_message(chosen) and "workspace root" in no_project_message(chosen)
    explicit = choose_project(tmp_path / "missing", [], {}, tmp_path)
    assert not explicit.found and "--root" in no_project_message(explicit)


def test_root_uris():
    assert root_uri_path("file:///srv/app%20x") == Path("/srv/app x")
    assert root_uri_path("file://localhost/srv/app") == Path("/srv/app")
    assert root_uri_path("file://otherhost/srv/app") is None
    assert root_uri_path("https://example.com/") is None
    assert root_uri_path("file:relative") is None
