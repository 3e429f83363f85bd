"""What the op constructors share: argument checks and the op's assembly."""

from __future__ import annotations

from opmodel.core.attrs import AttrValue
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp, TensorSpec, coerce_enum, integer_of

__all__ = ["assemble", "dtype_of", "flag", "non_negative", "positive", "tensor"]


def positive(where: str, name: str, value: object) -> int:
    """``value`` as a Python int when it is a positive integer; else a one-line
    :class:`OpValidationError` naming ``where`` and ``name``."""
    number = integer_of(value)
    if number is None or number <= 0:
        raise OpValidationError(f"{where}: {name} must be a positive integer (got {value!r})")
    return number


def non_negative(where: str, name: str, value: object) -> int:
    """``value`` as a Python int when it is an integer >= 0; else a one-line error."""
    number = integer_of(value)
    if number is None or number < 0:
        raise OpValidationError(f"{where}: {name} must be an integer >= 0 (got {value!r})")
    return number


def flag(where: str, name: str, value: object) -> bool:
    """``value`` when it is a boolean (``True``/``False``, not 0, 1 or a string)."""
    if not isinstance(value, bool):
        raise OpValidationError(f"{where}: {name} must be True or False (got {value!r})")
    return value


def dtype_of(where: str, name: str, value: object) -> DType:
    """``value`` (a :class:`DType` or its name) as a :class:`DType`."""
    return coerce_enum(DType, value, f"{where}: {name}")


def tensor(
    role: TensorRole, shape: tuple[int, ...], dtype: DType, layout: str | None = None
) -> TensorSpec:
    """One tensor of the op being built (its shape already checked)."""
    return TensorSpec(role, shape, dtype, layout)


def assemble(
    kind: OpKind,
    naming: tuple[str | None, Phase | str],
    tensors: tuple[TensorSpec, ...],
    options: dict[str, AttrValue | None],
    attrs: dict[str, AttrValue],
) -> LocalOp:
    """The :class:`LocalOp` named ``naming[0]`` (default: the kind) in phase ``naming[1]``.
    ``options`` are the constructor's own attrs, left out at their defaults (``None`` or
    ``False``) so that an op built here equals the same op written out by hand; ``attrs`` go
    in as given (the kind's schema checks both, naming the op)."""
    given: dict[str, AttrValue] = {}
    for key, value in options.items():
        if value is not None and value is not False:
            given[key] = value
    name, phase = naming
    return LocalOp(
        name=kind.value if name is None else name,
        kind=kind,
        phase=coerce_enum(Phase, phase, f"ops.{kind.value}: phase"),
        tensors=tensors,
        attrs={**given, **attrs},
    )
