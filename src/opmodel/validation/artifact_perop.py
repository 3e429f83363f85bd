"""Per-op mode of ``validate-artifact`` (``--data-dir``): EnergAIzer per-kernel measurements.

Reads every CSV under the directory. Each row is one measured kernel with ``time`` [ms] and
``energy`` [J]. The hardware comes from a ``hardware`` column or the file prefix (``yz8_`` ->
a100_40gb_pcie, ``a10_`` -> a10), the SM clock from ``clock_mhz`` or ``freqNNN`` in the file name.
Only bf16 rows are compared: a ``dtype``/``prec`` column, when present, must say bf16. The op
type comes from the columns and the file name:

* ``dimM``, ``dimN``, ``dimK`` (with ``batch``, ``trans``): a GEMM, or a batched GEMM (bmm) when
  ``batch > 1``; ``kernel_name``, ``grid_size``, ``block_size``, ``useTensorCore`` are ignored.
* a file name containing ``softmax`` or ``layernorm``: rows (``batch`` or ``rows``) of
  ``dim`` (or ``row_length``) elements.
* a file name containing ``flash`` or ``attention``: ``batch``, heads (``heads``, ``nheads``,
  ``num_heads``), sequence (``seq``, ``seqlen``, ``seq_len``) and ``head_dim`` (``headdim``,
  ``d``), prefill; ``causal`` when a column says so.

* ``kind`` and ``tensors`` columns: an op-table row (docs/sweeps.md), as ``opmodel measure``
  writes its ``ops.csv`` (norms, softmax, elementwise ops, copies, attention); the type is the
  kind (``elementwise/<function>`` for elementwise ops) and bf16 means the first tensor's dtype.

A row that fits none of these is skipped and counted by reason, never guessed.

Where a ``run.json`` of ``opmodel measure`` sits beside a CSV, each row's energy loop period
(``energy_loop_s / energy_runs`` of its case, matched by ``label``) is kept: the measured energy
per run is board energy over that period, idle gaps between launches included when the host
could not launch the kernel as fast as it ran, so the prediction adds the config's idle power
over ``period - predicted latency`` when that is positive (part ``idle_gap``).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from opmodel.batch.optable import op_from_row
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import ConfigError, OpModelError
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.parsing.textfile import read_json_file, text_file
from opmodel.validation.artifact_ops import op_from_entry
from opmodel.validation.measured_values import measured_clock_hz, measured_energy_j, measured_ms

__all__ = ["OpMeasurement", "OpPrediction", "load_measured_ops", "predict_measured_ops"]

_PREFIXES = (("yz8_", "a100_40gb_pcie"), ("a10_", "a10"))
_HEADS = ("heads", "nheads", "num_heads")
_SEQ = ("seq", "seqlen", "seq_len")
_HEAD_DIM = ("head_dim", "headdim", "d")


@dataclass(frozen=True, slots=True, kw_only=True)
class OpMeasurement:
    """One measured kernel."""

    op: LocalOp
    op_type: str
    hardware: str
    clock_hz: float | None
    time_s: float
    energy_j: float
    file: str
    loop_period_s: float | None = None  # wall time per run of the energy loop (run.json)


@dataclass(frozen=True, slots=True, kw_only=True)
class OpPrediction:
    """A measured kernel with its prediction."""

    measured: OpMeasurement
    time_s: float
    energy_j: float
    working_set_bytes: int
    parts_j: dict[str, float] = field(default_factory=dict)
    hbm_bytes: int | None = None  # DRAM bytes the model counts (None: it has no hbm level)
    hbm_j_per_byte: float = 0.0  # the spec's DRAM energy per byte it was predicted with


def _first(record: Mapping[str, str], names: tuple[str, ...]) -> str:
    return next((record[n] for n in names if record.get(n)), "")


def _attention(record: Mapping[str, str]) -> LocalOp:
    values = [_first(record, names) for names in (("batch",), _HEADS, _SEQ, _HEAD_DIM)]
    if not all(v.isdigit() and int(v) > 0 for v in values):
        msg = "attention row needs batch, heads, seq and head_dim"
        raise ValueError(msg)
    batch, heads, seq, head_dim = (int(v) for v in values)
    shape = (batch, heads, seq, head_dim)
    causal = (record.get("causal") or "").strip().lower() in ("1", "true", "yes")
    return LocalOp(
        name="flash_attention",
        kind=OpKind.ATTENTION_PREFILL,
        phase=Phase.PREFILL,
        tensors=tuple(
            TensorSpec(role, shape, DType.BF16, layout)
            for role, layout in (
                (TensorRole.INPUT, "q"),
                (TensorRole.INPUT, "k"),
                (TensorRole.INPUT, "v"),
                (TensorRole.OUTPUT, "o"),
            )
        ),
        attrs={"causal": causal},
    )


def _table_op(record: Mapping[str, str], where: str) -> tuple[LocalOp, str]:
    """An op-table row's op and type (``elementwise/<function>`` for elementwise ops)."""
    op = op_from_row(record, where)
    dtype = op.tensors[0].dtype
    if dtype is not DType.BF16:
        msg = f"not bf16 ({dtype.value})"
        raise ValueError(msg)
    function = op.attrs.get("function")
    kind = op.kind.value
    return op, f"{kind}/{function}" if op.kind is OpKind.ELEMENTWISE and function else kind


