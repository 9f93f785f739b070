"""``memzoi check [PATH…|-] [--format text|json|sarif|github]`` (SPEC §8), with the options CI users know from ruff.

Prints the findings the language server publishes, graded by the project's ``[rules]``. Exit 1 when any finding
is at least as severe as ``--fail-on`` (default: error), 0 otherwise, 2 on usage errors. The formats are in
:mod:`memzoi.cli.formats`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..base.findings import Finding, Severity, finding
from ..base.printable import printable
from ._common import NOT_A_PROJECT, add_command, add_root_json, below_cwd, project_root

if TYPE_CHECKING:  # annotations only: a replayed check loads neither
    from ..judge.config import ConfigProblem
    from ..runs.checkreport import CheckReport, Located

#: The largest file whose lines SARIF's line fingerprints are read from (bytes): far above the 512 KiB Memzoi
#: accepts, so a real file always gets them, and bounded, so a hostile one cannot exhaust memory.
SOURCE_CAP = 64 * 1024 * 1024

_FAIL_ON = {"error": Severity.ERROR, "warning": Severity.WARNING, "information": Severity.INFORMATION}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``check`` command."""
    p = add_command(
        sub,
        "check",
        help="check records and proposal packets for format, schema and safety findings",
        description="Check Memzoi records and proposal packets: framing, YAML 1.2, schema, legacy profiles, "
        "secrets and the git-plane gate, cross-file lineage and git admission. Findings are graded by [rules] in "
        ".memzoi/config.toml. A directory is walked (everything under .memzoi, elsewhere Markdown files that start "
        "with frontmatter); without PATH the project's .memzoi folder is checked.",
        examples=[
            "memzoi check",
            "memzoi check .memzoi/records --fail-on warning",
            "memzoi check --format sarif --output-file memzoi.sarif",
            "memzoi check --format github",
            "memzoi check --statistics",
            "memzoi check --no-cache",
            "cat draft.md | memzoi check - --stdin-filename .memzoi/records/draft.md",
        ],
        exits={
            0: "no finding at or above --fail-on",
            1: "a finding at or above --fail-on (default: error), the checked .memzoi/config.toml is invalid, or "
            "a change touching a checked file is uncertain or was interrupted (ledger_uncertain: run memzoi reconcile)",
            2: "usage error (a missing path, bad options), or no PATH and not inside a project",
        },
        project="optional",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or directories (default: the project's .memzoi); - reads one file from stdin",
    )
    p.add_argument(
        "--format", choices=["text", "json", "sarif", "github"], default="text", help="output format (default: text)"
    )
    add_root_json(p, json_help="same as --format json")
    p.add_argument(
        "--fail-on",
        choices=list(_FAIL_ON),
        default="error",
        help="exit 1 when a finding is this severe or more (default: error)",
    )
    p.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="the path the text read by `-` has, which gives it its role (record, proposal, …)",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print the findings only: no summary, progress or settings notes on stderr",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="never draw the progress line (files done, files/s) on stderr; it is drawn only when "
        "stderr is a terminal, TERM is not dumb and the run is long (300 files or more, or after a "
        "second), in every format, and never on stdout or in --output-file",
    )
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour the text output: auto (a terminal, unless NO_COLOR is set), always or never",
    )
    p.add_argument(
        "--statistics",
        action="store_true",
        help="print the number of findings per code instead of the findings (text or json)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="analyse every file again instead of reusing the verdicts of unchanged files kept in the "
        "project's runtime directory (the output is the same; use it to rule the cache out)",
    )
    # the report is the last thing a check does: its process need not free what it held (main.end_at_once)
    p.set_defaults(func=run, end_at_once=True)


