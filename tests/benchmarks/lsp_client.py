"""A minimal JSON-RPC client for timing ``memzoi-lsp`` over stdio.

Raw JSON-RPC rather than pygls's ``LanguageClient``: a reader thread stamps every message with
``time.perf_counter()`` the moment it is parsed, so latencies are not inflated by client-side structuring, and
the client answers the few requests the server sends (``window/workDoneProgress/create``,
``client/registerCapability``, ``workspace/configuration``) at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class LspError(RuntimeError):
    """The server exited, answered with an error, or did not answer in time."""


def _proc_stats() -> dict[int, list[str]]:
    """Every live process's ``/proc/PID/stat`` fields after the command name (``state`` is ``[0]``, ``ppid``
    ``[1]``, ``utime`` ``[11]``, ``stime`` ``[12]``, ``cutime`` ``[13]``, ``cstime`` ``[14]``); empty without ``/proc``."""
    out: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            out[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
    return out


class LspClient:
    """One ``memzoi-lsp`` child process. ``cmd`` defaults to this interpreter's ``memzoi_lsp`` module; the server's
    stderr is discarded unless ``stderr`` (a file) says where it goes."""

    def __init__(
        self,
        cwd: Path,
        env: dict[str, str] | None = None,
        cmd: list[str] | None = None,
        stderr: Any = subprocess.DEVNULL,
    ):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd or [sys.executable, "-m", "memzoi_lsp"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        self._write = threading.Lock()
        self._cond = threading.Condition()
        self._responses: dict[int, tuple[float, dict]] = {}
        self.notifications: list[tuple[float, dict]] = []
        self._next = 0
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # --- wire ------------------------------------------------------------------------------------------------

    def _send(self, *msgs: dict) -> float:
        """Write the frames of ``msgs`` in one write (the server finds them on its input together); returns the time
        written."""
        data = b""
        for msg in msgs:
            body = json.dumps(msg, separators=(",", ":")).encode("utf-8")
            data += b"Content-Length: %d\r\n\r\n" % len(body) + body
        with self._write:
            t = time.perf_counter()
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        return t

    def _read(self) -> None:
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                if length is None:
                    continue
                msg = json.loads(out.read(length))
                t = time.perf_counter()
                if "method" in msg and "id" in msg:
                    self._answer(msg)
                    continue
                with self._cond:
                    if "id" in msg and "method" not in msg:
                        self._responses[msg["id"]] = (t, msg)
                    else:
                        self.notifications.append((t, msg))
                    self._cond.notify_all()
        finally:
            with self._cond:
                self._closed = True
                self._cond.notify_all()

    def _answer(self, msg: dict) -> None:
        method = msg["method"]
        if method == "workspace/configuration":
            result: Any = [None for _ in msg.get("params", {}).get("items", [])]
        else:
            result = None
        self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    # --- API -------------------------------------------------------------------------------------------------

    def request(self, method: str, params: Any) -> tuple[int, float]:
        """Send a request; returns ``(id, time sent)``."""
        self._next += 1
        t = self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return self._next, t

    def response(self, rid: int, timeout: float = 60) -> tuple[float, Any]:
        """Wait for the answer to ``rid``; returns ``(time received, result)``. Raises :class:`LspError`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._responses:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise LspError(f"no answer to request {rid} ({'server exited' if self._closed else 'timeout'})")
                self._cond.wait(left)
            t, msg = self._responses.pop(rid)
        if "error" in msg:
            raise LspError(f"request {rid} failed: {msg['error']}")
        return t, msg.get("result")

    def call(self, method: str, params: Any, timeout: float = 60) -> tuple[float, Any]:
        """Request and wait; returns ``(seconds from send to answer, result)``."""
        rid, sent = self.request(method, params)
        t, result = self.response(rid, timeout)
        return t - sent, result

    def notify(self, method: str, params: Any) -> float:
        """Send a notification; returns the time it was written."""
        return self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def notify_together(self, *notifications: tuple[str, Any]) -> float:
        """Send the notifications ``(method, params)`` in one write, as an editor sends ``initialized`` with the
        documents it restores: none can reach the server later than the first. Returns the time written."""
        return self._send(*({"jsonrpc": "2.0", "method": m, "params": p} for m, p in notifications))

    def wait_for(self, pred: Callable[[dict], bool], start: int = 0, timeout: float = 600) -> tuple[int, float, dict]:
        """Wait for a notification at index ``start`` or later that satisfies ``pred``; returns
        ``(index, time received, message)``."""
        deadline = time.monotonic() + timeout
        i = start
        with self._cond:
            while True:
                while i < len(self.notifications):
                    t, msg = self.notifications[i]
                    if pred(msg):
                        return i, t, msg
                    i += 1
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise LspError(f"notification not seen ({'server exited' if self._closed else 'timeout'})")
                self._cond.wait(left)

    def mark(self) -> int:
        """Index of the next notification (for :meth:`wait_for`)."""
        with self._cond:
            return len(self.notifications)

    def peak_rss(self) -> tuple[int | None, int | None]:
        """``(peak, current)`` resident set size of the server in bytes, from ``/proc`` (``None`` elsewhere)."""
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None, None
        values = {}
        for line in status.splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                values[key] = int(rest.split()[0]) * 1024
        return values.get("VmHWM"), values.get("VmRSS")

    def tree_cpu(self, own: bool = False) -> float | None:
        """CPU seconds (user + system) the server's process tree has used so far: the server, every live
        descendant (worker processes, a fork server) and the children each of them reaped, from ``/proc``
        (``None`` elsewhere); with ``own``, the server process's alone. On a shared machine this says more than a
        wall time."""
        tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        stats = {  # pid -> (parent, ticks)
            pid: (int(fields[1]), sum(int(f) for f in fields[11 : 15 if not own else 13]))
            for pid, fields in _proc_stats().items()
        }
        if self.proc.pid not in stats:
            return None
        if own:
            return stats[self.proc.pid][1] / tick
        tree, total, todo = {self.proc.pid}, 0, [self.proc.pid]
        while todo:
            pid = todo.pop()
            total += stats[pid][1]
            kids = [c for c, (parent, _) in stats.items() if parent == pid and c not in tree]
            tree.update(kids)
            todo += kids
        return total / tick

    def tree_account(self) -> dict[str, Any] | None:
        """Where the CPU of the server's process tree went so far, from ``/proc`` (``None`` elsewhere), in seconds:
        ``server`` (the server process alone, ``user`` and ``sys``), ``threads`` (user + system of each live thread
        of the server, main thread first, then the busiest; ``exited``: what its finished threads used, the
        process's own CPU less the live threads'), and ``helpers``: one ``{pid, parent, cmd, own, reaped}`` per
        live descendant (a fork server, its workers; ``reaped``: the CPU of the children it waited for, a fork
        server's finished workers). ``total`` is what :meth:`tree_cpu` counts. What ``memzoi check`` does beside
        it is told apart by phase, not by process (issue 29: the cold scan's account)."""
        tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        procs = {  # pid -> [parent, utime, stime, reaped utime + stime]
            pid: [int(f[1]), int(f[11]), int(f[12]), int(f[13]) + int(f[14])] for pid, f in _proc_stats().items()
        }
        pid = self.proc.pid
        if pid not in procs:
            return None
        threads: list[tuple[int, float]] = []
        try:
            for task in Path(f"/proc/{pid}/task").iterdir():
                f = (task / "stat").read_text().rsplit(")", 1)[1].split()
                threads.append((int(task.name), (int(f[11]) + int(f[12])) / tick))
        except (OSError, IndexError):
            threads = []
        main = [s for t, s in threads if t == pid]
        others = sorted((s for t, s in threads if t != pid), reverse=True)
        _, user, system, reaped = procs[pid]
        helpers, todo = [], [pid]
        while todo:
            parent = todo.pop()
            for child, (ppid, u, s, r) in sorted(procs.items()):
                if ppid == parent:
                    todo.append(child)
                    try:
                        cmd = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:80]
                    except OSError:
                        cmd = ""
                    helpers.append(
                        {"pid": child, "parent": ppid, "cmd": cmd, "own": (u + s) / tick, "reaped": r / tick}
                    )
        own = (user + system) / tick
        return {
            "server": {"user": user / tick, "sys": system / tick},
            "threads": {
                "main": main[0] if main else 0.0,
                "others": others,
                "exited": max(0.0, own - sum(main + others)),
            },
            "helpers": helpers,
            "total": own + reaped / tick + sum(h["own"] + h["reaped"] for h in helpers),
        }

    def _stat(self) -> tuple[str, int] | None:
        """``(state, user + system CPU ticks)`` of the server from ``/proc`` (``None`` elsewhere)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return fields[0], int(fields[11]) + int(fields[12])

    def wait_idle(self, quiet: float = 0.15, timeout: float = 120) -> float:
        """Wait until the server has been asleep (state ``S``) without using CPU for ``quiet`` seconds: imports
        done, blocked reading stdin. A following request then times the handler, not the interpreter start-up
        (on a loaded machine a runnable process can go without CPU for a while, hence the state check).
        Returns the seconds since spawn at which it went quiet. Without ``/proc``, sleeps ``quiet`` once."""
        deadline = time.monotonic() + timeout
        last = self._stat()
        if last is None:
            time.sleep(quiet)
            return time.perf_counter() - self.started
        quiet_since = time.perf_counter()
        while time.monotonic() < deadline:
            time.sleep(0.02)
            now = self._stat()
            if now is None:
                break
            if now[0] != "S" or now[1] != last[1]:
                last, quiet_since = now, time.perf_counter()
            elif time.perf_counter() - quiet_since >= quiet:
                break
        return quiet_since - self.started

    def close(self) -> int | None:
        """``shutdown`` + ``exit``, then wait (kill after 10 s); returns the exit status."""
        try:
            if self.proc.poll() is None:
                self.call("shutdown", None, timeout=30)
                self.notify("exit", None)
        except (LspError, OSError):
            pass
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
