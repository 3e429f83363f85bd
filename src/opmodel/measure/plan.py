"""Expand a measurement grid into cases, the op each measures, and an estimate of run time.

The estimate is what ``opmodel measure --dry-run`` prints: start-up (:data:`START_S`), then for
each case set-up (allocation and initialisation, :data:`SETUP_S`), the untimed warm-up runs, the
timed runs with their L2 flush (``2 x L2 bytes`` written at HBM bandwidth) and host timing
overhead (:data:`TIMED_RUN_OVERHEAD_S`), and the energy loop. Kernel times come from a model's
prediction on the target hardware config, so the estimate is as good as the model
(effective_roofline: within about 20 % on GEMMs).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

from opmodel.core.attrs import AttrValue, attr_specs
from opmodel.core.backward import backward_of
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.model import OpModel
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.core.views_grouped import balanced_group_sizes
from opmodel.hardware import HardwareSpec
from opmodel.measure.grid import FLUSH_L2_MULTIPLE, REQUIRED_SIZES, MeasureGrid, OpGrid

__all__ = [
    "PROFILER_SESSION_S",
    "SETUP_S",
    "START_S",
    "TIMED_RUN_OVERHEAD_S",
    "Case",
    "Plan",
    "expand",
    "grouped_sizes",
    "plan",
]

START_S = 20.0  # estimate: import PyTorch, create the CUDA context, first library handles
SETUP_S = 0.02  # estimate: allocate and fill the case's tensors, build the callable
TIMED_RUN_OVERHEAD_S = 30e-6  # estimate: two CUDA event records and a synchronise per timed run
# estimate: starting and stopping the PyTorch profiler twice and reading its records
PROFILER_SESSION_S = 0.05
_BINARY = frozenset({"add", "mul"})
_OP_FUNCTION = {"gelu": "gelu_tanh"}  # grid function -> the op's function attr


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One measurement: an op kind at one size, dtype and variant."""

    kind: OpKind
    dtype: DType
    sizes: tuple[tuple[str, int], ...]
    trans: str = "NN"
    function: str | None = None
    causal: bool = False
    backward: bool = False  # the op's backward pass (grid field ``backward``)

    @property
    def size(self) -> dict[str, int]:
        """The sizes by name."""
        return dict(self.sizes)

    @property
    def label(self) -> str:
        """A short human-readable name, unique within a plan."""
        dims = " ".join(f"{k}={v}" for k, v in self.sizes)
        extra = {
            OpKind.GEMM: self.trans,
            OpKind.BATCHED_GEMM: self.trans,
            OpKind.ELEMENTWISE: self.function or "",
            OpKind.ATTENTION_PREFILL: "causal" if self.causal else "full",
        }.get(self.kind, "")
        if self.backward:
            extra = f"{extra} backward".strip()
        return f"{self.kind.value} {self.dtype.value} {dims} {extra}".strip()

    def op(self, flush_bytes: int = 0) -> LocalOp:
        """The LocalOp this case measures (what the models predict for it). ``flush_bytes``:
        what the L2 flush before each timed run wrote (``opmodel measure`` zeroes a buffer of
        twice the L2), which ops whose kind takes it carry as ``l2_dirty_bytes``."""
        build = {
            OpKind.GEMM: _gemm_tensors,
            OpKind.BATCHED_GEMM: _gemm_tensors,
            OpKind.GROUPED_GEMM: _grouped_tensors,
            OpKind.SOFTMAX: _row_tensors,
            OpKind.LAYERNORM: _row_tensors,
            OpKind.RMSNORM: _row_tensors,
            OpKind.ELEMENTWISE: _elementwise_tensors,
            OpKind.COPY: _copy_tensors,
            OpKind.EMBEDDING: _embedding_tensors,
            OpKind.ATTENTION_PREFILL: _attention_tensors,
            OpKind.ATTENTION_DECODE: _attention_tensors,
        }[self.kind]
        tensors, attrs = build(self)
        if flush_bytes > 0 and "l2_dirty_bytes" in attr_specs(self.kind):
            attrs = {**attrs, "l2_dirty_bytes": flush_bytes}
        phase = Phase.DECODE if self.kind is OpKind.ATTENTION_DECODE else Phase.PREFILL
        op = LocalOp(
            name=self.kind.value, kind=self.kind, phase=phase, tensors=tensors, attrs=attrs
        )
        return backward_of(op) if self.backward else op


_Built = tuple[tuple[TensorSpec, ...], dict[str, AttrValue]]