def use_color(choice: str, stream: TextIO) -> bool:
    """Whether to colour: ``always``/``never``, or ``auto``: a terminal, ``NO_COLOR`` unset or empty (no-color.org),
    and ``TERM`` not ``dumb``."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _fail(message: str) -> int:
    print(printable(f"memzoi: {message}"), file=sys.stderr)  # a message names the path as given
    return 2


def _inside_memory(path: str) -> bool:
    """Whether ``path`` (as given; symlinks resolved) lies under a ``.memzoi`` or ``.zuno`` folder: a report
    written there would replace a record, packet, setting or resident file outside the ledger."""
    return bool({".memzoi", ".zuno"} & set(Path(os.path.realpath(path)).parts[:-1]))


def run(args: argparse.Namespace) -> int:
    """Run ``check``; returns the exit code."""
    from ..runs.check import UsageError, check_text  # noqa: PLC0415 lazy: start-up

    if getattr(args, "ending", False):
        # The process ends once the report is out (main.end_at_once), so nothing the run made is ever freed: the
        # collector stays off to the end (check_paths holds it off during the run; its first collections after
        # the run walked every object the run had made: 29-58 ms of the report's tail at 11,000 files).
        gc.disable()

    fmt = "json" if args.json else args.format
    problem = _option_problem(args, fmt)
    if problem is not None:
        return _fail(problem)
    paths = args.paths
    stdin = "-" in paths
    root = project_root(args)
    if not paths:
        if not (root / ".memzoi").is_dir():
            print(NOT_A_PROJECT.format(root=root), file=sys.stderr)
            return 2
        target = str(root / ".memzoi")
        # People read text and annotations: relative to the current directory, as ruff prints them. JSON keeps its
        # documented form (the argument joined with the path under it) and SARIF makes its own relative URIs.
        paths = [below_cwd(target) if fmt in ("text", "github") else target]
    progress = None
    if not stdin:
        from .progress import Progress, progress_wanted  # noqa: PLC0415 lazy: start-up

        # On stderr only, in every format: the report (stdout or --output-file) is written after the line is
        # cleared, and a pipe or a log file never gets it (progress_wanted).
        progress = Progress(
            "check", "checking", enabled=progress_wanted(sys.stderr, disabled=args.quiet or args.no_progress)
        )
    try:
        if stdin:
            data = sys.stdin.buffer.read()
            report = check_text(data, args.stdin_filename)
        else:
            report = _check_paths_and_inputs(paths, progress, not args.no_cache)
    except UsageError as err:
        return _fail(str(err))
    finally:
        if progress is not None:
            progress.finish()
    notes, config_errors = _settings_notes(report, _config_errors)
    _add_config_findings(report)
    if not args.quiet:
        for note in notes:
            print(printable(note), file=sys.stderr)
    try:
        out = open(args.output_file, "w", encoding="utf-8") if args.output_file else sys.stdout
    except OSError as err:
        return _fail(f"{args.output_file}: cannot write the report ({err.strerror or err})")
    try:
        _write(report, fmt, args, out, root, _line_reader(data if stdin else None))
    finally:
        if out is not sys.stdout:
            out.close()
    if fmt in ("text", "github") and not args.quiet:
        _print_summary(report)
    threshold = _FAIL_ON[args.fail_on]
    failing = any(l.finding.severity <= threshold or l.finding.code == "ledger_uncertain" for l in report.findings)
    # An invalid configuration fails the check in every format (its invalid_config findings are errors), and so
    # does a half-written change (ledger_uncertain, a warning in the editor): a pre-commit hook must not pass it.
    return 1 if failing or config_errors else 0


def _option_problem(args: argparse.Namespace, fmt: str) -> str | None:
    """What is wrong with the options together (formats that contradict, stdin misused, a report under a memory
    folder), or ``None``."""
    if args.json and args.format not in ("text", "json"):
        return "--json and --format sarif|github contradict each other; give one"
    if args.statistics and fmt not in ("text", "json"):
        return "--statistics prints text or json; drop --format " + fmt
    stdin = "-" in args.paths
    if stdin and len(args.paths) > 1:
        return "`-` (stdin) cannot be combined with other paths"
    if args.stdin_filename and not stdin:
        return "--stdin-filename needs `-` as the path"
    if args.output_file and _inside_memory(args.output_file):
        return (
            f"--output-file {args.output_file}: the report never goes under .memzoi or .zuno, whose files "
            "are memory (written only by reviewed, ledgered changes); write it elsewhere, e.g. memzoi.sarif"
        )
    return None


def _print_summary(report: CheckReport) -> None:
    """The one-line count of files and findings by severity, on stderr."""
    counts = {s: sum(1 for l in report.findings if l.finding.severity.label == s) for s in ("error", "warning")}
    print(
        f"{report.files_checked} file(s) checked: {counts['error']} error(s), {counts['warning']} warning(s), "
        f"{len(report.findings) - counts['error'] - counts['warning']} other",
        file=sys.stderr,
    )


def _check_paths_and_inputs(paths: list[str], progress: Any, cache: bool) -> Any:
    """:func:`memzoi.runs.check.check_paths` of ``paths`` (a :class:`memzoi.runs.checkreport.CheckReport`), with each
    session-end file or import manifest among them checked apart by :func:`memzoi.lifecycle.routing.routing_arg`
    (the walk knows only records, packets and resident files); their findings follow the others'."""
    from ..runs.check import check_paths  # noqa: PLC0415 lazy: start-up
    from ..runs.checkreport import CheckReport  # noqa: PLC0415 lazy: start-up

    apart, rest = CheckReport(), paths
    if any(p.endswith((".yml", ".yaml")) for p in paths):
        from ..lifecycle.routing import routing_arg  # noqa: PLC0415 lazy: start-up

        rest = [p for p in paths if not routing_arg(p, apart)]
    if not apart.files_checked:
        return check_paths(paths, progress=progress, cache=cache)
    if not rest:
        return apart
    report = check_paths(rest, progress=progress, cache=cache)
    report.findings.extend(apart.findings)
    report.files_checked += apart.files_checked
    return report


