"""Cheap commands import only what they use: the modules a fresh process has loaded after ``memzoi --help``,
every command's ``--help``, ``memzoi explain CODE``, ``memzoi-lsp``'s answer to ``initialize`` and the start of
``memzoi-mcp``, read from ``sys.modules`` or ``python -X importtime`` (deterministic, unlike timings, which only
the benchmark ``tests/benchmarks/startup.py`` takes)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from tests import builders
from tests.benchmarks.lsp_client import LspClient
from tests.benchmarks.run import _diags_for, _env, _init_params

#: What the command line's parser and its cheap commands must not load: validation models, the detectors, YAML,
#: SQLite and hashing, and the core modules built on them.
CLI_HEAVY = (
    "pydantic",
    "yaml",
    "sqlite3",
    "blake3",
    "regex",
    "rfc8785",
    "memzoi.models",
    "memzoi.safety",
    "memzoi.judge.analysis",
    "memzoi.ledger",
    "memzoi.lifecycle",
    "memzoi.stores.index",
    "memzoi.resident.service",
)
#: What answering ``initialize`` must not load: the settings sent with it are checked by plain functions
#: (``memzoi_lsp.settings``), so no validation model either (issue 29, start-up).
LSP_HEAVY = (
    "pydantic",
    "yaml",
    "regex",
    "rfc8785",
    "watchfiles",
    "memzoi.models",
    "memzoi.judge.config",
    "memzoi.judge.rules",
    "memzoi.runs.projectstate",
    "memzoi.safety",
    "memzoi.judge.analysis",
    "memzoi.project.verdict",
    "memzoi.ledger",
    "memzoi.lifecycle",
    "memzoi.stores.index",
    "memzoi.resident.editor",
)


def _loaded(code: str) -> list[str]:
    """``sys.modules`` after running ``code`` in a fresh interpreter (its own output discarded)."""
    script = (
        "import contextlib, io, json, sys\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n" + "".join(f"        {line}\n" for line in code.splitlines()) + "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _heavy(modules: list[str], heavy: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy))


def test_the_heavy_list_is_seen_when_a_command_runs():
    # The reading below works: a command that checks files loads the models and detectors.
    loaded = _loaded("from memzoi.cli.main import main\nmain(['check', '-', '--stdin-filename', 'x.md'])")
    assert {"pydantic", "yaml", "memzoi.safety", "memzoi.judge.analysis"} <= set(_heavy(loaded, CLI_HEAVY))


def _plugins_looked_for(env: dict[str, str]) -> bool:
    """Whether pydantic looked for its plugins (read every installed distribution's entry points) in a fresh
    ``memzoi check`` of a record read from stdin."""
    script = (
        "import contextlib, io\n"
        "from memzoi.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    main(['check', '-', '--stdin-filename', '.memzoi/records/x.md'])\n"
        "from pydantic.plugin import _loader\n"
        "print(_loader._plugins is not None)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, input="", env=env
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip() == "True"


def test_check_does_not_look_for_pydantic_plugins_unless_the_user_asks(tmp_path):
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    assert not _plugins_looked_for(env)
    assert _plugins_looked_for({**env, "PYDANTIC_DISABLE_PLUGINS": ""})  # the user's own setting is kept


def test_help_of_every_command_and_subcommand_imports_no_heavy_module():
    code = (
        "import argparse\n"
        "from memzoi.cli.main import build_parser, main\n"
        "def walk(parser, path):\n"
        "    yield path\n"
        "    for action in parser._actions:\n"
        "        if isinstance(action, argparse._SubParsersAction):\n"
        "            for name, sub in action.choices.items():\n"
        "                yield from walk(sub, [*path, name])\n"
        "for path in walk(build_parser(), []):\n"
        "    try:\n"
        "        main([*path, '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
    )
    loaded = _loaded(code)
    assert "memzoi.cli.resident" in loaded and "memzoi.cli.proposals" in loaded  # every command was registered
    assert _heavy(loaded, CLI_HEAVY) == []


def test_explain_imports_no_heavy_module():
    loaded = _loaded("from memzoi.cli.main import main\nassert main(['explain', 'credential_token']) == 0")
    assert "memzoi.base.findings" in loaded and _heavy(loaded, CLI_HEAVY) == []


def test_the_mcp_server_imports_neither_the_sdk_nor_the_core_before_serving():
    loaded = _loaded("import memzoi_mcp.server as s\ns.build_parser().format_help()")
    assert _heavy(loaded, ("mcp", "mcp_types", "anyio", *CLI_HEAVY)) == []


def _imported(stderr: str) -> set[str]:
    """Module names from ``python -X importtime`` output."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "self [us]" not in line
    }


