"""The streaming ops' checks that no kernel structure makes: an implementation asked for a
function it has no kernel for is a one-line error, not a silent substitute."""

from __future__ import annotations

from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp
from opmodel.core.views import ElementwiseView

__all__ = ["VLLM_FUNCTIONS", "check_vllm_function"]

# the elementwise functions vLLM has a kernel for (csrc/activation_kernels.cu: act_and_mul_kernel
# and activation_kernel; csrc/pos_encoding_kernels.cu: rotary_embedding_kernel)
VLLM_FUNCTIONS = ("gelu", "gelu_and_mul", "gelu_tanh", "gelu_tanh_and_mul", "rope", "silu_and_mul")


def check_vllm_function(op: LocalOp) -> None:
    """An elementwise op of ``implementation: vllm`` names a function vLLM has a kernel for."""
    view = op.view
    if not isinstance(view, ElementwiseView) or op.attrs.get("implementation") != "vllm":
        return
    if view.function not in VLLM_FUNCTIONS:
        raise OpValidationError(
            f"op '{op.name}' (elementwise): implementation vllm runs functions "
            f"{', '.join(VLLM_FUNCTIONS)}; vLLM has no kernel for function {view.function!r} "
            "(use pytorch or fused)"
        )