def _config_errors(memzoi_dir: str | os.PathLike[str]) -> bool:
    """Whether the ``config.toml`` of ``memzoi_dir`` has errors; a project without one has none, nor one holding only
    Memzoi's own sections (:func:`memzoi.judge.configplain.plainly_valid`), and their check loads no configuration
    model (a replayed check then stays light)."""
    from ..judge.configplain import CONFIG_NAME, plainly_valid  # noqa: PLC0415 lazy: start-up

    if not os.path.lexists(os.path.join(memzoi_dir, CONFIG_NAME)):
        return False

    if plainly_valid(memzoi_dir):  # Memzoi's own sections only: valid, told without the models
        return False
    from ..judge.config import load_config  # noqa: PLC0415 lazy: start-up

    return bool(load_config(memzoi_dir).errors)


def _settings_notes(report: CheckReport, has_errors: Callable[[Path], bool]) -> tuple[list[str], bool]:
    """Lines about unreadable folders and a valid configuration given by name, and whether the settings of a
    checked project are invalid (their problems are ``invalid_config`` findings, see :func:`_add_config_findings`)."""
    notes = [
        f"memzoi: {display}: {why}; nothing below it was checked"
        for display, why in report.skipped
        if why.startswith("unreadable directory")
    ]
    given = [display for display, why in report.skipped if why.startswith("project configuration")]
    errors = any(has_errors(memzoi_dir) for memzoi_dir in report.memzoi_dirs)
    if given and not errors:  # a finding on the file (a credential in a comment) is about its text
        about_text = any(l.path in given for l in report.findings)
        tail = "; its findings are about the file's text, not its settings" if about_text else ""
        notes.append(f"memzoi: {', '.join(given)}: the settings are valid{tail}")
    return notes, errors


