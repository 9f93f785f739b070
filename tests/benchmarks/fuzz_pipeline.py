"""Fuzz the whole pipeline: mutated real files checked as a workspace, counting exceptions.

    .venv/bin/python -m tests.benchmarks.fuzz_pipeline --inputs 200000 [--seed 1] [--batch 500] [--json out.json]

Each input is an example-workspace file changed by one to three mutations of :mod:`tests.mutations` (the
expensive kinds — deep and wide nesting, huge lines, tokens with deep JSON headers — drawn for about one input in
twelve), placed in a records or proposals folder. Inputs are checked in batches, as a workspace, with
:func:`memzoi.runs.check.check_paths` in this process (analysis, admission, cross-file checks, located findings), and
every tenth input also becomes its index row. An exception is either one that escapes (the batch is then
rechecked file by file to count them) or an ``internal_error`` finding (the per-file barrier caught it). The
process keeps CPython's default recursion limit. Prints a summary (and writes it as JSON with ``--json``); exits 1
when any exception was counted. Git is not asked (it is not the subject, and one git run per batch would
dominate).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from unittest import mock

from memzoi.runs import check as check_mod
from memzoi.runs.check import check_paths
from memzoi.stores.fileentry import entry_chunk
from tests.mutations import EXPENSIVE, MUTATIONS, PLACES, mutate, seeds

CHEAP = sorted(set(MUTATIONS) - EXPENSIVE)
COSTLY = sorted(EXPENSIVE)


def draw(rng: random.Random) -> list[tuple[str, float, int, bytes]]:
    """One to three mutation steps."""
    steps = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(COSTLY) if rng.random() < 0.03 else rng.choice(CHEAP)
        steps.append((kind, rng.random(), rng.randint(0, 3000), rng.randbytes(rng.randint(0, 12))))
    return steps


def run(inputs: int, seed: int, batch: int, workdir: Path) -> dict:
    rng = random.Random(seed)
    sources = seeds()
    md = workdir / ".memzoi"
    examples = Path(__file__).resolve().parents[2] / "examples" / ".memzoi"
    shutil.copytree(examples, md)
    clean = {p for p in md.rglob("*") if p.is_file()}
    kinds: Counter[str] = Counter()
    failures: list[dict] = []
    exceptions = internal = escaped = index_rows = checked = 0
    with mock.patch.object(check_mod, "git_visibility", lambda *_a, **_k: {}):
        baseline = check_paths([str(md)], workers=1).files_checked  # the example files, checked in every batch
    started = time.perf_counter()
    done = 0
    while done < inputs:
        n = min(batch, inputs - done)
        made: dict[Path, list] = {}
        for i in range(n):
            steps = draw(rng)
            source = rng.randrange(len(sources))
            kinds.update(k for k, *_ in steps)
            folder, _, name = PLACES[i % len(PLACES)].rpartition("/")
            place = f"{folder}/f{i}.md" if name == "m.md" else f"{folder}/f{i}/{name}"  # one file per input
            target = md / place
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(mutate(sources[source], steps))
            made[target] = [source, [k for k, *_ in steps]]
        with mock.patch.object(check_mod, "git_visibility", lambda *_a, **_k: {}):
            try:
                report = check_paths([str(md)], workers=1)
                checked += report.files_checked - baseline
                for located in report.findings:
                    if located.finding.code == "internal_error":
                        internal += 1
                        failures.append({"path": located.path, "what": made.get(Path(located.path))})
            except Exception as err:  # noqa: BLE001 - what this script measures
                for target in made:
                    try:
                        check_paths([str(target)], workers=1)
                    except Exception as one:  # noqa: BLE001
                        escaped += 1
                        failures.append({"error": type(one).__name__, "what": made[target]})
                failures.append({"batch_error": type(err).__name__})
        for k, target in enumerate(made):
            if k % 10 == 0:
                index_rows += 1
                try:
                    entry = entry_chunk([(str(target), "unknown")], now=None, root=str(workdir))[0]
                    row = entry.row if entry is not None and entry.row is not None else None
                    if row is not None and '"internal_error"' in row["file"]["findings"]:
                        internal += 1
                        failures.append({"index": True, "what": made[target]})
                except Exception as err:  # noqa: BLE001
                    escaped += 1
                    failures.append({"index_error": type(err).__name__, "what": made[target]})
        for target in made:
            target.unlink()
        for p in sorted(md.rglob("*"), reverse=True):  # folders the places created, emptied again
            if p.is_dir() and p not in clean and not any(p.iterdir()):
                p.rmdir()
        done += n
        if done % (batch * 20) == 0 or done == inputs:
            print(
                f"{done} inputs, {internal + escaped} exceptions, {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    exceptions = internal + escaped
    return {
        "inputs": inputs,
        "checked": checked,
        "index_rows": index_rows,
        "exceptions": exceptions,
        "internal_error": internal,
        "escaped": escaped,
        "seconds": round(time.perf_counter() - started, 1),
        "seed": seed,
        "recursion_limit": sys.getrecursionlimit(),
        "mutations": dict(sorted(kinds.items())),
        "failures": failures[:50],
    }


def fuzz_main(prog: str, doc: str, fuzz, argv: list[str] | None = None) -> int:
    """The command line of a fuzz script ``prog``: parse ``--inputs/--seed/--batch/--json``, run
    ``fuzz(inputs, seed, batch, tmp_dir) -> summary``, print the summary (JSON); exit 1 when an exception was
    counted."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--json", metavar="FILE", help="also write the summary as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix=f"memzoi-{prog}-") as tmp:
        summary = fuzz(args.inputs, args.seed, args.batch, Path(tmp))
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 1 if summary["exceptions"] else 0


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, fuzz, print the summary; exit 1 when an exception was counted."""
    return fuzz_main("fuzz_pipeline", __doc__, run, argv)


if __name__ == "__main__":
    sys.exit(main())
