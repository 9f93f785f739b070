"""Fuzz the whole pipeline with YAML escapes in every field of records and packets, counting exceptions.

    .venv/bin/python -m tests.benchmarks.fuzz_escapes --inputs 200000 [--seed 1] [--batch 500] [--json out.json]

Each input is a record or packet (:mod:`tests.escapes`) with one field, or a new key, holding a double-quoted
value of one to six pieces: literal text, YAML's one-character escapes and ``\\x``/``\\u``/``\\U`` escapes of
lone surrogates, controls, invisible and bidi characters and code points past U+10FFFF. Inputs are written in
batches beside a sentinel record with a ``missing_key`` and checked as a workspace with
:func:`memzoi.runs.check.check_paths` in this process (analysis, admission, cross-file checks, located findings; every
tenth batch through the verdict cache, cold then warm); every report is rendered in each output format and encoded
as strict UTF-8, and every tenth input becomes its index row, written to a SQLite table. Counted as an exception:
one that escapes (the batch is then rechecked file by file to count them), an ``internal_error`` finding (the
per-file barrier caught one), a report without the sentinel's finding, a surrogate value without its
``invalid_encoding``, or an output or row that cannot be encoded. Prints a summary (and writes it as JSON with
``--json``); exits 1 when any exception was counted. Git is not asked (it is not the subject).
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path
from unittest import mock

from memzoi.runs import check as check_mod
from memzoi.runs.check import check_paths
from memzoi.stores.fileentry import entry_chunk
from tests import escapes


def draw(rng: random.Random) -> tuple[str, tuple, list[tuple[int, int]]]:
    """One input: the file's kind, the field and the pieces of its escaped value."""
    kind = rng.choice(escapes.KINDS)
    field = rng.choice(escapes.fields_of(kind))
    pieces = [(rng.randrange(5), rng.randrange(1000)) for _ in range(rng.randint(1, 6))]
    return kind, field, pieces


def _store(db: sqlite3.Connection, row: dict) -> None:
    """Write an index row's values as SQLite would (strict UTF-8 for every text)."""
    for part in row.values():
        db.execute("INSERT INTO t VALUES (?)", (json.dumps(part, ensure_ascii=False),))


def run(inputs: int, seed: int, batch: int, workdir: Path) -> dict:
    rng = random.Random(seed)
    escapes.workspace(workdir)
    md = workdir / ".memzoi"
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (v TEXT)")
    kinds: Counter[str] = Counter()
    failures: list[dict] = []
    counts = Counter()
    started = time.perf_counter()
    done = batches = 0
    while done < inputs:
        n = min(batch, inputs - done)
        made: dict[Path, tuple] = {}
        for i in range(n):
            kind, field, pieces = draw(rng)
            kinds[kind] += 1
            rel, text = escapes.escaped_file(kind, field, pieces, rid=f"f{i}")
            target = workdir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
            made[target] = (kind, field, pieces)
        cached = batches % 10 == 0
        with mock.patch.object(check_mod, "git_visibility", lambda *_a, **_k: {}):
            for label in ("cold", "warm") if cached else ("plain",):
                try:
                    report = check_paths([str(md)], workers=1, cache=cached)
                except Exception as err:  # noqa: BLE001 - what this script measures
                    failures.append({"batch_error": type(err).__name__, "run": label})
                    for target, what in made.items():
                        try:
                            check_paths([str(target)], workers=1, cache=False)
                        except Exception as one:  # noqa: BLE001
                            counts["escaped"] += 1
                            failures.append({"error": type(one).__name__, "what": repr(what)})
                    continue
                counts["checked"] += report.files_checked
                by_file: dict[str, set[str]] = {}
                for located in report.findings:
                    by_file.setdefault(Path(located.path).name, set()).add(located.finding.code)
                    if located.finding.code == "internal_error":
                        counts["internal_error"] += 1
                        failures.append({"internal_error": located.path, "what": repr(made.get(Path(located.path)))})
                if escapes.SENTINEL[1] not in by_file.get(f"{escapes.SENTINEL[0]}.md", ()):
                    counts["sentinel_missing"] += 1
                    failures.append({"sentinel_missing": label})
                for target, what in made.items():
                    if escapes.decoded_surrogate(what[2]) and "invalid_encoding" not in by_file.get(target.name, ()):
                        counts["no_invalid_encoding"] += 1
                        failures.append({"no_invalid_encoding": repr(what)})
                for problem in escapes.check_outputs(report):
                    counts["output"] += 1
                    failures.append({"output": problem})
        for k, (target, what) in enumerate(made.items()):
            if k % 10 == 0:
                counts["index_rows"] += 1
                try:
                    entry = entry_chunk([(str(target), "unknown")], now=None, root=str(workdir))[0]
                    row = entry.row if entry is not None and entry.row is not None else None
                    if row is None or '"internal_error"' in row["file"]["findings"]:
                        counts["internal_error"] += 1
                        failures.append({"index": True, "what": repr(what)})
                    else:
                        _store(db, row)
                except Exception as err:  # noqa: BLE001
                    counts["escaped"] += 1
                    failures.append({"index_error": type(err).__name__, "what": repr(what)})
        db.execute("DELETE FROM t")
        for target in made:
            target.unlink()
        done += n
        batches += 1
        if done % (batch * 20) == 0 or done == inputs:
            bad = sum(
                counts[k] for k in ("escaped", "internal_error", "sentinel_missing", "no_invalid_encoding", "output")
            )
            print(
                f"{done} inputs, {bad} exceptions, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True
            )
    exceptions = sum(
        counts[k] for k in ("escaped", "internal_error", "sentinel_missing", "no_invalid_encoding", "output")
    )
    return {
        "inputs": inputs,
        "exceptions": exceptions,
        **dict(sorted(counts.items())),
        "seconds": round(time.perf_counter() - started, 1),
        "seed": seed,
        "kinds": dict(sorted(kinds.items())),
        "failures": failures[:50],
    }


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, fuzz, print the summary; exit 1 when an exception was counted."""
    from tests.benchmarks.fuzz_pipeline import fuzz_main

    return fuzz_main("fuzz_escapes", __doc__, run, argv)


if __name__ == "__main__":
    sys.exit(main())
