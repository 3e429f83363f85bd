"""What one prediction amounts to: achieved rates against the device's peaks, the resource the
model names as the limit, the kernel and its grid, and the average power.

Every figure is derived from the :class:`~opmodel.core.profile.OpProfile` and the
:class:`~opmodel.hardware.HardwareSpec` it was predicted on; nothing is re-modelled:

    achieved FLOP/s   = flops / latency_s
    achieved HBM B/s  = HBM bytes moved while the op runs / latency_s
    intensity         = flops / hbm bytes           (FLOP per byte of DRAM traffic)
    ridge point       = engine peak / HBM bandwidth (Williams et al., CACM 2009, the roofline)
    average power     = energy_j / latency_s

The bytes moved while the op runs are the profile's HBM reads and writes, except where a
streaming kernel's diagnostics say part of its output stays dirty in a write-back L2 past its
end (``dram_write_bytes`` written, ``dram_write_back_bytes`` of them during the run; an op
after its producer, docs/models/streaming.md, "Write-back"): the profile charges those writes
to the op, which causes them, but they reach DRAM under later kernels, so they take no
bandwidth in its time (and the run's write-back of the producer's dirty lines does).

Peaks are the config's dense peaks at its rated clock (``compute.*_flops_per_s``,
``memory.levels[hbm].bandwidth_bytes_per_s``); a kernel-level model may run a kernel at another
clock (its diagnostics' ``sm_clock_hz``), so a fraction of peak is of the rated figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opmodel.core.dtypes import DType
from opmodel.core.enums import Engine, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.core.jsonify import to_jsonable
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.core.viewcheck import compute_dtype
from opmodel.core.views import CollectiveView, EmbeddingBackwardView
from opmodel.hardware import HardwareSpec
from opmodel.models.gemm.fp4_overhead import FP4_CALIBRATION_FILE, fp4_extra_cycles
from opmodel.models.gemm.overhead import GEMM_MODELS, overhead_source
from opmodel.report.accuracy import Validated
from opmodel.report.links import collective_validated, link_rate, network_rate

__all__ = ["OpSummary", "summarize"]

_LIMIT_KEYS = ("limiter", "limiting_resources", "limiting", "primary_bottleneck", "bound")
"""Diagnostics fields that name what limits a prediction, by model: kernel-level non-GEMM and
attention models (``limiter``), effective_roofline GEMMs (``limiting_resources``, tied
resources; ``limiting`` on a TPU's systolic arrays), extended_roofline GEMMs
(``primary_bottleneck``), the roofline (``bound``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OpSummary:
    """One prediction in the figures a reader checks first (see the module docstring).

    ``sm_clock_hz`` is the SM clock a kernel-level model ran the kernel at (a power-limited or
    boost clock; None when the model does not say), ``rated_clock_hz`` the config's clock, at
    which the peaks are rated. Rates are None when the latency is zero; ``peak_flops_per_s``
    is None when the hardware has no peak for the engine and dtype (a memory-engine op, a
    dtype the engine lacks); ``hbm_*`` are None when the model does not represent HBM.
    """

    op_name: str
    kind: str
    hardware: str
    implementation: str
    engine: Engine
    compute_dtype: DType
    latency_s: float
    flops: int
    peak_flops_per_s: float | None
    hbm_read_bytes: int | None
    hbm_write_bytes: int | None
    hbm_write_after_run_bytes: float  # of the written bytes, those left dirty in L2 past the end
    hbm_bandwidth_bytes_per_s: float
    limiter: str | None
    kernel: str | None
    grid: str | None
    sm_clock_hz: float | None
    rated_clock_hz: float
    energy_j: float
    tdp_w: float
    # the held-out error of the model on this kind and config (report.accuracy); None for the
    # models the table does not cover
    validated: Validated | None = None
    # a GEMM model's fixed overhead and where it comes from (models.gemm.overhead); else None
    fixed_overhead_cycles: float | None = None
    fixed_overhead_from: str | None = None
    # a collective's bytes sent (and received) by one rank and its links' line rate each way;
    # across nodes, those of them through the NICs and the device's share of the NICs' rate
    link_bytes: int | None = None
    link_bandwidth_bytes_per_s: float | None = None
    network_bytes: int | None = None
    network_bandwidth_bytes_per_s: float | None = None

    @property
    def achieved_flops_per_s(self) -> float | None:
        """FLOPs over latency."""
        return self.flops / self.latency_s if self.latency_s > 0 else None

    @property
    def compute_fraction(self) -> float | None:
        """Achieved FLOP/s over the engine's dense peak for the dtype. FLOPs are the op's, of
        every engine, so an op that also runs vector work beside its tensor work (attention's
        softmax, which the roofline overlaps with the MMAs) can exceed 1."""
        achieved = self.achieved_flops_per_s
        if achieved is None or not self.peak_flops_per_s:
            return None
        return achieved / self.peak_flops_per_s

    @property
    def hbm_bytes(self) -> int | None:
        """HBM bytes read plus written."""
        if self.hbm_read_bytes is None or self.hbm_write_bytes is None:
            return None
        return self.hbm_read_bytes + self.hbm_write_bytes

    @property
    def achieved_hbm_bytes_per_s(self) -> float | None:
        """HBM bytes moved while the op runs (module docstring) over latency."""
        nbytes = self.hbm_bytes
        if nbytes is None or self.latency_s <= 0:
            return None
        return (nbytes - self.hbm_write_after_run_bytes) / self.latency_s

    @property
    def hbm_fraction(self) -> float | None:
        """Achieved HBM bytes per second over the level's bandwidth."""
        achieved = self.achieved_hbm_bytes_per_s
        return None if achieved is None else achieved / self.hbm_bandwidth_bytes_per_s

    @property
    def intensity_flops_per_byte(self) -> float | None:
        """FLOPs per byte of HBM traffic (None without HBM bytes)."""
        nbytes = self.hbm_bytes
        return self.flops / nbytes if nbytes else None

    @property
    def ridge_flops_per_byte(self) -> float | None:
        """The intensity at which the engine's peak and the HBM bandwidth take equal time."""
        if not self.peak_flops_per_s:
            return None
        return self.peak_flops_per_s / self.hbm_bandwidth_bytes_per_s

    @property
    def average_power_w(self) -> float | None:
        """Energy over latency."""
        return self.energy_j / self.latency_s if self.latency_s > 0 else None


def _compute_dtype(op: LocalOp) -> DType:
    """The ``compute_dtype`` attr, else the first input's (first tensor's) dtype, past a
    ``where``'s condition; a collective's: its reduction's (fp32 unless given); an
    embedding's backward pass: fp32 unless given (its adds, not its integer indices)."""
    if isinstance(op.view, CollectiveView):
        return op.view.compute_dtype
    if isinstance(op.view, EmbeddingBackwardView):  # the adds into dw run in fp32
        return compute_dtype(op, DType.FP32)
    inputs = op.tensors_with(TensorRole.INPUT)
    if op.attrs.get("function") == "where":
        inputs = inputs[1:]  # the condition is a bool; the operands carry the data
    return compute_dtype(op, (inputs[0] if inputs else op.tensors[0]).dtype)


def _peak(hardware: HardwareSpec, engine: Engine, dtype: DType) -> float | None:
    if engine is Engine.TENSOR:
        return hardware.compute.tensor_peak(dtype)
    if engine is Engine.VECTOR:
        return hardware.compute.vector_peak(dtype)
    return None


def _limiter(diagnostics: Mapping[str, Any]) -> str | None:
    """The first limit field of ``diagnostics``; for a profile of several kernels (a row op's
    backward pass: ``grad_input``, ``weight_grads``) each part's, as ``part: limit; ...``."""
    for key in _LIMIT_KEYS:
        value = diagnostics.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value:
            return " + ".join(str(v) for v in value)
    parts = [
        f"{name}: {limit}"
        for name, part in diagnostics.items()
        if name != "occupancy"  # its "limiter" limits resident CTAs, not the time
        and isinstance(part, Mapping)
        and (limit := _limiter(part)) is not None
    ]
    return "; ".join(parts) or None


def _kernel(diagnostics: Mapping[str, Any]) -> str | None:
    kernel = diagnostics.get("kernel")
    if isinstance(kernel, Mapping):
        name = kernel.get("name")
        return str(name) if name else None
    return kernel if isinstance(kernel, str) and kernel else None


def _grid(diagnostics: Mapping[str, Any]) -> str | None:
    """``N CTAs, W full waves + T CTAs`` from the fields the kernel-level models report."""
    nested = diagnostics.get("grid")
    fields = {**diagnostics, **(nested if isinstance(nested, Mapping) else {})}
    ctas, waves, tail = fields.get("ctas"), fields.get("full_waves"), fields.get("tail_ctas")
    parts = [f"{ctas} CTAs"] if isinstance(ctas, int) else []
    if isinstance(waves, int) and isinstance(tail, int):
        parts.append(f"{waves} full waves + {tail} CTAs")
    per_sm = fields.get("resident_ctas_per_sm")
    if isinstance(per_sm, int) and per_sm > 0:
        parts.append(f"{per_sm} resident per SM")
    return ", ".join(parts) or None


def _write_after_run(diagnostics: Mapping[str, Any]) -> float:
    """Written bytes a streaming kernel leaves dirty in L2 past its end, less the producer's
    dirty lines its run writes back (negative when those are more); 0 where the diagnostics
    do not split the writes (module docstring)."""
    written, during = diagnostics.get("dram_write_bytes"), diagnostics.get("dram_write_back_bytes")
    if isinstance(written, int | float) and isinstance(during, int | float):
        return float(written - during)
    return 0.0


FP4_FITTED = f"fitted: configs/calibrations/{FP4_CALIBRATION_FILE.name}"


def _fixed_overhead(
    diagnostics: Mapping[str, Any], implementation: str, hardware: HardwareSpec, dtype: DType
) -> tuple[float | None, str | None]:
    """A GEMM model's fixed overhead cycles (``extended_roofline``'s top-level field,
    ``effective_roofline``'s ``resource_cycles``) and their source (with an FP4 kernel's extra
    cycles, :mod:`~opmodel.models.gemm.fp4_overhead`); (None, None) otherwise."""
    model = implementation.split("/", 1)[0]
    nested = diagnostics.get("resource_cycles")
    cycles = diagnostics.get("fixed_overhead_cycles")
    if cycles is None and isinstance(nested, Mapping):
        cycles = nested.get("fixed_overhead_cycles")
    if model not in GEMM_MODELS or not isinstance(cycles, int | float):
        return None, None
    source = overhead_source(hardware, model)
    extra = fp4_extra_cycles(hardware, model, dtype)
    if extra:
        source = f"{cycles - extra:,.0f} {source}; + {extra:,} for FP4 kernels, {FP4_FITTED}"
    return float(cycles), source


def _clock(diagnostics: Mapping[str, Any]) -> float | None:
    clock = diagnostics.get("sm_clock_hz")
    return float(clock) if isinstance(clock, int | float) and clock > 0 else None


def summarize(op: LocalOp, profile: OpProfile, hardware: HardwareSpec) -> OpSummary:
    """The summary of ``profile``, the prediction of ``op`` on ``hardware``."""
    checks = (("op", op, LocalOp), ("profile", profile, OpProfile))
    for name, value, expected in (*checks, ("hardware", hardware, HardwareSpec)):
        if not isinstance(value, expected):
            msg = f"summarize: {name} must be a {expected.__name__} (got {type(value).__name__})"
            raise OpValidationError(msg)
    raw = to_jsonable(profile.diagnostics)
    diagnostics: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    dtype = _compute_dtype(op)
    hbm = profile.traffic.get("hbm")
    overhead, source = _fixed_overhead(diagnostics, profile.implementation, hardware, dtype)
    return OpSummary(
        op_name=op.name,
        kind=op.kind.value,
        hardware=hardware.name,
        implementation=profile.implementation,
        engine=profile.engine,
        compute_dtype=dtype,
        latency_s=profile.latency_s,
        flops=profile.flops,
        peak_flops_per_s=_peak(hardware, profile.engine, dtype),
        hbm_read_bytes=None if hbm is None else hbm.read_bytes,
        hbm_write_bytes=None if hbm is None else hbm.write_bytes,
        hbm_write_after_run_bytes=_write_after_run(diagnostics),
        hbm_bandwidth_bytes_per_s=hardware.hbm.bandwidth_bytes_per_s,
        limiter=_limiter(diagnostics),
        kernel=_kernel(diagnostics),
        grid=_grid(diagnostics),
        sm_clock_hz=_clock(diagnostics),
        rated_clock_hz=hardware.compute.clock_hz,
        energy_j=profile.energy_j,
        tdp_w=hardware.power.tdp_w,
        validated=collective_validated(op, profile.implementation, hardware, diagnostics),
        fixed_overhead_cycles=overhead,
        fixed_overhead_from=source,
        link_bytes=diagnostics.get("link_bytes"),
        link_bandwidth_bytes_per_s=link_rate(hardware),
        network_bytes=diagnostics.get("network_bytes") or None,
        network_bandwidth_bytes_per_s=network_rate(hardware),
    )
