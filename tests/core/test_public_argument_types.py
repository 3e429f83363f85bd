"""Each public function of the package refuses an argument of the wrong type (here None, the
commonest slip) with a one-line error naming the function and what it expected, not an
AttributeError or TypeError raised inside it."""

from __future__ import annotations

import importlib
import inspect
import traceback

import pytest

from opmodel.core.errors import OpModelError

# the user-facing modules and their public functions; developer utilities (coerce_enum,
# tensor_at) take what the parsers hand them
MODULES = (
    "opmodel",
    "opmodel.hardware",
    "opmodel.report",
    "opmodel.models",
    "opmodel.batch",
    "opmodel.parsing.op_file",
)
# None is their default, or they take no argument at all (paused_gc)
TAKE_NONE = {"config_directory", "shipped_hardware_names", "model_names", "paused_gc"}


def _public_functions() -> list[tuple[str, object]]:
    found = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if callable(obj) and not inspect.isclass(obj) and name not in TAKE_NONE:
                found.append((f"{module_name}.{name}", obj))
    return found


FUNCTIONS = dict(_public_functions())


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_none_is_refused_by_name(name: str) -> None:
    function = FUNCTIONS[name]
    assert callable(function)
    required = [
        p
        for p in inspect.signature(function).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    with pytest.raises((OpModelError, ValueError, TypeError)) as info:
        function(*([None] * len(required)))
    # raised by the function's own check, at its top: not from an attribute or call inside
    assert not isinstance(info.value, AttributeError | KeyError | IndexError), name
    if type(info.value) is TypeError:
        frames = traceback.extract_tb(info.value.__traceback__)
        assert frames[-1].name == function.__name__, (name, str(info.value))  # type: ignore[attr-defined]
    assert "\n" not in str(info.value), name