def test_the_language_server_answers_initialize_before_it_loads_the_core_analysis(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".memzoi" / "records").mkdir(parents=True)
    doc = ws / ".memzoi" / "records" / "note.md"
    doc.write_text("---\nid: note\n---\n# Note\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    errlog = tmp_path / "stderr"
    env = _env(home)  # never the user's ~/.memzoi
    with open(errlog, "wb") as err:
        client = LspClient(ws, env, cmd=[sys.executable, "-X", "importtime", "-m", "memzoi_lsp"], stderr=err)
        try:
            rid, _ = client.request("initialize", _init_params(ws))
            client.response(rid, timeout=120)
            at_initialize = _imported(errlog.read_text(encoding="utf-8", errors="replace"))
            client.notify("initialized", {})
            uri = doc.resolve().as_uri()
            client.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "markdown",
                        "version": 1,
                        "text": doc.read_text(encoding="utf-8"),
                    }
                },
            )
            client.wait_for(_diags_for(uri, 1), timeout=120)
            at_diagnostics = _imported(errlog.read_text(encoding="utf-8", errors="replace"))
        finally:
            client.close()
    assert {"lsprotocol.types", "memzoi_lsp.server", "memzoi_lsp.settings"} <= at_initialize
    assert _heavy(sorted(at_initialize), LSP_HEAVY) == []
    # Diagnostics need the core: it is loaded then (so the check above can fail).
    assert {
        "memzoi.judge.analysis",
        "memzoi.project.verdict",
        "yaml",
        "pydantic",
        "memzoi.runs.projectstate",
    } <= at_diagnostics


def test_the_mcp_server_answers_initialize_without_the_sdks_client_and_http_stacks(tmp_path):
    # The SDK's `mcp/__init__.py` and `mcp/server/__init__.py` import its client, HTTP client and high-level
    # server; the stdio server defers them (memzoi.base.codecache.defer_package_init), and still serves tools/list.
    ws = tmp_path / "ws"
    (ws / ".memzoi" / "records").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    errlog = tmp_path / "stderr"
    cmd = [
        sys.executable,
        "-X",
        "importtime",
        "-c",
        "import sys; from memzoi_mcp.server import main; sys.exit(main())",
        "--root",
        str(ws),
    ]
    with open(errlog, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=ws, env=_env(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        try:

            def answer(rid: int) -> dict:
                while True:
                    line = proc.stdout.readline()
                    assert line, errlog.read_text(encoding="utf-8", errors="replace")[-2000:]
                    msg = json.loads(line)
                    if msg.get("id") == rid and "method" not in msg:
                        return msg

            def send(msg: dict) -> None:
                proc.stdin.write(json.dumps(msg).encode() + b"\n")
                proc.stdin.flush()

            send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            )
            assert answer(1)["result"]["serverInfo"]["name"] == "memzoi-mcp"
            at_initialize = _imported(errlog.read_text(encoding="utf-8", errors="replace"))
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
            assert "search_memory" in {t["name"] for t in answer(2)["result"]["tools"]}
        finally:
            proc.stdin.close()
            proc.wait(60)
    assert {"mcp.server.lowlevel", "mcp.server.stdio", "mcp_types"} <= at_initialize  # the SDK serves
    assert _heavy(sorted(at_initialize), ("mcp.client", "mcp.server.mcpserver", "httpx2", *CLI_HEAVY[1:])) == []


#: What must not be imported before a kept answer to ``initialize`` is sent (:mod:`memzoi.base.answercache`): the
#: protocol libraries, the event loop, and everything the analysis loads.
LSP_EARLY_HEAVY = ("lsprotocol", "pygls", "cattrs", "attr", "attrs", "asyncio", "sqlite3", *LSP_HEAVY)

_BLOCKER = (
    "import builtins\n"
    "_real = builtins.__import__\n"
    "def _blocked(name, globals=None, locals=None, fromlist=(), level=0):\n"
    "    if level == 0 and any(name == b or name.startswith(b + '.') for b in BLOCK):\n"
    "        raise ImportError('blocked before the kept answer: ' + name)\n"
    "    return _real(name, globals, locals, fromlist, level)\n"
    "builtins.__import__ = _blocked\n"
)


def test_the_language_server_sends_a_kept_initialize_answer_before_any_heavy_import(tmp_path):
    from tests.test_answercache import _run

    home = tmp_path / "home"
    home.mkdir()
    first, err = _run(home)  # computes the answer and keeps it
    assert [m.get("id") for m in first] == [7, 8], err
    blocked, err = _run(home, f"BLOCK = {LSP_EARLY_HEAVY!r}\n" + _BLOCKER)
    # The kept answer went out although every heavy import raises; then the server could not start (as intended).
    assert [m.get("id") for m in blocked] == [7], err
    assert blocked[0]["result"] == first[0]["result"]
    assert "blocked before the kept answer" in err  # the blocker did block something: the check can fail


#: What the language server's first diagnostics of an opened document do not need, so it starts only after they are
#: published (the workspace scan and its verdict cache, the watchers, the inbox watch's resident store, the
#: ledger's index hook, the sweep of what killed processes left): issue 29, first diagnostics.
LSP_AFTER_FIRST_DIAGNOSTICS = (
    "watchfiles",
    "memzoi.runs.leftovers",
    "memzoi.runs.scanverdicts",
    "memzoi.stores.verdictcache",
    "memzoi.resident.candidates",
    "memzoi.resident.store",
    "memzoi.lifecycle.index_sync",
)


#: Runs the language server (``-c``, then its arguments) noting ``sys.modules`` in the file named by ``argv[1]`` as the
#: first frame holding a ``publishDiagnostics`` is written, before it is written: what the server had loaded (or was
#: loading, on any thread) when it published, however late the client reads it. Read after the publication, an
#: ``-X importtime`` log also holds what the work started after it loaded meanwhile (failed under load).
_NOTE_AT_FIRST_PUBLISH = (
    "import json, sys\n"
    "from memzoi_lsp import output\n"
    "_send, _note = output.GatheredWriter._send, sys.argv.pop(1)\n"
    "def _noting(self):\n"
    "    global _note\n"
    "    if _note and any(b'textDocument/publishDiagnostics' in frame for frame in self._pending):\n"
    "        with open(_note + '.part', 'w') as f:\n"
    "            json.dump(sorted(sys.modules), f)\n"
    "        __import__('os').replace(_note + '.part', _note)\n"
    "        _note = None\n"
    "    _send(self)\n"
    "output.GatheredWriter._send = _noting\n"
    "from memzoi_lsp.__main__ import main\n"
    "sys.exit(main())\n"
)


def test_the_opened_document_is_published_before_the_background_work_starts(tmp_path):
    ws = tmp_path / "ws"
    for i in range(30):
        builders.write(ws, f".memzoi/records/rec-{i}.md", builders.record(f"rec-{i}", title=f"Record {i}"))
    bad = builders.write(ws, ".memzoi/records/rec-bad.md", builders.record("rec-bad", lane="nope"))
    doc = ws / ".memzoi" / "records" / "rec-0.md"
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "-m", "r"],
    ):
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True, stdin=subprocess.DEVNULL)
    home = tmp_path / "home"
    home.mkdir()
    note = tmp_path / "modules-at-first-publish.json"
    uri = doc.resolve().as_uri()
    client = LspClient(ws, _env(home), cmd=[sys.executable, "-c", _NOTE_AT_FIRST_PUBLISH, str(note)])
    try:
        rid, _ = client.request("initialize", _init_params(ws))
        client.response(rid, timeout=120)
        opened = {"uri": uri, "languageId": "markdown", "version": 1, "text": doc.read_text(encoding="utf-8")}
        # In one write, as editors restore their open files: the document is on the server's input with
        # `initialized`, not late by however long this process waited between two writes.
        client.notify_together(("initialized", {}), ("textDocument/didOpen", {"textDocument": opened}))
        first, _, _ = client.wait_for(_diags_for(uri, 1), timeout=120)
        at_diagnostics = json.loads(note.read_text(encoding="utf-8"))  # written before the frame was
        # The scan then runs: a record with a finding (an unknown lane) is published by it.
        other = client.wait_for(_diags_for(bad.resolve().as_uri()), timeout=120)
    finally:
        client.close()
    assert _heavy(at_diagnostics, LSP_AFTER_FIRST_DIAGNOSTICS) == []
    assert "memzoi.judge.analysis" in at_diagnostics  # the note is of the publication: the document was analysed
    # The scan still runs after it (so the check above can fail), and the opened document came first.
    assert other[2]["params"]["diagnostics"] and other[0] > first
    before = [msg for _, msg in client.notifications[:first]]
    assert not [m for m in before if m.get("method") == "textDocument/publishDiagnostics"]
    assert not [m for m in before if m.get("method") == "$/progress"], "the scan began before the first diagnostics"


