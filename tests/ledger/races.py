"""Edit/apply races: a helper process edits a file at a random moment while a ledgered change rewrites, creates
or removes it; afterwards the edit must be on disk (in the file, or in a file kept beside it) — never lost.

Run the long version from the project root (about 1 ms of work per race plus the helper's delay)::

    .venv/bin/python -m tests.ledger.races --races 1200 [--portable] [--apply]

``--apply`` races ``proposals apply`` itself: the helper edits the pending packet being applied.

The helper is one long-lived process that receives ``path style delay content`` lines. It is told to go at a
randomly chosen durable step of the change (from the first check to the last directory fsync), sleeps a random
0-``--max-delay-us`` microseconds, and saves like an editor: ``rename`` (write a temporary file, rename it over
the target) or ``inplace`` (open with truncation, write). Every race uses fresh content, so an edit is lost
exactly when its content is in no file of the directory when both sides are done.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from memzoi import ledger as L
from memzoi.base import fsutil

HELPER = r"""
import os, sys, time
for line in sys.stdin:
    path, style, delay, content = line.split()
    t = time.perf_counter() + int(delay) / 1e6
    while time.perf_counter() < t:
        pass
    data = bytes.fromhex(content)
    if style == "rename":
        tmp = path + ".editor-swap"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    else:
        with open(path, "wb") as fh:
            fh.write(data)
    sys.stdout.write("done\n")
    sys.stdout.flush()
