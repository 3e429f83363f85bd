"""The ``opmodel measure`` sub-command: argument parsing and the handler (kept out of cli.py).

This module imports nothing of :mod:`opmodel.measure` until the command runs, so building the
CLI parser for ``opmodel predict`` stays cheap.

``--dry-run`` expands the grid and prints the plan summary with its time estimate, needing no
GPU; otherwise the grid runs on the CUDA device and the dataset goes to ``--output-dir``.
SIGINT or SIGTERM stops the grid early; what was measured is written.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

__all__ = ["add_measure_parser", "stoppable"]

Emit = Callable[[Any], None]


def _clock_mhz(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        msg = f"expected a positive clock in MHz (got {text!r})"
        raise argparse.ArgumentTypeError(msg)
    return value


def _device_index(text: str) -> int:
    if not text.isdigit():
        msg = f"expected a CUDA device index >= 0 (got {text!r})"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


def _progress(done: int, total: int) -> None:
    sys.stderr.write(f"\rmeasure: {done}/{total} cases")
    if done >= total:
        sys.stderr.write("\n")


def _command_line(args: argparse.Namespace) -> str:
    """The command as a user would retype it (recorded in SOURCE.md)."""
    words = ["opmodel", "measure", "--grid", args.grid, "--hardware", args.hardware]
    words += ["--output-dir", args.output_dir] if args.output_dir else ["--dry-run"]
    if args.lock_sm_clock_mhz is not None:
        words += ["--lock-sm-clock-mhz", f"{args.lock_sm_clock_mhz:g}"]
    if args.device:
        words += ["--device", str(args.device)]
    return shlex.join(words)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def stoppable() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt while the grid runs, so ``timeout``, a batch
    scheduler or Ctrl-C stops it and what was measured is written. SIGINT is set explicitly:
    a process started in the background of a shell inherits it ignored."""
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _handler(emit: Emit) -> Callable[[argparse.Namespace], None]:
    def run(args: argparse.Namespace) -> None:
        from opmodel.measure import MeasureRequest, dry_run, run_measurements  # noqa: PLC0415

        request = MeasureRequest(
            grid=args.grid,
            hardware=args.hardware,
            output_dir=args.output_dir,
            lock_sm_clock_mhz=args.lock_sm_clock_mhz,
            device=args.device,
            command=_command_line(args),
        )
        if args.dry_run:
            emit(dry_run(request).summary())
            return
        with stoppable():
            summary = run_measurements(request, progress=None if args.no_progress else _progress)
        emit(summary)

    return run


def add_measure_parser(commands: Any, emit: Emit) -> None:
    """Add ``measure`` to the CLI's sub-command set; results are printed with ``emit``."""
    measure = commands.add_parser(
        "measure",
        help="time (and meter) an op grid on a CUDA GPU and write a validation dataset",
    )
    measure.add_argument(
        "--grid",
        required=True,
        help="grid YAML path or shipped name (opmodel/configs/measure/*.yaml, e.g. h200_8min)",
    )
    measure.add_argument(
        "--hardware",
        required=True,
        help="opmodel config of the GPU (hardware column of the dataset, time estimate)",
    )
    target = measure.add_mutually_exclusive_group(required=True)
    target.add_argument("--output-dir", help="folder for gemm.csv, ops.csv, run.json, SOURCE.md")
    target.add_argument(
        "--dry-run", action="store_true", help="print the plan and its time estimate; no GPU"
    )
    measure.add_argument(
        "--lock-sm-clock-mhz",
        type=_clock_mhz,
        help="lock the SM clock while measuring, when permitted (recorded either way)",
    )
    measure.add_argument("--device", type=_device_index, default=0, help="CUDA device index")
    measure.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    measure.set_defaults(handler=_handler(emit))
