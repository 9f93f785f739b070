"""The kept answer to ``initialize`` (:mod:`memzoi.base.answercache`): keyed by the params and the code, a
damaged file is a miss, and the language server answers from it before importing its protocol libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memzoi.base import answercache

PARAMS = {"processId": 1, "rootUri": "file:///w", "capabilities": {"general": {"positionEncodings": ["utf-16"]}}}


def test_the_key_ignores_the_process_id_and_follows_params_and_code():
    stamp = answercache.code_stamp(["memzoi_lsp"])
    key = answercache.answer_key(PARAMS, stamp)
    assert answercache.answer_key({**PARAMS, "processId": 99}, stamp) == key
    assert answercache.answer_key({**PARAMS, "initializationOptions": {"a": 1}}, stamp) != key
    assert answercache.answer_key(PARAMS, answercache.code_stamp(["memzoi_lsp", "pygls"])) != key
    assert answercache.code_stamp(["no_such_package_here"]) != answercache.code_stamp(["memzoi_lsp"])


def test_the_code_stamp_changes_when_a_file_of_the_package_changes(tmp_path, monkeypatch):
    pkg = tmp_path / "stamped_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("A = 1\n")
    (pkg / "feature.py").write_text("B = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = answercache.code_stamp(["stamped_pkg"])
    (pkg / "feature.py").write_text("B = 22\n")
    assert answercache.code_stamp(["stamped_pkg"]) != before


def test_a_kept_answer_is_read_back_and_a_damaged_one_is_a_miss(tmp_path):
    key = answercache.answer_key(PARAMS, "stamp")
    assert answercache.read_answer(tmp_path, key) is None
    assert answercache.write_answer(tmp_path, key, {"capabilities": {"hoverProvider": True}})
    assert answercache.read_answer(tmp_path, key) == {"capabilities": {"hoverProvider": True}}
    (path,) = tmp_path.glob("initialize-*.json")
    assert path.stat().st_mode & 0o077 == 0
    for damaged in (
        b"",
        b"{",
        b"[]",
        json.dumps({"key": "other", "result": {}}).encode(),
        b'{"key": "%s"}' % key.encode(),
    ):
        path.write_bytes(damaged)
        assert answercache.read_answer(tmp_path, key) is None
    assert answercache.read_answer(None, key) is None
    assert not answercache.write_answer(None, key, {})
    assert not answercache.write_answer(tmp_path / "missing", key, {"capabilities": {}})


def _frame(msg: dict) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _responses(out: bytes) -> list[dict]:
    msgs = []
    while out:
        head, _, rest = out.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        msg = json.loads(rest[:length])
        if "method" not in msg:  # answers only (the server also sends log messages)
            msgs.append(msg)
        out = rest[length:]
    return msgs


def _run(home: Path, prelude: str = "") -> tuple[list[dict], str]:
    init = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {**PARAMS, "rootUri": home.as_uri()}}
    stdin = _frame(init) + _frame({"jsonrpc": "2.0", "id": 8, "method": "shutdown"})
    stdin += _frame({"jsonrpc": "2.0", "method": "exit"})
    code = prelude + "import sys\nfrom memzoi_lsp.__main__ import main\nsys.exit(main([]))\n"
    env = {**os.environ, "MEMZOI_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, timeout=120, env=env)
    return _responses(proc.stdout), proc.stderr.decode(errors="replace")


def test_the_server_answers_initialize_once_and_from_the_kept_answer_before_its_protocol_libraries(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    first, err = _run(home)
    assert [m.get("id") for m in first] == [7, 8], err
    kept = list((home / "cache").glob("initialize-*.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_bytes())["result"] == first[0]["result"]
    second, err = _run(home)
    assert [m.get("id") for m in second] == [7, 8], err  # the server's own answer was dropped
    assert second[0]["result"] == first[0]["result"]
    # Answered although lsprotocol.types cannot even be imported: the kept answer goes out before the protocol libraries.
    blocked, err = _run(home, "import sys\nsys.modules['lsprotocol.types'] = None\n")
    assert [m.get("id") for m in blocked] == [7], err
    assert blocked[0]["result"] == first[0]["result"]
    # A damaged kept answer is computed again and rewritten.
    kept[0].write_bytes(b"{damaged")
    again, err = _run(home)
    assert [m.get("id") for m in again] == [7, 8], err
    assert again[0]["result"] == first[0]["result"]
    assert json.loads(kept[0].read_bytes())["result"] == first[0]["result"]


def test_only_the_newest_answers_are_kept(tmp_path):
    keys = [answercache.answer_key({"n": i}, "stamp") for i in range(answercache.MAX_KEPT + 3)]
    for i, key in enumerate(keys):
        assert answercache.write_answer(tmp_path, key, {"capabilities": {"n": i}})
        path = tmp_path / f"initialize-{key}.json"
        os.utime(path, ns=(i * 10**9, i * 10**9))  # distinct ages whatever the clock's granularity
    assert len(list(tmp_path.glob("initialize-*.json"))) == answercache.MAX_KEPT
    assert answercache.read_answer(tmp_path, keys[0]) is None
    assert answercache.read_answer(tmp_path, keys[-1]) == {"capabilities": {"n": len(keys) - 1}}