def _tensor(
    case: Case, role: TensorRole, shape: tuple[int, ...], layout: str | None = None
) -> TensorSpec:
    return TensorSpec(role, shape, case.dtype, layout)


def _gemm_tensors(case: Case) -> _Built:
    s = case.size
    lead = (s["batch"],) if case.kind is OpKind.BATCHED_GEMM else ()
    ta, tb = case.trans[0] == "T", case.trans[1] == "T"
    a = (*lead, s["k"], s["m"]) if ta else (*lead, s["m"], s["k"])
    b = (*lead, s["n"], s["k"]) if tb else (*lead, s["k"], s["n"])
    tensors = (
        _tensor(case, TensorRole.INPUT, a),
        _tensor(case, TensorRole.WEIGHT, b),
        _tensor(case, TensorRole.OUTPUT, (*lead, s["m"], s["n"])),
    )
    return tensors, {"transpose_a": ta, "transpose_b": tb}


def grouped_sizes(case: Case) -> list[int]:
    """A grouped case's rows per group: ``rows`` split as evenly as they go over the first
    ``active`` of ``groups``, none to the rest."""
    s = case.size
    return [*balanced_group_sizes(s["rows"], s["active"]), *[0] * (s["groups"] - s["active"])]


def _grouped_tensors(case: Case) -> _Built:
    """A ``[rows, k]`` by ``[groups, n, k]`` (a linear layer's weights, ``transpose_b``)."""
    s = case.size
    tensors = (
        _tensor(case, TensorRole.INPUT, (s["rows"], s["k"])),
        _tensor(case, TensorRole.WEIGHT, (s["groups"], s["n"], s["k"])),
        _tensor(case, TensorRole.OUTPUT, (s["rows"], s["n"])),
    )
    return tensors, {"transpose_b": True, "group_sizes": tuple(grouped_sizes(case))}


def _row_tensors(case: Case) -> _Built:
    """softmax (no weights), rmsnorm (gamma) and layernorm (gamma, beta) over rows x length."""
    weights = {OpKind.SOFTMAX: 0, OpKind.LAYERNORM: 2, OpKind.RMSNORM: 1}[case.kind]
    shape = (case.size["rows"], case.size["length"])
    tensors = (
        _tensor(case, TensorRole.INPUT, shape),
        *(_tensor(case, TensorRole.WEIGHT, shape[1:]) for _ in range(weights)),
        _tensor(case, TensorRole.OUTPUT, shape),
    )
    return tensors, {"implementation": "pytorch"}  # ATen's kernels run them


def _elementwise_tensors(case: Case) -> _Built:
    shape = (case.size["rows"], case.size["length"])
    inputs = 2 if case.function in _BINARY else 1
    tensors = (
        *(_tensor(case, TensorRole.INPUT, shape) for _ in range(inputs)),
        _tensor(case, TensorRole.OUTPUT, shape),
    )
    function = case.function or "add"
    # the backend runs torch's tanh approximation for "gelu" (measure.backend)
    function = _OP_FUNCTION.get(function, function)
    return tensors, {"function": function, "implementation": "pytorch"}


def _copy_tensors(case: Case) -> _Built:
    """One ``rows x length`` tensor copied into another of the same dtype."""
    shape = (case.size["rows"], case.size["length"])
    return (_tensor(case, TensorRole.INPUT, shape), _tensor(case, TensorRole.OUTPUT, shape)), {}


def _embedding_tensors(case: Case) -> _Built:
    """``F.embedding`` of ``tokens`` int64 ids into a ``vocab x hidden`` table (ATen's
    index_select; the backend draws the ids at random over the vocabulary, as Vidur does)."""
    s = case.size
    tensors = (
        TensorSpec(TensorRole.INPUT, (s["tokens"],), DType.INT64),
        _tensor(case, TensorRole.WEIGHT, (s["vocab"], s["hidden"])),
        _tensor(case, TensorRole.OUTPUT, (s["tokens"], s["hidden"])),
    )
    return tensors, {"implementation": "pytorch"}