def _add_config_findings(report: CheckReport) -> None:
    """Add the ``invalid_config`` findings of each checked project's ``config.toml`` that the check did not walk
    (a record given by name is graded by its project's settings, so their errors belong in the report). The file
    is named relative to the current directory when it lies below it."""
    bad = [Path(md) / "config.toml" for md in sorted(report.memzoi_dirs, key=str) if _config_errors(md)]
    if not bad:
        return
    from ..base.smallfile import read_small  # noqa: PLC0415 lazy: start-up
    from ..judge.config import load_config  # noqa: PLC0415 lazy: start-up
    from ..judge.configfile import config_findings  # noqa: PLC0415 lazy: start-up
    from ..judge.pathsafety import shown_path  # noqa: PLC0415 lazy: start-up
    from ..read.text import LineIndex  # noqa: PLC0415 lazy: start-up
    from ..runs.check import Located  # noqa: PLC0415 lazy: start-up

    # a config.toml that was walked already has its findings (its display path is never redacted: the part
    # below .memzoi is the file name `config.toml`)
    present = {os.path.realpath(l.path) for l in report.findings if l.finding.code == "invalid_config"}
    for path in bad:
        if os.path.realpath(path) in present:
            continue
        try:  # bounded, never through a link nor blocking (memzoi.base.smallfile)
            text = read_small(path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""  # the problem says the file cannot be read; it is placed at the start
        found = config_findings(text) if text else [_unreadable(load_config(path.parent).problems)]
        index = LineIndex(text)
        shown = shown_path(below_cwd(str(path)))
        report.findings.extend(Located(shown, f, index.position(f.start), index.position(f.end)) for f in found)
    report.findings.sort(key=lambda l: (l.path, l.start, l.end, l.finding.code))


def _unreadable(problems: Sequence[ConfigProblem]) -> Finding:
    """The ``invalid_config`` finding of a configuration file that cannot be read."""
    message = problems[0].message if problems else "the configuration cannot be read"
    return finding("invalid_config", f"{message}; `memzoi check` fails until the configuration is valid", 0, 0)


def _write(
    report: CheckReport, fmt: str, args: argparse.Namespace, out: TextIO, root: Path, line_of: Callable[[Located], str]
) -> None:
    from . import formats  # noqa: PLC0415 lazy: start-up

    color = fmt == "text" and use_color(args.color, out)
    if args.statistics:
        rows = formats.statistics(report)
        if fmt == "json":
            out.write(json.dumps({"statistics": rows, "files_checked": report.files_checked}, indent=2) + "\n")
        else:
            out.writelines(line + "\n" for line in formats.statistics_text(rows, color))
    elif fmt == "json":
        out.write(json.dumps(formats.to_json(report), indent=2, ensure_ascii=False) + "\n")
    elif fmt == "sarif":
        from ..project.admission import worktree_root  # noqa: PLC0415 lazy: start-up

        top = worktree_root(root)  # code scanning resolves paths against the repository's top
        srcroot = Path(top) if top is not None else root
        out.write(json.dumps(formats.to_sarif(report, srcroot, line_of), indent=2, ensure_ascii=False) + "\n")
    elif fmt == "github":
        out.writelines(formats.to_github(l) + "\n" for l in report.findings)
    else:
        out.writelines(formats.text_line(l, color) + "\n" for l in report.findings)


def _line_reader(stdin: bytes | None) -> Callable[[Located], str]:
    """``line_of(located)``: the text of a finding's first line, from ``stdin`` or read from its file (``""`` when
    it cannot be read safely: a symlink, which Memzoi refuses, a FIFO, a device, or a file over :data:`SOURCE_CAP`;
    :func:`memzoi.base.smallfile.read_small`). Lines end at ``\n``, ``\r\n`` or ``\r``, as the finding positions
    count them."""
    from ..base.smallfile import read_small  # noqa: PLC0415 lazy: start-up

    cache: dict[str, list[str]] = {}

    def split(data: bytes) -> list[str]:
        return re.split(r"\r\n?|\n", data.decode("utf-8", "replace"))

    def line_of(l: Located) -> str:
        lines = cache.get(l.path)
        if lines is None:
            if stdin is not None:
                lines = split(stdin)
            else:
                try:  # never through a link, never a FIFO or a device, never past SOURCE_CAP
                    lines = split(read_small(l.path, cap=SOURCE_CAP))
                except OSError:
                    lines = []  # no line: the fingerprint hashes the code and path alone (memzoi.cli.formats.to_sarif)
            cache[l.path] = lines
        return lines[l.start[0]] if l.start[0] < len(lines) else ""

    return line_of
