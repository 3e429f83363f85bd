"""Convert the public non-GEMM kernel measurements in ../shared/data into opmodel op tables.

Usage: python scripts/convert_op_data.py [--shared-dir ../shared/data] [--out data/ops]

Each output row is an op-table row (docs/sweeps.md: ``name, kind, phase, tensors, attrs``) with
the measurement beside it: ``time`` [ms], ``hardware`` (an opmodel config name), ``clock_mhz``
(empty: the config's clock), ``source``, ``implementation`` (who wrote the kernel), ``label`` and
``timing_scope`` (``kernel``: Vidur's profiler kernel times; ``event``: CUDA events around each
call, Triton's ``do_bench``; opmodel.validation.timing_scope).
Numbers are copied, never edited; only rows that one kernel computes are kept (see the SOURCE.md
files for what is left out and why).
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models import get_model

COLUMNS = (
    "name",
    "kind",
    "phase",
    "tensors",
    "attrs",
    "time",
    "hardware",
    "clock_mhz",
    "source",
    "implementation",
    "label",
    "timing_scope",
)
VIDUR_GPUS = {"a100": "a100_80gb_sxm", "h100": "h100_sxm", "a40": "a40"}
LAYERNORM_MODELS = ("microsoft/phi-2",)  # every other Vidur model uses RMSNorm
LIGER_GPUS = {
    "NVIDIA A100-SXM4-80GB": "a100_80gb_sxm",
    "NVIDIA H100 80GB HBM3": "h100_sxm",
    "NVIDIA GeForce RTX 3090": "rtx3090",
}
LIGER_DTYPES = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}
# (kernel_name, provider) -> (op kind, implementation); eager multi-kernel modules are left out
LIGER_KERNELS = {
    ("layer_norm", "liger"): ("layernorm", "fused"),  # Triton
    ("layer_norm", "huggingface"): ("layernorm", "pytorch"),  # nn.LayerNorm: one ATen kernel
    ("rms_norm", "liger"): ("rmsnorm", "fused"),  # Triton
    ("softmax", "liger"): ("softmax", "fused"),  # Triton
    ("softmax", "torch"): ("softmax", "pytorch"),  # torch.softmax: one ATen kernel
}


def _tensor(role: str, shape: tuple[int, ...], dtype: str) -> str:
    return f"{role}:{'x'.join(str(d) for d in shape)}:{dtype}"


def _row(**values: object) -> dict[str, object]:
    return {column: values.get(column, "") for column in COLUMNS}


FP16_BYTES = 2
DO_BENCH_FLUSH_BYTES = 256 * 1024 * 1024  # the buffer Triton's do_bench writes before each call


def _norm(kind: str, rows: int, length: int, dtype: str, kernel: str) -> tuple[str, str]:
    weights = {"layernorm": 2, "rmsnorm": 1, "softmax": 0}[kind]
    tensors = [_tensor("input", (rows, length), dtype)]
    tensors += [_tensor("weight", (length,), dtype)] * weights
    tensors.append(_tensor("output", (rows, length), dtype))
    return ";".join(tensors), json.dumps({"implementation": kernel})


def _with(attrs: str, extra: Mapping[str, object]) -> str:
    """The JSON attrs ``attrs`` with ``extra`` added."""
    return json.dumps({**json.loads(attrs), **extra})


def _elementwise(
    function: str, inputs: int, shape: tuple[int, ...], kernel: str
) -> tuple[str, str]:
    tensors = [_tensor("input", shape, "fp16")] * inputs + [_tensor("output", shape, "fp16")]
    return ";".join(tensors), json.dumps({"function": function, "implementation": kernel})


def _gemm_bytes(m: int, n: int, k: int) -> int:
    """Compulsory fp16 bytes of ``[m, k] @ [k, n]``: A, B and C once each."""
    return (m * k + k * n + m * n) * FP16_BYTES


class GemmWaves:
    """Waves of the fp16 GEMM ``[m, k] @ [k, n]`` on one GPU config, as opmodel's
    ``effective_roofline`` predicts it (automatic kernel selection): full waves plus one for a
    tail. A GEMM stores each output tile in its CTA's epilogue, so a consumer of its output
    finds it written in that many bursts (attr ``producer_waves``, docs/models/streaming.md)."""

    def __init__(self, config: str) -> None:
        self._spec = load_hardware(config)
        self._model = get_model("effective_roofline")
        self._cache: dict[tuple[int, int, int], int] = {}

    def __call__(self, m: int, n: int, k: int) -> int:
        key = (m, n, k)
        if key not in self._cache:
            op = LocalOp(
                name="producer_gemm",
                kind=OpKind.GEMM,
                phase=Phase.INFERENCE,
                tensors=(
                    TensorSpec(TensorRole.INPUT, (m, k), DType.FP16),
                    TensorSpec(TensorRole.WEIGHT, (k, n), DType.FP16),
                    TensorSpec(TensorRole.OUTPUT, (m, n), DType.FP16),
                ),
            )
            grid = self._model.predict(op, self._spec).diagnostics.grid
            self._cache[key] = grid.full_waves + (1 if grid.tail_ctas else 0)
        return self._cache[key]


def _waves(waves: GemmWaves | None, m: int, n: int, k: int) -> dict[str, int]:
    """``{"producer_waves": W}`` of the GEMM ``[m, k] @ [k, n]`` when ``waves`` is given."""
    return {} if waves is None else {"producer_waves": waves(m, n, k)}


def _vidur_ops(
    model: str, record: dict[str, str], waves: GemmWaves | None
) -> Iterator[tuple[str, str, str, str, str]]:
    """(Vidur op, opmodel kind, tensors, attrs, implementation) of one row's single-kernel ops.

    RMSNorm and SiluAndMul are vLLM CUDA kernels; phi-2's LayerNorm (torch.nn.LayerNorm) and its
    GELU are PyTorch (ATen) kernels, as are the residual add and, at TP = 1, the embedding.
    Vidur runs the layer's kernels in order without flushing L2
    (vidur/profiling/mlp/mlp_impl.py), so each op reads what the kernel before it wrote: the
    ``warm_l2`` / ``warm_input`` attrs say which input, and ``producer_bytes`` what that kernel
    moved (compulsory bytes: embedding gather 2 x its output, the untimed residual add 3 x, a
    GEMM A + B + C).
    """
    tokens, embd = int(record["num_tokens"]), int(record["n_embd"])
    tp = int(record["num_tensor_parallel_workers"])
    expanded = int(record["n_expanded_embd"]) // tp
    gated = record["use_gated_mlp"] == "True"
    hidden_bytes = tokens * embd * FP16_BYTES
    norm = "layernorm" if model in LAYERNORM_MODELS else "rmsnorm"
    norm_kernel = "pytorch" if norm == "layernorm" else "vllm"
    producers = {
        # the embedding gather read its rows and wrote the hidden states
        "input_layernorm": 2 * hidden_bytes,
        # hidden = residual + attention output, untimed, just before
        "post_attention_layernorm": 3 * hidden_bytes,
    }
    if tp == 1:
        # F.embedding of the token ids (torch.randint over the vocabulary, Vidur's
        # mlp_wrapper.py): ATen's index_select, one kernel; above TP = 1 the vocabulary-parallel
        # embedding adds masking kernels and is left out
        vocab = int(record["vocab_size"])
        tensors = ";".join(
            (
                _tensor("input", (tokens,), "int64"),
                _tensor("weight", (vocab, embd), "fp16"),
                _tensor("output", (tokens, embd), "fp16"),
            )
        )
        yield ("emb", "embedding", tensors, json.dumps({"implementation": "pytorch"}), "pytorch")
    for op, producer in producers.items():
        tensors, attrs = _norm(norm, tokens, embd, "fp16", norm_kernel)
        warm = {"warm_l2": True, "producer_bytes": producer}
        yield (op, norm, tensors, _with(attrs, warm), norm_kernel)
    if model not in LAYERNORM_MODELS:
        # vLLM's rotary embedding on the q and k heads the qkv projection just wrote, with one
        # cos/sin row per token (phi-2 rotates 32 of its 80 head dims and is left out)
        heads, kv_heads = int(record["n_head"]), int(record["n_kv_head"])
        head_dim = embd // heads
        rotated = (heads + kv_heads) // tp
        qkv_width = (heads + 2 * kv_heads) // tp * head_dim
        tensors = ";".join(
            (
                _tensor("input", (tokens, rotated, head_dim), "fp16"),
                _tensor("input", (tokens, 1, head_dim), "fp16"),
                _tensor("output", (tokens, rotated, head_dim), "fp16"),
            )
        )
        rope_attrs = {
            "function": "rope",
            "implementation": "vllm",
            "warm_input": 0,
            "producer_bytes": _gemm_bytes(tokens, qkv_width, embd),
            **_waves(waves, tokens, qkv_width, embd),
        }
        yield ("attn_rope", "elementwise", tensors, json.dumps(rope_attrs), "vllm")
    up_width = (2 if gated else 1) * expanded
    act_warm = {
        "warm_l2": True,
        "producer_bytes": _gemm_bytes(tokens, up_width, embd),
        **_waves(waves, tokens, up_width, embd),
    }
    if gated:
        # vLLM SiluAndMul: reads [tokens, 2 * expanded], writes [tokens, expanded]
        tensors, attrs = _elementwise("silu_and_mul", 2, (tokens, expanded), "vllm")
        yield ("mlp_act", "elementwise", tensors, _with(attrs, act_warm), "vllm")
    else:
        tensors, attrs = _elementwise("gelu", 1, (tokens, expanded), "pytorch")
        yield ("mlp_act", "elementwise", tensors, _with(attrs, act_warm), "pytorch")
    if model not in LAYERNORM_MODELS:
        # residual + down-projection output (input 1, just written); phi-2's timed add is two
        # kernels (attention + MLP + residual) and is left out
        add_warm = {
            "warm_input": 1,
            "producer_bytes": _gemm_bytes(tokens, embd, expanded),
            **_waves(waves, tokens, embd, expanded),
        }
        tensors, attrs = _elementwise("add", 2, (tokens, embd), "pytorch")
        yield ("add", "elementwise", tensors, _with(attrs, add_warm), "pytorch")


def convert_vidur(shared: Path, out: Path, *, producer_waves: bool = False) -> None:
    """Vidur's single-kernel ops per GPU; with ``producer_waves`` each op a GEMM wrote also
    gets that GEMM's waves (:class:`GemmWaves`), an experiment the shipped tables leave out
    (docs/models/streaming.md, "Warm inputs" and "Short kernels")."""
    root = shared / "vidur_profiling/data/profiling/compute"
    for gpu, config in VIDUR_GPUS.items():
        rows = []
        waves = GemmWaves(config) if producer_waves else None
        for path in sorted((root / gpu).rglob("mlp.csv")):
            model = "/".join(path.relative_to(root / gpu).parts[:-1])
            with path.open(newline="") as handle:
                for record in csv.DictReader(handle):
                    tp = record["num_tensor_parallel_workers"]
                    for op, kind, tensors, attrs, kernel in _vidur_ops(model, record, waves):
                        time = record.get(f"time_stats.{op}.median", "")
                        if not time or float(time) <= 0:
                            continue
                        rows.append(
                            _row(
                                name=op,
                                kind=kind,
                                phase="prefill",
                                tensors=tensors,
                                attrs=attrs,
                                time=time,
                                hardware=config,
                                source="vidur",
                                implementation=kernel,
                                label=f"{model}:{op}:tp{tp}:tokens{record['num_tokens']}",
                                timing_scope="kernel",  # torch.profiler kernel time
                            )
                        )
        _write(out / "vidur" / f"vidur_{gpu}.csv", rows)


def convert_liger(shared: Path, out: Path) -> None:
    path = shared / "liger_kernel_benchmarks/all_benchmark_data.csv"
    rows = []
    with path.open(newline="") as handle:
        for record in csv.DictReader(handle):
            key = (record["kernel_name"], record["kernel_provider"])
            config = LIGER_GPUS.get(record["gpu_name"])
            if key not in LIGER_KERNELS or config is None:
                continue
            if (record["kernel_operation_mode"], record["metric_name"]) != ("forward", "speed"):
                continue
            extra = json.loads(record["extra_benchmark_config_str"])
            kind, implementation = LIGER_KERNELS[key]
            length, count = int(float(record["x_value"])), int(extra["M"])
            tensors, attrs = _norm(
                kind, count, length, LIGER_DTYPES[extra["dtype"]], implementation
            )
            # Triton's do_bench zeroes a 256 MiB buffer before each call to flush the L2
            # (triton/backends/nvidia/driver.py, get_empty_cache_for_benchmark / clear_cache)
            attrs = _with(attrs, {"l2_dirty_bytes": DO_BENCH_FLUSH_BYTES})
            rows.append(
                _row(
                    name=record["kernel_name"],
                    kind=kind,
                    phase="train_fwd",
                    tensors=tensors,
                    attrs=attrs,
                    time=record["y_value_50"],
                    hardware=config,
                    source="liger",
                    implementation=implementation,
                    label=f"{record['kernel_name']}:{record['kernel_provider']}:M{count}:N{length}",
                    # do_bench records CUDA events around each call (triton.testing.do_bench)
                    timing_scope="event",
                )
            )
    _write(out / "liger" / "liger.csv", rows)


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{path}: {len(rows)} rows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=Path("data/ops"))
    parser.add_argument(
        "--producer-waves",
        action="store_true",
        help="also write producer_waves (the producing GEMM's waves on each GPU, from "
        "effective_roofline) on the ops a GEMM wrote; an experiment, off in the shipped tables",
    )
    args = parser.parse_args()
    convert_vidur(args.shared_dir, args.out, producer_waves=args.producer_waves)
    convert_liger(args.shared_dir, args.out)


if __name__ == "__main__":
    main()
