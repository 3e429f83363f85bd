"""A GPU's sustained operating point from published benchmarks.

Usage: python scripts/fit_published_sustained.py [--hardware a100_80gb_sxm] [--write]
       [--min-tflop 1.0]

Published figures: the sources and their numbers are in ``published_sustained_data.py``.

1. HBM fraction. "HBM Bandwidth" is BabelStream's CUDA build (arrays of 2^25 doubles, mean of 5
   runs). Its Dot kernel only reads (537 MB), so it is the published ceiling of a read stream;
   Copy, Mul, Add and Triad also write, and BabelStream's one-element-per-thread Copy is slower
   than PyTorch's vectorised copy (this project's H200 copies: 4.19-4.26 TB/s; its Copy: 4.01),
   so they are printed, not used. The model predicts a read stream of Dot's bytes (its generic
   full-occupancy stream, ``read_stream_s``) without an HBM fraction;
   where it is faster than Dot, ``hbm_fraction = Dot / predicted`` (3 decimals), else none.
   The A40 has no published stream of the board its validation rows ran on (gpu-benches' A40s
   stream at 94-97 % of the datasheet; Vidur's levels off near 82 %), so its fraction is fitted
   on the declared training split of ``opmodel.validation.hbm_split`` (Vidur's Llama-2-7B
   residual adds of at least 64 MB, read from ``--data-dir``): the value on a 0.001 grid that
   minimises their squared relative errors (a 0.01 grid over 0.50-1.00, then 0.001 steps around
   its best). ``validate-ops`` reports those rows apart; every other row stays held out.
2. Power-limited clock. Azure's "GEMM CuBLASLt" is superbenchmark's cublaslt_gemm with random
   inputs, 10,000 warm-up and 1,000 timed runs: FP16 on the A100 (the general clock,
   ``power_limited_clock_hz``), FP8 (e4m3) on H100 and H200 (``power_limited_clock_hz_by_dtype``
   for ``fp8``: FP8 MMAs run at twice the 16-bit rate and draw more per cycle, so the 16-bit
   clock measured on the H200 does not hold for them); FP16 and BF16 on the A40, the H100 PCIe
   and the L4 (``torch.mm`` runs of torch-performance-test-data; the general clock). Training
   rows: the GEMMs of at least ``--min-tflop`` TFLOP (8192^3 and up, and
   6144 x 12288 x 12288), long enough to hold the board at its power limit; the others are
   held out. The fit is
   ``fit_power_limited_clock_hz`` (15 MHz bins, least squared relative error of
   effective_roofline), with the fitted HBM fraction applied.

No validation dataset of this project takes part, but for the A40's HBM fraction (above).
``--write`` writes the values to the shipped
``configs/calibrations/<hardware>_sustained.yaml``, which the config names in
``sustained_calibration``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from fraction_grid import best_fraction
from published_sustained_data import DOT_BYTES, ELEMENTS, FITTED_ON, GEMMS, KERNELS, STREAM

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.hardware.clocking import boosted
from opmodel.hardware.spec import HardwareSpec
from opmodel.hardware.sustained_calibration import (
    SustainedCalibration,
    sustained_calibration_text,
    with_hbm_fraction,
)
from opmodel.models import get_model
from opmodel.models.streaming import StreamWork, evaluate_streaming, streaming_kernel
from opmodel.validation.hbm_split import HBM_FRACTION_SPLITS
from opmodel.validation.op_latency import load_op_rows
from opmodel.validation.power_clock_fit import (
    FIT_MODEL,
    fit_power_limited_clock_hz,
    with_power_limited_clock,
)

ROOT = Path(__file__).resolve().parent.parent
CALIBRATIONS = CALIBRATIONS_DIR


@dataclass(frozen=True, slots=True)
class GemmRow:
    """One published GEMM, its split and the model's throughput at the fitted clock."""

    m: int
    n: int
    k: int
    dtype: DType
    published_tflops: float
    training: bool
    predicted_tflops: float

    @property
    def ratio(self) -> float:
        """Predicted over published throughput (above 1: the model is too fast)."""
        return self.predicted_tflops / self.published_tflops


@dataclass(frozen=True, slots=True)
class Sustained:
    """The fit for one GPU: the read stream, the HBM fraction, the clock and the GEMM rows."""

    hardware: str
    stream_tb_per_s: tuple[float, ...]
    predicted_read_tb_per_s: float
    hbm_fraction: float | None
    power_limited_clock_hz: float | None
    clock_dtype: DType | None  # None: the general clock; else the clock of that dtype's work
    gemms: tuple[GemmRow, ...]
    # a fraction fitted on op rows (opmodel.validation.hbm_split): the rows and their MAPE
    fraction_rows: int = 0
    fraction_mape: float | None = None


