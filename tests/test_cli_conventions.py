"""Every ``memzoi`` subcommand, present and future, follows the conventions of :mod:`memzoi.cli._common`: a
description, examples and exit codes in ``--help``; help on every argument; ``--root`` and ``--json`` on every
command that works on a project; outside a project, exit 2 with one message and nothing created. The tests walk
the real parser, so a command added later is held to the same rules without editing this file."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

import pytest

from memzoi.cli._common import NOT_A_PROJECT, PROJECT_MODES
from memzoi.cli.main import build_parser, main


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """``(command path, parser, is leaf)`` for every subcommand below ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                children = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
                yield (*path, name), sub, not children
                yield from walk(sub, (*path, name))


PARSER = build_parser()
ALL = list(walk(PARSER))
LEAVES = [(path, p) for path, p, leaf in ALL if leaf]


def ids(items):
    return [" ".join(item[0]) for item in items]


def test_every_top_level_command_is_walked():
    listed = {path[0] for path, _, _ in ALL}
    from memzoi.cli.main import COMMANDS

    assert listed == set(COMMANDS)


@pytest.mark.parametrize("path,parser,leaf", ALL, ids=ids(ALL))
def test_help_has_description_examples_and_exit_codes(path, parser, leaf, capsys):
    assert parser.description and len(parser.description) > 20, f"memzoi {' '.join(path)}: no description"
    epilog = parser.epilog or ""
    assert "examples:\n  memzoi " in epilog, f"memzoi {' '.join(path)}: no examples"
    examples = epilog.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert all(e.startswith(f"  memzoi {path[0]}") or e.startswith("  cat ") for e in examples), examples
    assert "exit status:\n" in epilog and "  0  " in epilog and "  2  " in epilog
    with pytest.raises(SystemExit) as exc:
        main([*path, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert parser.description.split()[0] in out and "exit status:" in out and "examples:" in out


@pytest.mark.parametrize("path,parser,leaf", ALL, ids=ids(ALL))
def test_every_argument_has_help(path, parser, leaf):
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                assert choice.help, f"memzoi {' '.join(path)} {choice.dest}: no help"
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help and action.help != argparse.SUPPRESS, f"memzoi {' '.join(path)} {name}: no help"


@pytest.mark.parametrize("path,parser", LEAVES, ids=ids(LEAVES))
def test_root_and_json_on_every_project_command(path, parser):
    mode = parser.get_default("project")
    assert mode in PROJECT_MODES, f"memzoi {' '.join(path)}: set project= in add_command"
    if mode == "none":
        return
    options = {o for a in parser._actions for o in a.option_strings}
    assert "--root" in options, f"memzoi {' '.join(path)}: no --root"
    assert "--json" in options, f"memzoi {' '.join(path)}: no --json"


def minimal_args(parser: argparse.ArgumentParser) -> list[str]:
    """Arguments that satisfy the parser: a value for each required positional and option."""
    out: list[str] = []
    grouped = set()
    for group in parser._mutually_exclusive_groups:
        if group.required:
            first = group._group_actions[0]
            grouped |= {id(a) for a in group._group_actions}
            out += [first.option_strings[0]] + ([] if first.nargs == 0 else ["x"])
    for action in parser._actions:
        if id(action) in grouped or isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        value = [str(next(iter(action.choices)))] if action.choices else ["1" if action.type in (int, float) else "x"]
        if not action.option_strings:
            if action.nargs in (None, 1, "+"):
                out += value
        elif action.required:
            out += [action.option_strings[0], *value]
    return out


NEEDS_PROJECT = [(path, p) for path, p in LEAVES if p.get_default("project") in ("required", "optional")]


@pytest.mark.parametrize("path,parser", NEEDS_PROJECT, ids=ids(NEEDS_PROJECT))
def test_outside_a_project_exit_two_with_one_message_and_create_nothing(path, parser, tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    home.mkdir()
    folder = tmp_path / "not-a-project"
    folder.mkdir()
    monkeypatch.setenv("MEMZOI_HOME", str(home))
    monkeypatch.chdir(folder)
    argv = [*path, *minimal_args(parser), "--root", str(folder)]
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 2, argv
    assert err == NOT_A_PROJECT.format(root=folder.resolve()) + "\n"
    assert "run `memzoi init` there" in err  # a new user's first run: say how to start one
    assert list(folder.iterdir()) == [] and list(home.iterdir()) == []


def test_version_is_fast_because_it_imports_no_command():
    code = (
        "import sys\nfrom memzoi.cli.main import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n"
        "    pass\nprint(sorted(m for m in sys.modules if m.startswith('memzoi.') and m != 'memzoi.cli.main' "
        "and m != 'memzoi.cli._common' and m != 'memzoi.cli'))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("memzoi ") and proc.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "shell,marker", [("bash", "complete"), ("zsh", "#compdef memzoi"), ("fish", "complete -c memzoi")]
)
def test_completion_scripts_know_every_command(shell, marker, capsys):
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert marker in script
    for path, _, _ in ALL:
        assert path[-1] in script
    assert "--fail-on" in script and "--stdin-filename" in script
    if shell == "bash" and shutil.which("bash"):
        proc = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr


def test_schema_and_explain_commands(capsys):
    import json

    assert main(["schema"]) == 0
    names = capsys.readouterr().out.split()
    assert {"record", "proposal", "config"} <= set(names)
    assert main(["schema", "record"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$id"] == "urn:memzoi-lsp:schema:record"
    assert main(["schema", "nope"]) == 2
    assert main(["explain", "bom"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("bom (warning, framing)") and "byte order mark" in out
    assert main(["explain", "bom", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["href"].endswith("diagnostics.md#bom")
    assert main(["explain", "nope"]) == 2
    assert "not a diagnostic code" in capsys.readouterr().err


def test_init_takes_root_too(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "home"))
    target = tmp_path / "p"
    target.mkdir()
    assert main(["init", "--root", str(target)]) == 0
    assert (target / ".memzoi" / "records").is_dir()
    assert os.path.isfile(target / ".memzoi" / "config.toml")


def test_the_console_script_imports_no_typing_before_a_command():
    """``memzoi --version`` runs ``entry`` (the console script): ``typing`` alone is 3 ms of its 20."""
    code = "import sys\nimport memzoi.cli.main\nprint('typing' in sys.modules)"
    base = subprocess.run([sys.executable, "-c", "import sys\nprint('typing' in sys.modules)"], capture_output=True)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == base.stdout.decode().strip()  # nothing more than the interpreter's own start