#: What a search of an up-to-date index must not load (issue 29: `search` at 50k): the validation models, the YAML
#: reader and the analysis (a durable record's empty retention is judged without the models; the query is scrubbed
#: by the detectors without the YAML reader).
SEARCH_HEAVY = (
    "pydantic",
    "yaml",
    "memzoi.models",
    "memzoi.read.document",
    "memzoi.read.yaml12",
    "memzoi.judge.analysis",
)


def test_a_search_of_a_current_index_loads_no_model_yaml_or_analysis(tmp_path, monkeypatch):
    from tests.mcp.conftest import FACT_ID, make_project

    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    root = make_project(tmp_path / "repo").resolve()
    records = root / ".memzoi/records"
    secret = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4" + "rS6tU8vW0xY2zA4"  # built at run time: a path bearing a token
    shutil.copyfile(sorted(records.rglob("*.md"))[0], records / f"{secret}.md")  # indexed under its redacted key
    search = (
        f"from memzoi.cli.main import main\nassert main(['search', 'build', '--root', {str(root)!r}, '--json']) == 0"
    )
    _loaded(search)  # builds the index (this one analyses every file)
    loaded = _loaded(search)
    assert "memzoi.stores.index_fresh" in loaded and "memzoi.safety.redact" in loaded  # it did refresh and scrub
    assert _heavy(loaded, SEARCH_HEAVY) == []
    tool = (
        "from pathlib import Path\nfrom memzoi.agent.search import search_memory\n"
        f"assert search_memory(Path({str(root)!r}), 'build', include_local=False)['results'][0]['id'] == {FACT_ID!r}"
    )
    assert _heavy(_loaded(tool), SEARCH_HEAVY) == []  # private local records (lifecycle.local) are not searched here
