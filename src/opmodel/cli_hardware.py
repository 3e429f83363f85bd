"""The ``hardware`` sub-commands (list, show, check) and the ``--set PATH=VALUE`` option that
predict, sweep and ``hardware show`` share for what-if variants of a config (kept out of
cli.py; :mod:`opmodel.hardware.overrides` does the work)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opmodel.hardware import load_hardware, peak_warnings, shipped_hardware_names
from opmodel.hardware.loader import extends_changes
from opmodel.hardware.overrides import parse_assignment
from opmodel.hardware.summary import hardware_summary

__all__ = ["add_hardware_parser", "add_set_option", "overrides_of"]


def overrides_of(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``--set PATH=VALUE`` options as load_hardware's overrides (None when there are
    none; a later --set of the same path wins)."""
    settings = getattr(args, "set", None)
    return dict(map(parse_assignment, settings)) if settings else None


def add_set_option(parser: Any) -> None:
    """Add the repeatable ``--set PATH=VALUE`` to ``parser``."""
    parser.add_argument(
        "--set",
        action="append",
        metavar="PATH=VALUE",
        help="change one config value for a what-if device, by dotted path (repeatable): "
        "--set memory.levels.hbm.bandwidth_bytes_per_s=4.8e12 --set compute.sm.sm_count=144 "
        "(docs/hardware.md, 'What-if variants')",
    )


def _list_configs(args: argparse.Namespace, emit: Callable[[Any], None]) -> None:
    """``hardware list``: the shipped configs' summaries, as JSON or an aligned table."""
    summaries = [hardware_summary(load_hardware(name)) for name in shipped_hardware_names()]
    if args.format == "text":
        from opmodel.report import format_hardware_table  # noqa: PLC0415 - text only

        sys.stdout.write(format_hardware_table(summaries))
        return
    emit(summaries)


def _check(args: argparse.Namespace, emit: Callable[[Any], None]) -> None:
    """``hardware check FILE``: valid or every problem; peak warnings on stderr, and what a
    file that extends another changes in it."""
    spec = load_hardware(Path(args.file))
    warnings = peak_warnings(spec)
    for warning in warnings:
        sys.stderr.write(f"warning: {args.file}: {warning}\n")
    changes = extends_changes(Path(args.file))
    emit(
        {
            "file": args.file,
            "valid": True,
            "name": spec.name,
            "kind": spec.kind,
            "warnings": warnings,
            **({"changes": changes} if changes else {}),
        }
    )


def add_hardware_parser(commands: Any, parser_class: type, emit: Callable[[Any], None]) -> None:
    """Add ``hardware list|show|check``; results are printed with ``emit``."""
    hardware = commands.add_parser("hardware", help="list, show or check hardware configs")
    hw_commands = hardware.add_subparsers(
        dest="hw_command", required=True, parser_class=parser_class
    )
    list_parser = hw_commands.add_parser("list", help="summarise the shipped configs")
    list_parser.add_argument(
        "--format",
        choices=("json", "text"),
        default="json",
        help="json (default) or an aligned table for reading",
    )
    list_parser.set_defaults(handler=lambda args: _list_configs(args, emit))
    show_parser = hw_commands.add_parser("show", help="print a resolved config")
    show_parser.add_argument("name", help="shipped name or YAML path")
    add_set_option(show_parser)
    show_parser.set_defaults(
        handler=lambda args: emit(load_hardware(args.name, overrides=overrides_of(args)))
    )
    check_parser = hw_commands.add_parser("check", help="validate a config file")
    check_parser.add_argument("file", help="YAML path")
    check_parser.set_defaults(handler=lambda args: _check(args, emit))