def read_stream_s(spec: HardwareSpec) -> float:
    """Dot's bytes (2 x 2^25 doubles) read once by the model's generic full-occupancy stream:
    ATen's vectorized elementwise structure over them (128 threads x 4 elements a CTA, one
    block reduction per CTA; ``streaming_kernel``), at the device's boost clock. Until
    2026-12-07 every reduction op ran that structure and this read the same figure as a sum
    over the last axis of an fp64 [2, 2^25] tensor; reductions now run ATen's own
    ``reduce_kernel`` launch, which for that shape ends in a 19 %-full second wave on 108 SMs.
    Dot is BabelStream's own grid-stride kernel, so the reference stays the full stream."""
    device = boosted(spec)
    kernel = streaming_kernel(OpKind.REDUCTION, None, 2, ELEMENTS, 8)
    work = StreamWork(
        read_bytes=2 * ELEMENTS * 8,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=2 * 8,
        flops=2 * ELEMENTS,
        vector_flops_per_s=device.compute.vector_flops_per_s[DType.FP64],
    )
    return evaluate_streaming(kernel, device, work).latency_s


def gemm_op(m: int, n: int, k: int, dtype: DType = DType.FP16) -> LocalOp:
    """C[m, n] = A[m, k] @ B[k, n] with ``dtype`` inputs (an FP8 GEMM writes bf16)."""
    out = DType.BF16 if dtype.family is DType.FP8 else dtype
    return LocalOp(
        name=f"gemm_{m}x{n}x{k}",
        kind=OpKind.GEMM,
        phase=Phase.INFERENCE,
        tensors=(
            TensorSpec(TensorRole.INPUT, (m, k), dtype),
            TensorSpec(TensorRole.WEIGHT, (k, n), dtype),
            TensorSpec(TensorRole.OUTPUT, (m, n), out),
        ),
    )


def tflop(m: int, n: int, k: int) -> float:
    """The GEMM's work in TFLOP (2 m n k)."""
    return 2 * m * n * k / 1e12


def _fit_clock(
    spec: HardwareSpec, name: str, min_tflop: float
) -> tuple[float, tuple[GemmRow, ...]]:
    clock_dtype, tables = GEMMS[name]
    rows = [(m, n, k, dtype, tf) for dtype, table in tables.items() for m, n, k, tf in table]
    train = [r for r in rows if tflop(*r[:3]) >= min_tflop]
    if not train:
        raise SystemExit(f"--min-tflop {min_tflop}: no published GEMM is that large")
    clock_hz = fit_power_limited_clock_hz(
        spec,
        [gemm_op(m, n, k, dtype) for m, n, k, dtype, _ in train],
        [tflop(m, n, k) / tf for m, n, k, _, tf in train],
        clock_dtype,
    )
    at_clock = with_power_limited_clock(spec, clock_hz, clock_dtype)
    model = get_model(FIT_MODEL)
    return clock_hz, tuple(
        GemmRow(
            m,
            n,
            k,
            dtype,
            tf,
            tflop(m, n, k) >= min_tflop,
            tflop(m, n, k) / model.predict(gemm_op(m, n, k, dtype), at_clock).latency_s,
        )
        for m, n, k, dtype, tf in rows
    )


def split_fraction(spec: HardwareSpec, data_dir: Path) -> tuple[float, int, float] | None:
    """The HBM fraction fitted on the declared split of ``spec``'s measured op rows
    (opmodel.validation.hbm_split), the number of rows and their MAPE; None without a split."""
    split = HBM_FRACTION_SPLITS.get(spec.name)
    if split is None:
        return None
    rows, _ = load_op_rows(data_dir)
    train = [r for r in rows if r.clock_hz is None and split.contains(r)]
    if not train:
        raise SystemExit(f"--data-dir {data_dir}: no rows of the split ({split.description})")
    model = get_model(FIT_MODEL)

    def ratios(fraction: float) -> list[float]:
        at = with_hbm_fraction(spec, fraction)
        return [model.predict(r.op, at).latency_s / r.time_s for r in train]

    def sse(fraction: float) -> float:
        return sum((x - 1) ** 2 for x in ratios(fraction))

    best = best_fraction(sse)
    errors = [abs(x - 1) for x in ratios(best)]
    return best, len(train), sum(errors) / len(errors)