def _attention_tensors(case: Case) -> _Built:
    """Q, K, V and O in (batch, heads, tokens, head_dim) with q/k/v/o layout tags."""
    s, prefill = case.size, case.kind is OpKind.ATTENTION_PREFILL
    q_len = s["seq"] if prefill else 1
    kv_len = s["seq"] if prefill else s["context"]
    b, h, kvh, hd = s["batch"], s["heads"], s["kv_heads"], s["head_dim"]
    tensors = (
        _tensor(case, TensorRole.INPUT, (b, h, q_len, hd), "q"),
        _tensor(case, TensorRole.INPUT, (b, kvh, kv_len, hd), "k"),
        _tensor(case, TensorRole.INPUT, (b, kvh, kv_len, hd), "v"),
        _tensor(case, TensorRole.OUTPUT, (b, h, q_len, hd), "o"),
    )
    attrs: dict[str, AttrValue] = {"causal": case.causal} if prefill else {}
    return tensors, attrs


def _variants(entry: OpGrid) -> list[tuple[str, str | None, bool, bool]]:
    trans = entry.trans if entry.kind in (OpKind.GEMM, OpKind.BATCHED_GEMM) else ("NN",)
    functions: tuple[str | None, ...] = (
        entry.functions if entry.kind is OpKind.ELEMENTWISE else (None,)
    )
    causal = entry.causal if entry.kind is OpKind.ATTENTION_PREFILL else (False,)
    return list(itertools.product(trans, functions, causal, entry.backward))


def expand(grid: MeasureGrid) -> list[Case]:
    """Every case of ``grid``, in grid order, without duplicates."""
    cases: dict[Case, None] = {}
    for entry in grid.ops:
        names = REQUIRED_SIZES[entry.kind]
        for dtype in entry.dtypes:
            for values in itertools.product(*(entry.sizes[name] for name in names)):
                sizes = tuple(zip(names, values, strict=True))
                for trans, function, causal, backward in _variants(entry):
                    case = Case(
                        kind=entry.kind,
                        dtype=dtype,
                        sizes=sizes,
                        trans=trans,
                        function=function,
                        causal=causal,
                        backward=backward,
                    )
                    cases[case] = None
    return list(cases)


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The cases of a grid with their predicted kernel time and estimated measurement time."""

    grid: MeasureGrid
    hardware: str
    model: str
    cases: tuple[Case, ...]
    kernel_s: tuple[float, ...]
    case_s: tuple[float, ...]

    @property
    def total_s(self) -> float:
        """Estimated wall time of the whole run (start-up plus every case)."""
        return START_S + sum(self.case_s)

    def summary(self) -> dict[str, object]:
        """Counts by kind and the time estimate, for ``--dry-run``."""
        by_kind = Counter(case.kind.value for case in self.cases)
        time_by_kind: dict[str, float] = {}
        for case, seconds in zip(self.cases, self.case_s, strict=True):
            time_by_kind[case.kind.value] = time_by_kind.get(case.kind.value, 0.0) + seconds
        return {
            "grid": self.grid.name,
            "hardware": self.hardware,
            "estimate_model": self.model,
            "cases": len(self.cases),
            "cases_by_kind": dict(by_kind),
            "estimated_s_by_kind": {k: round(v, 1) for k, v in time_by_kind.items()},
            "estimated_total_s": round(self.total_s, 1),
        }


def _case_seconds(grid: MeasureGrid, hardware: HardwareSpec, kernel_s: float) -> float:
    launch = hardware.overhead.kernel_launch_overhead_s
    run = kernel_s + launch
    l2 = hardware.levels_by_name.get("l2")
    flush = (
        FLUSH_L2_MULTIPLE * l2.size_bytes / hardware.hbm.bandwidth_bytes_per_s + launch
        if l2
        else 0.0
    )
    timed = grid.repeats * (run + (flush if grid.flush_l2 else 0.0) + TIMED_RUN_OVERHEAD_S)
    energy = max(grid.energy_loop_s, run) + TIMED_RUN_OVERHEAD_S if grid.energy else 0.0
    # kernel timing: the repeats again in one profiler session, after two flushes alone
    profiled = timed + 2 * flush + PROFILER_SESSION_S if grid.kernel_timing else 0.0
    return SETUP_S + grid.warmup * run + timed + energy + profiled


def plan(grid: MeasureGrid, hardware: HardwareSpec, model: OpModel) -> Plan:
    """The cases of ``grid`` with times predicted by ``model`` on ``hardware``."""
    cases = expand(grid)
    kernel_s = tuple(model.predict(case.op(), hardware).latency_s for case in cases)
    return Plan(
        grid=grid,
        hardware=hardware.name,
        model=model.name,
        cases=tuple(cases),
        kernel_s=kernel_s,
        case_s=tuple(_case_seconds(grid, hardware, t) for t in kernel_s),
    )
