"""The command line: ``python -m companion <command>``.

Each command lives in its own module under :mod:`companion.commands` and exposes ``NAME``,
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.  Commands import their heavy
dependencies inside ``run`` so that ``--help`` stays fast and a missing optional piece only
affects the command that needs it.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

import companion.commands as commands_pkg

EXIT_USAGE = 2


class CommandError(Exception):
    """A failure to report to the user as ``error: <message>`` with an exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def _command_modules() -> list[ModuleType]:
    mods = []
    for info in sorted(pkgutil.iter_modules(commands_pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mods.append(importlib.import_module(f"{commands_pkg.__name__}.{info.name}"))
    return mods


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m companion",
        description="Siamese Mah Jongg table companion: recognise tiles, check rules, score hands.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _command_modules():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args._run(args) or 0)
    except CommandError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
