"""The ``opmodel`` command line: thin wrappers that print JSON on stdout, errors on stderr.

Bad input prints one line per problem on stderr and exits with status 2; no tracebacks.
argparse rather than click: the interpreter alone takes most of the 0.25 s start-up budget
of ``opmodel predict`` on a small machine, and argparse costs a few milliseconds to import.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from opmodel import __version__
from opmodel.cli_hardware import add_hardware_parser, add_set_option, overrides_of
from opmodel.core.errors import ConfigError, OpModelError, UnsupportedOpError, located
from opmodel.core.jsonify import to_jsonable
from opmodel.core.op import LocalOp
from opmodel.hardware import (
    POWER_STATES,
    HardwareSpec,
    load_hardware,
)
from opmodel.models import get_model, model_names
from opmodel.parsing import load_op

__all__ = ["main"]

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line on stderr, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _emit(value: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(value), indent=2) + "\n")


def _cmd_predict(args: argparse.Namespace) -> None:

    model = get_model(args.model)
    spec = load_hardware(args.hardware, overrides=overrides_of(args))
    hardware = _operating_point(spec, args.clock_hz, args.power_state)
    op, source = _op_of(args)
    if not model.supports(op):
        kinds = ", ".join(sorted(model.supported_kinds))
        raise UnsupportedOpError(
            f"{source}: model '{model.name}' does not support {op.kind} (supports: {kinds})"
        )
    try:
        profile = model.predict(op, hardware)
    except OpModelError as exc:  # name the op file: a kernel attr or dtype the model rejects
        raise located(source, exc) from None
    if args.format == "text":
        from opmodel.report import format_summary, summarize  # noqa: PLC0415 - text only

        sys.stdout.write(format_summary(summarize(op, profile, hardware)))
        return
    _emit(profile.to_dict())


def _op_of(args: argparse.Namespace) -> tuple[LocalOp, str]:
    """The op of ``--op FILE``, or of ``--kind`` and ``--tensors`` in an op table's syntax
    (docs/sweeps.md), and the name errors give its source."""
    inline = args.kind is not None or args.tensors is not None
    if (args.op is not None) == inline or (inline and None in (args.kind, args.tensors)):
        msg = "predict: give --op FILE, or --kind and --tensors (not both ways)"
        raise ConfigError([msg])
    if args.op is not None:
        return load_op(args.op), args.op
    from opmodel.batch import op_from_row  # noqa: PLC0415 - the batch layer, only when used

    row = {"name": args.kind, "kind": args.kind, "phase": args.phase, "tensors": args.tensors}
    return op_from_row({**row, "attrs": args.attrs or ""}, "command line"), "command line"


def _operating_point(spec: HardwareSpec, clock_hz: float | None, power_state: str) -> HardwareSpec:
    """``spec`` at a locked SM clock, or in the power state of an unlocked device."""
    if clock_hz is not None:
        if power_state == "burst":
            msg = "--power-state burst applies to an unlocked device; --clock-hz locks the clock"
            raise ConfigError([msg])
        return spec.at_clock(clock_hz)
    return spec.in_burst() if power_state == "burst" else spec


def _add_operating_point(parser: Any) -> None:
    """``--set``, ``--clock-hz`` and ``--power-state``, shared by predict and sweep."""
    add_set_option(parser)
    parser.add_argument(
        "--clock-hz", type=_positive_float, help="predict at this SM clock (HardwareSpec.at_clock)"
    )
    parser.add_argument(
        "--power-state",
        choices=POWER_STATES,
        default="sustained",
        help="an unlocked device running kernels back to back (sustained, default) or one at "
        "a time after idle time (burst: HardwareSpec.in_burst)",
    )


def _cmd_models(_args: argparse.Namespace) -> None:

    _emit(
        [
            {"name": name, "supported_kinds": sorted(get_model(name).supported_kinds)}
            for name in model_names()
        ]
    )


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (else a one-line usage error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"must be an integer >= 1 (got {text!r})"
        raise argparse.ArgumentTypeError(msg)
    return value


def _sweep_progress(done: int, total: int) -> None:
    sys.stderr.write(f"\rsweep: {100 * done // max(1, total):3d}% of {total} distinct ops")
    if done >= total:
        sys.stderr.write("\n")


def _cmd_sweep(args: argparse.Namespace) -> None:
    # imported here: the batch layer pulls in concurrent.futures and csv, which `opmodel
    # predict` should not pay for at start-up
    from opmodel.batch import EngineChoice, SweepOptions, run_sweep  # noqa: PLC0415

    options = SweepOptions(
        model=args.model,
        engine=EngineChoice(kind=args.engine, workers=args.workers, address=args.address),
        clock_hz=args.clock_hz,
        power_state=args.power_state,
        skip_invalid=args.skip_invalid,
        summary_columns=args.summary_columns,
        hardware_overrides=overrides_of(args),
    )
    progress = None if args.no_progress else _sweep_progress
    summary = run_sweep(args.ops, args.hardware, args.output, options, progress)
    _emit({**to_jsonable(summary), "rows_per_s": summary.rows_per_s})


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number (got '{text}')") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number (got '{text}')")
    return value


def _add_sweep_parser(commands: Any) -> None:
    sweep = commands.add_parser(
        "sweep", help="predict every row of an op table (CSV or Parquet), write it with results"
    )
    sweep.add_argument("--ops", required=True, help="op table: .csv or .parquet (docs/sweeps.md)")
    sweep.add_argument("--hardware", required=True, help="hardware YAML path or shipped name")
    sweep.add_argument("--output", required=True, help="result table: .csv or .parquet")
    sweep.add_argument(
        "--model",
        default="effective_roofline",
        choices=("roofline", "extended_roofline", "effective_roofline"),
    )
    sweep.add_argument(
        "--engine",
        default="local",
        choices=("local", "ray", "dask"),
        help="local processes, or an existing Ray or Dask cluster",
    )
    sweep.add_argument(
        "--workers", type=_positive_int, help="local processes (default: every core)"
    )
    sweep.add_argument(
        "--address", help="cluster address (ray: default 'auto'; dask: the scheduler, required)"
    )
    _add_operating_point(sweep)
    sweep.add_argument(
        "--skip-invalid",
        action="store_true",
        help="record invalid rows in an 'error' column instead of stopping",
    )
    sweep.add_argument(
        "--summary-columns",
        action="store_true",
        help="also write limiter, sm_clock_hz, achieved_flops_per_s, compute_fraction, "
        "hbm_bytes_per_s, hbm_fraction and average_power_w (opmodel.report)",
    )
    sweep.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    sweep.set_defaults(handler=_cmd_sweep)


def _add_ops_parser(commands: Any) -> None:
    from opmodel.cli_validate import (  # noqa: PLC0415
        add_artifact_parser,
        add_calibrate_energy_parser,
        add_ops_parser,
    )

    add_ops_parser(commands, _emit, _positive_int)
    add_artifact_parser(commands, _emit)
    add_calibrate_energy_parser(commands, _emit)


def _add_gemm_parsers(commands: Any) -> None:
    from opmodel.cli_gemm import add_gemm_latency_parser, add_gemm_traffic_parser  # noqa: PLC0415

    add_gemm_traffic_parser(commands, _emit)
    add_gemm_latency_parser(commands, _emit, _positive_int)


def _add_measure_parser(commands: Any) -> None:
    # the sub-command's module imports opmodel.measure only when the command runs
    from opmodel.cli_measure import add_measure_parser  # noqa: PLC0415

    add_measure_parser(commands, _emit)


def _build_parser() -> _Parser:
    parser = _Parser(prog="opmodel", description="Predict how one accelerator op performs.")
    parser.add_argument("--version", action="version", version=f"opmodel {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    predict = commands.add_parser("predict", help="predict one op (JSON profile on stdout)")
    predict.add_argument("--hardware", required=True, help="hardware YAML path or shipped name")
    predict.add_argument("--op", help="op YAML file (or --kind and --tensors)")
    predict.add_argument("--kind", help="op kind of an op given inline, e.g. gemm")
    predict.add_argument(
        "--tensors",
        help="its tensors as in an op table: 'input:4096x8192:bf16;weight:8192x1024:bf16;"
        "output:4096x1024:bf16' (docs/sweeps.md)",
    )
    predict.add_argument("--phase", default="inference", help="its phase (default: inference)")
    predict.add_argument("--attrs", help="its attrs as a JSON object, e.g. '{\"causal\": true}'")
    predict.add_argument("--model", default="roofline", help="model name (default: roofline)")
    predict.add_argument(
        "--format",
        choices=("json", "text"),
        default="json",
        help="json: the whole profile (default); text: achieved rates against the peaks, the "
        "limit, the kernel and the power, in a few lines (opmodel.report)",
    )
    _add_operating_point(predict)
    predict.set_defaults(handler=_cmd_predict)
    commands.add_parser("models", help="list the registered models").set_defaults(
        handler=_cmd_models
    )
    add_hardware_parser(commands, _Parser, _emit)
    _add_gemm_parsers(commands)
    _add_sweep_parser(commands)
    _add_measure_parser(commands)
    _add_ops_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 success, 2 bad input)."""
    args = _build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], None] = args.handler
    try:
        handler(args)
    except OpModelError as exc:
        sys.stderr.writelines(f"opmodel: {line}\n" for line in str(exc).splitlines())
        return EXIT_BAD_INPUT
    except OSError as exc:  # a path the command reads or writes (an output in a missing folder)
        where = exc.filename if exc.filename is not None else "file"
        sys.stderr.write(f"opmodel: {where}: {exc.strerror or exc}\n")
        return EXIT_BAD_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
