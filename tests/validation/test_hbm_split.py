"""The declared training split of the A40's sustained HBM fraction."""

from __future__ import annotations

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.validation.hbm_split import HBM_FRACTION_SPLITS, is_hbm_fraction_training_row
from opmodel.validation.op_latency import OpRow

LLAMA_7B = "meta-llama/Llama-2-7b-hf:add:tp1:tokens"


def _add(tokens: int, function: str = "add") -> LocalOp:
    """A residual add of ``tokens`` x 4096 fp16 elements: three tensors of 8 KiB per token."""
    shape = (tokens, 4096)
    return LocalOp(
        name="add",
        kind=OpKind.ELEMENTWISE,
        phase=Phase.PREFILL,
        attrs={"function": function},
        tensors=(
            TensorSpec(TensorRole.INPUT, shape, DType.FP16),
            TensorSpec(TensorRole.INPUT, shape, DType.FP16),
            TensorSpec(TensorRole.OUTPUT, shape, DType.FP16),
        ),
    )


def _row(op: LocalOp, label: str, **over: str) -> bool:
    fields = {"hardware": "a40", "source": "vidur", "implementation": "pytorch", "label": label}
    fields.update(over)
    return is_hbm_fraction_training_row(OpRow(op=op, time_s=1e-5, clock_hz=None, **fields))


def test_split_takes_large_llama_7b_adds_on_the_a40_only() -> None:
    """2,605 tokens move 3 x 2,605 x 8,192 B = 64.02 MB, the first size at or above 64 MB;
    2,604 tokens move 63.99 MB. Another model, GPU, source, kernel or function is held out."""
    assert HBM_FRACTION_SPLITS["a40"].min_bytes == 64 * 10**6
    assert _row(_add(2605), LLAMA_7B + "2605")
    assert not _row(_add(2604), LLAMA_7B + "2604")
    assert not _row(_add(4096), "Qwen/Qwen-72B:add:tp1:tokens4096")
    assert not _row(_add(4096), LLAMA_7B + "4096", hardware="a100_80gb_sxm")
    assert not _row(_add(4096), LLAMA_7B + "4096", source="liger")
    assert not _row(_add(4096), LLAMA_7B + "4096", implementation="vllm")
    assert not _row(_add(4096, "mul"), LLAMA_7B + "4096")


def test_description_names_the_split_without_quotes() -> None:
    """The text goes into a single-quoted YAML string (fitted_on) and into reports."""
    text = HBM_FRACTION_SPLITS["a40"].description
    assert "'" not in text and "meta-llama/Llama-2-7b-hf:*" in text and "64 MB" in text