def fit(name: str, min_tflop: float = 1.0, data_dir: Path = ROOT / "data") -> Sustained:
    """The sustained values of the shipped config ``name`` from its published figures (and,
    for the A40's HBM fraction, the declared split of the measured rows in ``data_dir``)."""
    if name not in GEMMS:
        raise SystemExit(f"--hardware {name}: no published figures (choose from {list(GEMMS)})")
    if not min_tflop > 0:
        raise SystemExit(f"--min-tflop must be positive (got {min_tflop})")
    spec = with_hbm_fraction(load_hardware(name), None)
    latency_s = read_stream_s(spec)
    predicted = DOT_BYTES / latency_s / 1e12
    stream = STREAM.get(name, ())
    ratio = round(stream[-1] / predicted, 3) if stream else None
    fraction = ratio if ratio is not None and ratio < 1 else None
    fitted = None if stream else split_fraction(spec, data_dir)
    if fitted is not None:
        fraction = fitted[0]
    clock_hz, rows = _fit_clock(with_hbm_fraction(spec, fraction), name, min_tflop)
    clock_dtype = GEMMS[name][0]
    return Sustained(
        name,
        stream,
        predicted,
        fraction,
        clock_hz,
        clock_dtype,
        rows,
        fraction_rows=0 if fitted is None else fitted[1],
        fraction_mape=None if fitted is None else fitted[2],
    )


def write(result: Sustained, path: Path) -> None:
    """The sustained calibration file the config names."""
    clock, dtype = result.power_limited_clock_hz, result.clock_dtype
    calibration = SustainedCalibration(
        hardware=result.hardware,
        fitted_on="\n".join(FITTED_ON[result.hardware]),
        command=f"python scripts/fit_published_sustained.py --hardware {result.hardware} --write",
        power_limited_clock_hz=clock if dtype is None else None,
        power_limited_clock_hz_by_dtype={} if clock is None or dtype is None else {dtype: clock},
        hbm_fraction=result.hbm_fraction,
    )
    header = (
        "Fitted sustained values, not datasheet values: written by",
        "`python scripts/fit_published_sustained.py --write` (do not edit by hand).",
    )
    path.write_text(sustained_calibration_text(calibration, header))


def _print(result: Sustained) -> None:
    head = "".join(f"{k:>7}" for k in KERNELS)
    print(f"{'hardware':<15}{head}  model read  hbm_fraction   (TB/s)")
    values = "".join(f"{v:>7.2f}" for v in result.stream_tb_per_s) or f"{'(none published)':>35}"
    fraction = "none" if result.hbm_fraction is None else f"{result.hbm_fraction:.3f}"
    print(f"{result.hardware:<15}{values}  {result.predicted_read_tb_per_s:>10.3f}  {fraction:>12}")
    if result.fraction_rows and result.fraction_mape is not None:
        split = HBM_FRACTION_SPLITS[result.hardware].description
        print(
            f"hbm_fraction fitted on {result.fraction_rows} rows ({split}): "
            f"MAPE {result.fraction_mape:.1%}"
        )
    if result.power_limited_clock_hz is None:
        return
    print(f"\n{'m':>7} {'n':>6} {'k':>6}  dtype     split     published  predicted  ratio")
    for r in result.gemms:
        split = "training" if r.training else "held-out"
        print(
            f"{r.m:>7} {r.n:>6} {r.k:>6}  {r.dtype.value:<8}  {split}  "
            f"{r.published_tflops:9.1f}  {r.predicted_tflops:9.1f}  {r.ratio:5.3f}"
        )
    which = "" if result.clock_dtype is None else f" for {result.clock_dtype.value}"
    mhz = result.power_limited_clock_hz / 1e6
    print(f"power-limited clock{which}: {mhz:.0f} MHz ({FIT_MODEL})")


def main(argv: list[str] | None = None) -> int:
    """Print the fit; with ``--write``, write the shipped calibration file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hardware", default="a100_80gb_sxm", choices=sorted(GEMMS))
    parser.add_argument("--min-tflop", type=float, default=1.0, help="GEMM training rows")
    parser.add_argument("--write", action="store_true", help="write the calibration file")
    parser.add_argument(
        "--data-dir", type=Path, default=ROOT / "data", help="measured op rows (A40 HBM fraction)"
    )
    args = parser.parse_args(argv)
    result = fit(args.hardware, args.min_tflop, args.data_dir)
    _print(result)
    if args.write:
        path = CALIBRATIONS / f"{args.hardware}_sustained.yaml"
        write(result, path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("fit_published_sustained", main)
