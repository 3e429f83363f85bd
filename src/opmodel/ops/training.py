"""The optimizer-step constructor: ``ops.optimizer("adamw", elements)`` (docs/op_files.md)."""

from __future__ import annotations

from opmodel.core.attrs import AttrValue
from opmodel.core.attrs_optimizer import OPTIMIZER_ALGORITHMS, OPTIMIZER_STATES
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp
from opmodel.ops._common import assemble, dtype_of, positive, tensor

__all__ = ["optimizer"]


def optimizer(  # noqa: PLR0913 - the step's sizes, its dtypes and the standard keywords
    algorithm: str,
    elements: int,
    dtype: DType | str = DType.FP32,
    *,
    grad_dtype: DType | str | None = None,
    state_dtype: DType | str | None = None,
    tensors: int | None = None,
    implementation: str | None = None,
    name: str | None = None,
    phase: Phase | str = Phase.TRAIN_BWD,
    **attrs: AttrValue,
) -> LocalOp:
    """One ``algorithm`` step (sgd, sgd_momentum, adam, adamw) over ``elements`` parameters
    of ``dtype`` (fp32 by default, an optimizer's master weights), their gradients
    (``grad_dtype``, default ``dtype``) and the algorithm's states (``state_dtype``, default
    ``dtype``), split into ``tensors`` parameter tensors (default 1); ``implementation``:
    ``fused`` (the kernel-level models' default) or ``foreach`` (PyTorch's default)."""
    where = "ops.optimizer"
    if not isinstance(algorithm, str) or algorithm not in OPTIMIZER_ALGORITHMS:
        accepted = ", ".join(OPTIMIZER_ALGORITHMS)
        raise OpValidationError(f"{where}: algorithm must be one of {accepted} (got {algorithm!r})")
    n = positive(where, "elements", elements)
    d = dtype_of(where, "dtype", dtype)
    g = d if grad_dtype is None else dtype_of(where, "grad_dtype", grad_dtype)
    s = d if state_dtype is None else dtype_of(where, "state_dtype", state_dtype)
    states = tuple(
        tensor(TensorRole.WORKSPACE, (n,), s) for _ in range(OPTIMIZER_STATES[algorithm])
    )
    parts = (tensor(TensorRole.WEIGHT, (n,), d), tensor(TensorRole.GRAD, (n,), g), *states)
    options: dict[str, AttrValue | None] = {
        "algorithm": algorithm,
        "tensors": None if tensors is None else positive(where, "tensors", tensors),
        "implementation": implementation,
    }
    return assemble(OpKind.OPTIMIZER, (name, phase), parts, options, attrs)
