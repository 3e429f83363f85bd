"""Energy per issued instruction: fitted on FlagPerf's A100 40GB argmax rows, checked on the
rest of FlagPerf and on this project's H200 metered kernels (an experiment; not adopted: the
shipped model charges a streaming kernel's arithmetic by its FLOPs).

Usage: python scripts/issue_energy_experiment.py [--k 0.5 1.0]

FlagPerf's streaming rows (scripts/compare_published_flagperf_energy.py) come out low where
their kernels issue many instructions per byte: the 16-bit GELU and exp 0.76-0.86x, the 16-bit
max, min and amax 0.84-0.87x, argmax 0.65-0.81x, while the sums (2.5-5.75 instructions an
element) sit at 0.99-1.04x. The model charges arithmetic energy per FLOP (one an element for a
reduction), and an argmax's 19.5 instructions an element cost it no more than a sum's 5.75.

The variant charges, for every op whose kernel's instructions are counted from SASS (ATen's
elementwise functions, ``configs/instructions/aten_elementwise.yaml``; the reduce kernel's loop
over the innermost axis, ``aten_reduce.yaml``'s ``instructions_per_element``; the layer norm and
its RMS variant, ``aten_layer_norm.yaml``, with their per-row instructions), ``k x e_slot`` per
lane-instruction in place of its FLOPs' energy, with

    e_slot = J/FLOP(fp32) x FP32 peak / (SMs x SMSPs per SM x warp size x clock),

the config's energy per FP32 FLOP (an op at the FP32 peak draws the TDP above static power)
spread over its issue slots instead (17.06 pJ on the A100 40GB, where they are as many; twice
the FLOP's on sm_86 and later: 19.41 pJ on the H200). Ops without a count (the multiplies by a
scalar, from which the A100 40GB's DRAM energy is derived; copies) keep the FLOP energy. ``k``
is fitted by least squares of the relative error on a declared training split, FlagPerf's three
argmax rows (the most instructions per byte), and reported on the held-out rest and on the
H200's metered kernels of the same kinds (``data/measured/h200_2026-12-04_events``, whose DRAM
energy is derived on its copies, uncounted too)."""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from compare_published_flagperf_energy import TRAINING, _predicted, streaming_ops

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind
from opmodel.core.op import LocalOp
from opmodel.core.views import ElementwiseView, ReductionView, RowView
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.models.streaming.counted import counted_instructions, counted_layer_norm
from opmodel.models.streaming.counted_reduce import reduce_instructions
from opmodel.validation.artifact_perop import load_measured_ops, predict_measured_ops

HARDWARE = "a100_40gb_sxm"
FIT_ON = "argmax"  # the declared training rows: FlagPerf's three argmax(a, 1) rows
H200_RUN = Path(__file__).resolve().parents[1] / "data/measured/h200_2026-12-04_events"
_ROW_THREADS = 128  # ATen's layer norm: one row per CTA of 128 threads


class Row(NamedTuple):
    """A measured op: group, label, measured J, the shipped model's J, its FLOP (vector)
    energy and its kernel's counted lane-instructions (0 without a count)."""

    group: str
    label: str
    joules: float
    shipped: float
    flop_j: float
    instructions: float


def slot_energy_j(spec: HardwareSpec) -> float:
    """``e_slot`` (module docstring)."""
    sm, compute = spec.compute.sm, spec.compute
    assert sm is not None
    peak = compute.vector_flops_per_s[DType.FP32]
    slots = sm.sm_count * sm.smsps_per_sm * sm.warp_size * compute.clock_hz
    return compute.energy_per_flop(tensor=False, dtype=DType.FP32) * peak / slots


def lane_instructions(op: LocalOp, architecture: str | None) -> float:
    """The op's counted lane-instructions (module docstring), 0 without a count."""
    view = op.view
    if isinstance(view, ReductionView):
        innermost = view.inner_outputs == 1 and view.reduced_block
        per = reduce_instructions(architecture, view.x.dtype, view.function, innermost)
        return (per or 0.0) * view.x.num_elements
    if isinstance(view, ElementwiseView) and op.attrs.get("implementation", "pytorch") == "pytorch":
        per = counted_instructions(architecture, view.y.dtype, view.function or "")
        return (per or 0.0) * view.num_elements
    norm = op.kind in (OpKind.LAYERNORM, OpKind.RMSNORM)
    if isinstance(view, RowView) and norm and op.attrs.get("implementation") == "pytorch":
        count = counted_layer_norm(architecture, view.x.dtype, rms=op.kind is OpKind.RMSNORM)
        if count is None or view.backward:
            return 0.0
        per_row = count.instructions_per_element * view.row_length
        return (per_row + count.row_instructions * _ROW_THREADS) * view.rows
    return 0.0