def _op(record: Mapping[str, str], name: str, where: str = "") -> tuple[LocalOp, str]:
    """The op of one row and its type label; ValueError with the reason otherwise."""
    if {"kind", "tensors"} <= record.keys():
        return _table_op(record, where)
    if {"dimM", "dimN", "dimK"} <= record.keys():
        params = {k: int(record.get(k) or 1) for k in ("batch", "dimM", "dimN", "dimK")}
        op = op_from_entry([{**params, "precM": "bf16"}, ["gemm"]])
        trans = (record.get("trans") or "NN").upper()
        if trans in ("NT", "TN", "TT"):
            op = _transposed(op, trans)
        return op, "bmm" if op.kind is OpKind.BATCHED_GEMM else "gemm"
    for kind in ("softmax", "layernorm"):
        if kind in name:
            rows = _first(record, ("batch", "rows"))
            length = _first(record, ("dim", "row_length", "length"))
            if not (rows.isdigit() and length.isdigit()):
                msg = f"{kind} row needs rows and row length"
                raise ValueError(msg)
            entry = [{"batch": int(rows), "dim": int(length), "prec": "bf16"}, [kind]]
            return op_from_entry(entry), kind
    if "flash" in name or "attention" in name:
        return _attention(record), "flash_attention"
    msg = "unknown op type (no GEMM columns; file name names no softmax, layernorm or attention)"
    raise ValueError(msg)


def _transposed(op: LocalOp, trans: str) -> LocalOp:
    a, b, c = op.tensors
    lead = a.shape[:-2]
    (m, k), (_, n) = a.shape[-2:], b.shape[-2:]
    ta, tb = trans[0] == "T", trans[1] == "T"
    return LocalOp(
        name=op.name,
        kind=op.kind,
        phase=op.phase,
        tensors=(
            TensorSpec(TensorRole.INPUT, (*lead, *((k, m) if ta else (m, k))), a.dtype),
            TensorSpec(TensorRole.WEIGHT, (*lead, *((n, k) if tb else (k, n))), b.dtype),
            c,
        ),
        attrs={"transpose_a": ta, "transpose_b": tb},
    )


def _loop_periods(path: Path) -> dict[str, float]:
    """Energy-loop wall time per run by case label, from the ``run.json`` beside ``path``."""
    run = path.with_name("run.json")
    if not run.is_file():
        return {}
    content = read_json_file(run)
    try:
        cases = content.get("cases", [])
        return {
            str(case["label"]): float(case["energy_loop_s"]) / int(case["energy_runs"])
            for case in cases
            if isinstance(case, dict) and case.get("energy_runs") and case.get("energy_loop_s")
        }
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ConfigError([f"{run}: not a readable opmodel measure run.json ({exc})"]) from None


