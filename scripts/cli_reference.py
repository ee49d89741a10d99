"""Write the CLI reference (docs/cli.md) from the commands themselves, or check it is current.

    .venv/bin/python scripts/cli_reference.py          # rewrite docs/cli.md
    .venv/bin/python scripts/cli_reference.py --check  # exit 1 when docs/cli.md is stale

Every command's usage, help text and options come from the typer app, so the reference cannot
drift from the code: tests/test_docs.py runs the check in CI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from evalhouse.cli import app

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "cli.md"
HEADER = """# CLI reference

Generated from the commands by `scripts/cli_reference.py` (CI fails when it is stale: run
`.venv/bin/python scripts/cli_reference.py` after changing a command). Every command takes the
global options of `evalhouse` itself; `evalhouse COMMAND --help` prints the same text.
"""


def _commands(
    group: typer.core.TyperCommand | typer.core.TyperGroup, path: list[str]
) -> list[tuple[list[str], typer.core.TyperCommand | typer.core.TyperGroup]]:
    out = [(path, group)]
    if hasattr(group, "list_commands"):  # a group (typer's own classes are not click.Group subclasses)
        for name in sorted(group.list_commands(typer.Context(group))):
            sub = group.get_command(typer.Context(group), name)
            if sub is not None and not sub.hidden:
                out += _commands(sub, [*path, name])
    return out


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _option_rows(cmd: typer.core.TyperCommand, ctx: typer.Context) -> list[str]:
    rows = []
    for param in cmd.get_params(ctx):  # typer's parameter classes are not click's subclasses: by kind
        if getattr(param, "hidden", False):
            continue
        if param.param_type_name == "argument":
            optional = "" if param.required else ", optional"
            help_text = getattr(param, "help", None) or ""
            rows.append(
                f"| `{(param.metavar or param.name or '').upper()}` | argument{optional} | {_cell(help_text)} |"
            )
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        if names.startswith(("--install-completion", "--show-completion")):
            continue
        rows.append(f"| `{_cell(names)}` | option | {_cell(help_text)} |")
    return rows


def render() -> str:
    root = typer.main.get_command(app)
    parts = [HEADER]
    for path, cmd in _commands(root, ["evalhouse"]):
        ctx = typer.Context(cmd, info_name=" ".join(path))
        title = " ".join(path)
        parts.append(f"\n## `{title}`\n")
        if cmd.help:
            parts.append(cmd.help.strip() + "\n")
        usage = cmd.collect_usage_pieces(ctx)
        parts.append(f"\n```\n{title} {' '.join(usage)}\n```\n")
        rows = _option_rows(cmd, ctx)
        if rows:
            parts.append("\n| name | kind | what it does |\n|---|---|---|\n" + "\n".join(rows) + "\n")
        if getattr(cmd, "epilog", None):
            parts.append("\n" + cmd.epilog.strip() + "\n")
    # defaults inside the checkout are written relative to it, so every clone renders the same text
    return "".join(parts).replace(f"{REPO}/", "").replace(f"{REPO.parent}/", "../")


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.is_file() else ""
        if current != text:
            print(f"{OUT} is stale: run .venv/bin/python scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