def flagperf_rows() -> list[Row]:
    """FlagPerf's streaming rows on the A100 40GB (scripts/compare_published_flagperf_energy)."""
    spec, model = load_hardware(HARDWARE), get_model("effective_roofline")
    out = []
    for m in streaming_ops():
        profile = model.predict(m.op, spec)
        count = lane_instructions(m.op, spec.architecture)
        shipped = _predicted(profile, spec, m.seconds)
        out.append(Row(m.group, m.label, m.joules, shipped, profile.energy.vector_j, count))
    return out


def h200_rows(run: Path = H200_RUN) -> list[Row]:
    """The H200 run's metered elementwise, norm and reduction kernels with a count."""
    measured, _ = load_measured_ops(run)
    out = []
    for p in predict_measured_ops(measured, "effective_roofline"):
        op = p.measured.op
        count = lane_instructions(op, load_hardware(p.measured.hardware).architecture)
        if count:
            out.append(
                Row(
                    p.measured.op_type,
                    op.name,
                    p.measured.energy_j,
                    p.energy_j,
                    p.parts_j["vector"],
                    count,
                )
            )
    return out


def energy_at(row: Row, k: float | None, e_slot: float) -> float:
    """The row's energy with ``k`` per counted lane-instruction, or as shipped (``None``)."""
    if k is None or not row.instructions:
        return row.shipped
    return row.shipped - row.flop_j + k * e_slot * row.instructions


def fit_k(table: Sequence[Row], e_slot: float) -> float:
    """Least squares of the relative error on the argmax rows: ``E = a + k b`` per row with
    ``a`` the shipped energy less its FLOPs' and ``b = e_slot x n``."""
    train = [r for r in table if r.label.startswith(FIT_ON + ":")]
    b = [e_slot * r.instructions / r.joules for r in train]
    a = [(r.shipped - r.flop_j) / r.joules for r in train]
    return sum(bi * (1 - ai) for ai, bi in zip(a, b, strict=True)) / sum(bi * bi for bi in b)


def summary(
    rows: Sequence[Row], k: float | None, e_slot: float
) -> dict[str, tuple[int, float, float]]:
    """(rows, energy MAPE %, geometric-mean ratio) by group, with ``k`` or as shipped."""
    groups: defaultdict[str, list[float]] = defaultdict(list)
    for r in rows:
        groups[r.group].append(energy_at(r, k, e_slot) / r.joules)
    return {
        g: (len(v), statistics.fmean(abs(x - 1) for x in v) * 100, statistics.geometric_mean(v))
        for g, v in sorted(groups.items())
    }


def held_out_flagperf(rows: Sequence[Row]) -> list[Row]:
    """FlagPerf's rows but the DRAM energy's training multiplies and the argmax rows."""
    return [r for r in rows if r.label.split(":")[0] not in (*TRAINING, FIT_ON)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=float, nargs="*", default=[1.0])
    args = parser.parse_args(argv)
    a100, h200 = load_hardware(HARDWARE), load_hardware("h200_sxm")
    flagperf, metered = flagperf_rows(), h200_rows()
    fitted = fit_k(flagperf, slot_energy_j(a100))
    print(
        f"e_slot: A100 40GB {slot_energy_j(a100) * 1e12:.2f} pJ, "
        f"H200 {slot_energy_j(h200) * 1e12:.2f} pJ; k fitted on argmax: {fitted:.3f}"
    )
    for k in (None, *args.k, fitted):
        name = "shipped" if k is None else f"k = {k:.3f}"
        print(name)
        sets = (
            ("FlagPerf A100 40GB, held out", held_out_flagperf(flagperf), a100),
            ("H200 metered", metered, h200),
        )
        for title, rows, spec in sets:
            for group, (n, mape, gm) in summary(rows, k, slot_energy_j(spec)).items():
                print(f"  {title:<28} {group:<24} {n:>4}  {mape:5.1f} %  {gm:.2f}x")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("issue_energy_experiment", main)