def _measurement(
    record: Mapping[str, str], path: Path, periods: Mapping[str, float]
) -> OpMeasurement:
    dtype = (_first(record, ("dtype", "prec")) or "bf16").lower()
    if dtype not in ("bf16", "bfloat16", "torch.bfloat16"):
        msg = f"not bf16 ({dtype})"
        raise ValueError(msg)
    if not record.get("energy"):
        raise ValueError("missing energy")
    time_ms, energy = measured_ms(record["time"]), measured_energy_j(record["energy"])
    hardware = record.get("hardware") or next(
        (hw for prefix, hw in _PREFIXES if path.name.startswith(prefix)), ""
    )
    if not hardware:
        msg = "no hardware column or known file prefix"
        raise ValueError(msg)
    freq = re.search(r"freq(\d+)", path.name)
    clock = record.get("clock_mhz") or (freq.group(1) if freq else "")
    op, op_type = _op(record, path.name.lower(), path.name)
    return OpMeasurement(
        op=op,
        op_type=op_type,
        hardware=hardware,
        clock_hz=measured_clock_hz(clock) if clock else None,
        time_s=time_ms / 1e3,
        energy_j=energy,
        file=str(path),
        loop_period_s=periods.get(record.get("label") or ""),
    )


def load_measured_ops(data_dir: Path) -> tuple[list[OpMeasurement], Counter[str]]:
    """Every measured kernel under ``data_dir`` and the skipped rows by reason."""
    if not data_dir.is_dir():
        raise ConfigError([f"{data_dir}: not a directory (expected EnergAIzer per-kernel CSVs)"])
    rows: list[OpMeasurement] = []
    skipped: Counter[str] = Counter()
    for path in sorted(data_dir.rglob("*.csv")):
        periods = _loop_periods(path)
        with text_file(path) as handle:
            reader = csv.DictReader(handle)
            if "time" not in (reader.fieldnames or ()):
                continue
            for record in reader:
                try:
                    rows.append(_measurement(record, path, periods))
                except (ValueError, OpModelError) as exc:
                    skipped[str(exc).splitlines()[0]] += 1
    if not rows:
        raise ConfigError([f"{data_dir}: no usable per-kernel rows (CSV files with time, energy)"])
    return rows, skipped


def predict_measured_ops(
    rows: list[OpMeasurement],
    model_name: str,
    spec_of: Callable[[str], HardwareSpec] = load_hardware,
) -> list[OpPrediction]:
    """Predict every measured kernel on its config (``spec_of(name)``, by default the shipped
    or named config) at its clock."""
    model = get_model(model_name)
    specs: dict[tuple[str, float | None], HardwareSpec] = {}
    out = []
    for row in rows:
        key = (row.hardware, row.clock_hz)
        if key not in specs:
            spec = spec_of(row.hardware)
            specs[key] = spec.at_clock(row.clock_hz) if row.clock_hz else spec
        profile = model.predict(row.op, specs[key])
        hbm = profile.traffic.get("hbm")
        gap_j = specs[key].power.static_w * max(0.0, (row.loop_period_s or 0.0) - profile.latency_s)
        out.append(
            OpPrediction(
                measured=row,
                time_s=profile.latency_s,
                energy_j=profile.energy_j + gap_j,
                working_set_bytes=sum(t.nbytes for t in row.op.tensors),
                parts_j={
                    "tensor": profile.energy.tensor_j,
                    "vector": profile.energy.vector_j,
                    **profile.energy.memory_j,
                    "static": profile.energy.static_j,
                    "idle_gap": gap_j,
                },
                hbm_bytes=None if hbm is None else hbm.total_bytes,
                hbm_j_per_byte=specs[key].hbm.energy_j_per_byte,
            )
        )
    return out
