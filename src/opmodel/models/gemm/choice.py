"""Which kernel runs a GEMM op: the one its attrs describe, or the one selection picks.

When an op gives any tiling attr (``KERNEL_ATTRS``), or the GPU's architecture has no kernel
catalogue, the kernel is built from its attrs over the documented defaults
(:func:`~opmodel.models.gemm.kernel.build_kernel`; its name is then ``attrs``). Otherwise the
catalogue selection picks it (:mod:`opmodel.models.gemm.selection`) with the op's
``gemm_selection_objective`` (default latency) and ``gemm_selection_shortlist_size`` (default
``DEFAULT_SHORTLIST_SIZE``); ``raster_swizzle`` and ``resident_ctas_per_sm`` then modify the
chosen kernel. Both GEMM models use this, so they agree on the kernel of every op.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

from opmodel.core.errors import InvalidKernelError
from opmodel.core.op import LocalOp
from opmodel.hardware.kernel_catalogue import catalogue_for
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.gemm.evaluate import (
    KernelEvaluation,
    KernelSetup,
    evaluate_at_clock,
    evaluate_kernel,
    kernel_setup,
)
from opmodel.models.gemm.kernel import (
    GemmKernel,
    build_kernel,
    kernel_problems,
    split_k_problems,
)
from opmodel.models.gemm.problem import GemmProblem
from opmodel.models.gemm.selection import (
    DEFAULT_SHORTLIST_SIZE,
    KernelSelection,
    Objective,
    select_kernel,
)

__all__ = [
    "KERNEL_ATTRS",
    "KernelChoice",
    "attrs_kernel_setup",
    "choose_kernel",
    "chosen_at_clock",
    "evaluate_chosen",
    "setup_of",
]

KERNEL_ATTRS = frozenset(
    {
        "cta_tile_m",
        "cta_tile_n",
        "cta_tile_k",
        "warp_tile_m",
        "warp_tile_n",
        "warp_tile_k",
        "pipeline_stages",
        "warps_per_cta",
        "registers_per_thread",
        "split_k",
    }
)
_MODIFIERS = ("raster_swizzle", "resident_ctas_per_sm")
_EVALUATIONS_KEPT = 65536  # evaluations memoised per hardware spec before the memo is cleared


class KernelChoice(NamedTuple):
    """The evaluated kernel and, when it was selected, how."""

    evaluation: KernelEvaluation
    selection: KernelSelection | None


def choose_kernel(op: LocalOp, problem: GemmProblem, hardware: HardwareSpec) -> KernelChoice:
    """The kernel of ``op`` on ``hardware`` (a GPU), evaluated with the phase-aware model."""
    sm = hardware.compute.sm
    assert sm is not None
    attrs = op.attrs
    if not KERNEL_ATTRS.isdisjoint(attrs) or catalogue_for(hardware.architecture or "") is None:
        setup, evaluations = _kernel_from_attrs(op, problem, hardware)
        evaluation = _memoised(  # by sizes: the dtypes are in the setup's key
            evaluations,
            problem.sizes,
            lambda: evaluate_kernel(setup.kernel, problem, hardware, setup),
        )
        return KernelChoice(evaluation, None)
    objective = Objective(str(attrs.get("gemm_selection_objective", Objective.LATENCY)))
    size = attrs.get("gemm_selection_shortlist_size", DEFAULT_SHORTLIST_SIZE)
    assert isinstance(size, int)
    evaluation, selection = select_kernel(
        problem, hardware, objective=objective, shortlist_size=size
    )
    changes = {name: attrs[name] for name in _MODIFIERS if name in attrs}
    if changes:
        kernel = dataclasses.replace(evaluation.kernel, **changes)  # type: ignore[arg-type]
        problems = kernel_problems(kernel, problem, sm)
        if problems:
            raise InvalidKernelError(f"op '{op.name}' ({op.kind}): kernel: {problems[0]}")
        evaluation = _evaluate_memoised(kernel, problem, hardware)
    return KernelChoice(evaluation, selection)


def attrs_kernel_setup(op: LocalOp, problem: GemmProblem, hardware: HardwareSpec) -> KernelSetup:
    """The kernel ``op``'s attrs describe (over the documented defaults) and its occupancy and
    local work on ``hardware`` (a GPU), checked against ``problem`` and memoised per spec on
    the attrs and dtypes: a sweep over shapes builds and checks the kernel once."""
    return _kernel_from_attrs(op, problem, hardware)[0]


def _kernel_from_attrs(
    op: LocalOp, problem: GemmProblem, hardware: HardwareSpec
) -> tuple[KernelSetup, dict[tuple[int | bool, ...], KernelEvaluation]]:
    """The kernel the op's attrs describe, its setup and its evaluations by problem sizes
    (``GemmProblem.sizes``), memoised per spec on the attrs and dtypes (only the split-K check
    depends on the sizes; a grouped GEMM's ``group_sizes`` are not part of the key, so a sweep
    over routings builds one kernel); keeping the evaluations with the setup spares hashing
    the kernel and the dtypes on every predict."""
    sm = hardware.compute.sm
    assert sm is not None
    attrs: object = op.attrs
    if "group_sizes" in op.attrs:  # the routing does not change the kernel: keep it out
        attrs = tuple(item for item in op.attrs.items() if item[0] != "group_sizes")
    key = ("gemm.attrs_kernel", attrs, problem.dtypes)
    hit: tuple[KernelSetup, dict[tuple[int | bool, ...], KernelEvaluation]] | None = (
        hardware.derived_cache.get(key)
    )
    if hit is None:
        on_tensor = hardware.compute.tensor_peak(problem.compute_dtype) is not None
        kernel = build_kernel(op, problem, sm, on_tensor=on_tensor)
        hit = hardware.derived_cache[key] = (kernel_setup(kernel, problem, hardware), {})
        return hit
    kernel = hit[0].kernel
    if kernel.split_k > 1:  # the one check that depends on the sizes
        problems = split_k_problems(kernel, problem)
        if problems:
            raise InvalidKernelError(f"op '{op.name}' ({op.kind}): kernel: {problems[0]}")
    return hit


def setup_of(kernel: GemmKernel, problem: GemmProblem, hardware: HardwareSpec) -> KernelSetup:
    """:func:`~opmodel.models.gemm.evaluate.kernel_setup` of ``kernel`` for ``problem``'s dtypes,
    memoised per spec on the kernel and dtypes."""
    key = (
        "gemm.kernel_setup",
        kernel,
        problem.dtypes,
    )
    setup: KernelSetup | None = hardware.derived_cache.get(key)
    if setup is None:
        setup = hardware.derived_cache[key] = kernel_setup(kernel, problem, hardware)
    return setup


def evaluate_chosen(
    kernel: GemmKernel, problem: GemmProblem, hardware: HardwareSpec
) -> KernelEvaluation:
    """``kernel``, chosen for ``problem`` on another clock of the same device, evaluated on
    ``hardware``: a power-limited clock changes how fast the kernel runs, not which kernel the
    library launches (cuBLAS's heuristics do not know the clock)."""
    return evaluate_kernel(kernel, problem, hardware, setup_of(kernel, problem, hardware))


def chosen_at_clock(
    e: KernelEvaluation, problem: GemmProblem, hardware: HardwareSpec
) -> KernelEvaluation:
    """:func:`evaluate_chosen` of ``e``'s kernel on ``hardware``, another clock of the device
    ``e`` was evaluated on, keeping ``e``'s grid, traffic and per-CTA work, which the clock
    does not change (:func:`~opmodel.models.gemm.evaluate.evaluate_at_clock`).

    Memoised on ``hardware`` by ``e`` itself: the first evaluation comes from the memos of
    :func:`choose_kernel`, so a shape repeated in new ops brings the same object, and its
    identity is a key that costs nothing to hash (the entry holds ``e``, so the identity
    cannot pass to another object while it lives)."""
    memo: dict[int, tuple[KernelEvaluation, KernelEvaluation]] = hardware.derived_cache.setdefault(
        "gemm.at_clock", {}
    )
    hit = memo.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    again = evaluate_at_clock(e, setup_of(e.kernel, problem, hardware))
    if len(memo) >= _EVALUATIONS_KEPT:
        memo.clear()
    memo[id(e)] = (e, again)
    return again


def _evaluate_memoised(
    kernel: GemmKernel, problem: GemmProblem, hardware: HardwareSpec
) -> KernelEvaluation:
    """:func:`evaluate_chosen`, memoised per spec on (kernel, problem): sweeps repeat shapes."""
    memo: dict[object, KernelEvaluation] = hardware.derived_cache.setdefault("gemm.evaluations", {})
    return _memoised(memo, (kernel, problem), lambda: evaluate_chosen(kernel, problem, hardware))


def _memoised(
    memo: dict[Any, KernelEvaluation], key: object, evaluate: Callable[[], KernelEvaluation]
) -> KernelEvaluation:
    """``memo[key]``, or ``evaluate()`` stored there; a memo holds at most
    ``_EVALUATIONS_KEPT`` evaluations and starts again when full."""
    hit = memo.get(key)
    if hit is None:
        if len(memo) >= _EVALUATIONS_KEPT:
            memo.clear()
        hit = memo[key] = evaluate()
    return hit