"""

KINDS = ("replace", "create", "delete")
STYLES = ("rename", "inplace")


class Helper:
    """The editing process."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )

    def go(self, path: Path, style: str, delay_us: int, content: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{path} {style} {delay_us} {content.hex()}\n")
        self.proc.stdin.flush()

    def wait(self) -> None:
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline() == "done\n"

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class EditAt:
    """The fault hook of one race: tells the helper to save ``edit`` when the change reaches ``trigger`` (after
    ``delay`` µs), or at once when ``settle`` and waits for it there, so the edit lands before the next step.
    :meth:`finish` edits now if the step never came, and waits for the helper."""

    def __init__(
        self, helper: Helper, path: Path, style: str, edit: bytes, trigger: str, delay: int, settle: bool
    ) -> None:
        self.helper, self.path, self.style, self.edit = helper, path, style, edit
        self.trigger, self.delay, self.settle, self.sent = trigger, delay, settle, False

    def __call__(self, step: str) -> None:
        if step == self.trigger and not self.sent:
            self.sent = True
            self.helper.go(self.path, self.style, self.delay, self.edit)
            if self.settle:
                self.helper.wait()

    def finish(self) -> None:
        if not self.sent:  # the step was skipped (e.g. no unlink on this path): edit now
            self.helper.go(self.path, self.style, 0, self.edit)
        if not (self.settle and self.sent):  # a settled edit was already waited for in the hook
            self.helper.wait()


def run_races(workdir: Path, n: int, *, seed: int = 1, max_delay_us: int = 400) -> Counter:
    """Run ``n`` races in ``workdir`` (``MEMZOI_HOME`` must point to a scratch directory). Returns counts:
    ``lost`` (must be 0), ``refused`` (the change refused, the edit in place), ``edited_after`` (the change
    applied, the edit landed on the new file afterwards), ``kept_beside`` (a second version kept beside the file),
    and per kind/style totals."""
    rng = random.Random(seed)
    root = workdir / "proj"
    root.mkdir(parents=True, exist_ok=True)
    helper = Helper()
    out: Counter = Counter()
    try:
        for k in range(n):
            kind, style = KINDS[k % 3], STYLES[(k // 3) % 2]
            rel = f"race-{k % 7}.md"
            path = root / rel
            before = f"before {k}\n".encode() if kind != "create" else None
            after = f"after {k}\n".encode() if kind != "delete" else None
            edit = f"edit {k} {rng.getrandbits(64):x}\n".encode()
            for stale in root.iterdir():
                stale.unlink()
            if before is not None:
                path.write_bytes(before)
            # Where the helper is told to go: any step from the first check on (the change is recorded by then).
            steps = [
                "apply:checked",
                "apply:file0:write",
                "apply:file0:fsync",
                "apply:file0:swap",
                "apply:file0:compare",
                "apply:file0:unlink",
                "apply:file0:dirsync",
                "apply:file0:done",
            ]
            trigger, delay = rng.choice(steps), rng.randrange(max_delay_us)
            # Every fourth race waits for the edit before the swap, so the refusing outcome is always exercised
            # whatever the machine's scheduling does to the random ones.
            settle = k % 4 == 0
            hook = EditAt(
                helper, path, style, edit, *(("apply:file0:write", 0) if settle else (trigger, delay)), settle
            )
            L.set_fault_hook(hook)
            try:
                result = "applied"
                try:
                    L.run_change(
                        root, lambda r: L.ChangePlan("race", [L.FileChange(rel, before, after)]), actor="racer"
                    )
                except L.Refusal as err:
                    assert err.code == "external_drift", err.message
                    result = "refused"
            finally:
                L.set_fault_hook(None)
            hook.finish()
            files = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
            where = [name for name, data in files.items() if data == edit]
            out[f"{kind}/{style}"] += 1
            if not where:
                out["lost"] += 1
            elif where == [rel]:
                out["refused" if result == "refused" else "edited_after"] += 1
            else:
                out["kept_beside"] += 1
            status = L.history(root)[0].status
            assert status == ("applied" if result == "applied" else "failed"), (status, result)
    finally:
        helper.close()
    return out


def run_apply_races(root: Path, n: int, *, seed: int = 1, max_delay_us: int = 400) -> Counter:
    """``proposals apply`` races: ``root`` is a seeded repository (``tests.lifecycle.conftest.seed``); each race
    applies a fresh pending packet while the helper saves an edit of that packet at a random step of the change.
    Returns the same counts as :func:`run_races`."""
    from memzoi.lifecycle import apply_proposal

    from ..lifecycle.conftest import PENDING

    rng = random.Random(seed)
    template = (root / PENDING / "mem_2026_07_06_testing_procedure.md").read_bytes()
    title = b"Run focused tests before full workspace checks"
    helper = Helper()
    out: Counter = Counter()
    try:
        for k in range(n):
            style = STYLES[k % 2]
            pid = f"race_packet_{k}"
            path = root / PENDING / f"{pid}.md"
            path.write_bytes(
                template.replace(b"mem_2026_07_06_testing_procedure", pid.encode()).replace(
                    title, title + f" {k}".encode()
                )
            )
            edit = path.read_bytes() + f"\nhand edit {k} {rng.getrandbits(64):x}\n".encode()
            # The packet is the change's last file (created record, resolved packet, removed packet).
            steps = [
                "apply:checked",
                "apply:file0:swap",
                "apply:file1:swap",
                "apply:file2:swap",
                "apply:file2:compare",
                "apply:file2:unlink",
                "apply:file2:dirsync",
                "apply:written",
            ]
            trigger, delay = rng.choice(steps), rng.randrange(max_delay_us)
            settle = k % 4 == 0  # as in run_races: the refusing outcome is always exercised
            hook = EditAt(helper, path, style, edit, *(("apply:checked", 0) if settle else (trigger, delay)), settle)
            L.set_fault_hook(hook)
            try:
                try:
                    apply_proposal(root, pid, actor="racer")
                    result = "applied"
                except L.Refusal as err:
                    assert err.code == "external_drift", err.message
                    result = "refused"
            finally:
                L.set_fault_hook(None)
            hook.finish()
            here = [p for p in path.parent.iterdir() if p.is_file() and p.read_bytes() == edit]
            out[f"apply/{style}"] += 1
            if not here:
                out["lost"] += 1
            elif here == [path]:
                out["refused" if result == "refused" else "edited_after"] += 1
            else:
                out["kept_beside"] += 1
            for p in here:  # the next race starts clean
                p.unlink()
    finally:
        helper.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: run the races and print the counts; exit 1 when any edit was lost."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--races", type=int, default=1200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-delay-us", type=int, default=400)
    ap.add_argument("--portable", action="store_true", help="without renameat2 (the portable fallback)")
    ap.add_argument("--apply", action="store_true", help="race `proposals apply` of fresh packets (needs the corpus)")
    args = ap.parse_args(argv)
    fsutil.use_exchange = not args.portable
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="memzoi-races-", dir=shm) as tmp:
        os.environ["MEMZOI_HOME"] = str(Path(tmp) / "home")
        if args.apply:
            from ..lifecycle.conftest import seed

            counts = run_apply_races(
                seed(Path(tmp) / "repo"), args.races, seed=args.seed, max_delay_us=args.max_delay_us
            )
        else:
            counts = run_races(Path(tmp), args.races, seed=args.seed, max_delay_us=args.max_delay_us)
    mode = "portable rename/link" if args.portable else "renameat2 exchange"
    what = "edit/`proposals apply`" if args.apply else "edit/apply"
    print(
        f"{args.races} {what} races ({mode}): lost edits {counts['lost']}; "
        f"refused {counts['refused']}, edited after the change {counts['edited_after']}, "
        f"kept beside {counts['kept_beside']}"
    )
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if "/" in k))
    return 1 if counts["lost"] else 0


if __name__ == "__main__":
    sys.exit(main())
