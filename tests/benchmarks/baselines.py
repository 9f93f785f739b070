"""Baselines run side by side with ``memzoi check`` on the same files (SPEC §9).

* ``naive``: what a script would do without this project: load each file with python-frontmatter (PyYAML) and
  validate the metadata with jsonschema against ``schemas/record.schema.json`` or ``proposal.schema.json``.
* ``detect-secrets``: Yelp's detect-secrets with its default plugins and filters, scanning every file.
* ``floor``: the least any checker must do: list every file ``memzoi check`` checks below ``.memzoi`` (every
  regular file, no ``.git`` folder, no symlink), read it and hash it with BLAKE3. A warm check is measured against
  it (issue 15: "a warm workspace is checked at the speed of reading it").

Run as ``python -m tests.benchmarks.baselines naive|detect-secrets|floor DIR``: prints one JSON line
``{"files", "problems", "seconds"}`` (``seconds`` is the in-process time after imports). The first two need the
``bench`` extra (``pip install -e '.[bench]'``); the floor needs only ``blake3``, a dependency of the project.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def files_of(memzoi_dir: Path) -> list[Path]:
    """The ``*.md`` files under ``records/`` and ``proposals/`` (the files ``memzoi check`` reads, minus the
    reserved ``index.md``/``log.md``), sorted."""
    out: list[Path] = []
    for sub in ("records", "proposals"):
        for dirpath, dirnames, filenames in os.walk(memzoi_dir / sub):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            out.extend(
                Path(dirpath, f)
                for f in filenames
                if f.endswith(".md") and f not in ("index.md", "log.md") and not f.startswith(".")
            )
    return sorted(out)


def naive(files: list[Path]) -> int:
    """Load and validate every file; returns the number of files with a problem (parse error or any schema
    error). Timestamps that PyYAML turns into datetimes count as schema errors, as they would for such a
    script."""
    import frontmatter
    import jsonschema

    validators = {
        name: jsonschema.Draft202012Validator(json.loads((SCHEMAS / f"{name}.schema.json").read_text()))
        for name in ("record", "proposal")
    }
    problems = 0
    for path in files:
        try:
            post = frontmatter.load(str(path))
        except Exception:  # a baseline script just counts failures
            problems += 1
            continue
        v = validators["proposal" if "proposals" in path.parts else "record"]
        if next(v.iter_errors(dict(post.metadata)), None) is not None:
            problems += 1
    return problems


def detect_secrets_scan(files: list[Path]) -> int:
    """Scan every file with detect-secrets' default settings; returns the number of files with a secret."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    secrets = SecretsCollection()
    with default_settings():
        for path in files:
            secrets.scan_file(str(path))
    return len(secrets.files)


def floor_files(memzoi_dir: Path) -> list[str]:
    """Every regular file below ``memzoi_dir`` as ``memzoi check`` walks it (no ``.git`` folder, no symlink)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(memzoi_dir):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        out.extend(p for p in (os.path.join(dirpath, f) for f in filenames) if not os.path.islink(p))
    return out


def floor(files: list[str]) -> int:
    """Read every file and hash its bytes with BLAKE3; returns the number of bytes read."""
    from blake3 import blake3

    total = 0
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        blake3(data).digest()
        total += len(data)
    return total


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module docstring)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in ("naive", "detect-secrets", "floor"):
        print("usage: python -m tests.benchmarks.baselines naive|detect-secrets|floor DIR", file=sys.stderr)
        return 2
    what, root = args
    memzoi_dir = Path(root)
    if memzoi_dir.name != ".memzoi":
        memzoi_dir = memzoi_dir / ".memzoi"
    t0 = time.perf_counter()
    if what == "floor":
        walked = floor_files(memzoi_dir)
        size = floor(walked)
        print(json.dumps({"files": len(walked), "problems": 0, "bytes": size, "seconds": time.perf_counter() - t0}))
        return 0
    files = files_of(memzoi_dir)
    problems = naive(files) if what == "naive" else detect_secrets_scan(files)
    print(json.dumps({"files": len(files), "problems": problems, "seconds": time.perf_counter() - t0}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
