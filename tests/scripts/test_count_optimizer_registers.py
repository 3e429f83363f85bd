"""scripts/count_optimizer_registers.py: the registers of ATen's multi-tensor-apply kernels read
from demangled ``cuobjdump -res-usage`` names, matched to the model's passes."""

from __future__ import annotations

from tests.scripts.loader import load_script

_NS = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
NAMES = (
    _NS + "at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
    "namespace)::FusedSgdMathFunctor<float, 2>, double>(...)",
    _NS + "at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
    "namespace)::FusedSgdMathFunctor<c10::BFloat16, 2>, double>(...)",
    _NS + "at::native::(anonymous namespace)::TensorListScalarListMetadata<float, 1>, "
    "at::native::(anonymous namespace)::BinaryOpScalarListFunctor<float, 1, 1, 0>, "
    "std::divides<float> >(...)",
    _NS + "at::native::(anonymous namespace)::TensorListScalarListMetadata<float, 1>, "
    "at::native::(anonymous namespace)::BinaryOpScalarListFunctor<float, 1, 1, 0>, "
    "std::multiplies<float> >(...)",  # not a pass of the model
    _NS + "at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
    "namespace)::UnaryOpFunctor<double, 2, 1, 1>, at::native::Sqrt<double> >(...)",  # double
    _NS + "at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<5>, "
    "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 5, 0, true>, double>(...)",
)


def test_the_model_passes_take_their_instances_most_registers() -> None:
    """Fused SGD of two lists: the most of its float (44) and bfloat16 (40) kernels; the
    division by a list of scalars, not the multiplication; double and amsgrad's fifth list
    left out."""
    script = load_script("count_optimizer_registers")
    counts = (44, 40, 34, 30, 50, 90)
    assert script.registers(NAMES, counts) == {("fused_sgd", 2): 44, ("foreach_div_", 1): 34}


def test_instances_pairs_each_kernel_with_its_registers() -> None:
    script = load_script("count_optimizer_registers")
    listing = (
        " Function _Z25multi_tensor_apply_kernelI1AEvv:\n  REG:44 STACK:0\n"
        " Function _Z5otherv:\n  REG:90 STACK:0\n"
    )
    assert script.instances(listing) == [("_Z25multi_tensor_apply_kernelI1AEvv", 44)]
