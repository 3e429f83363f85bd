"""Streaming kernels: elementwise and row-wise (softmax, layernorm, rmsnorm) ops on GPUs.

Shared machinery, like :mod:`opmodel.models.gemm`: a kernel structure (:mod:`.structure`) per
implementation (:mod:`.kernels`, :mod:`.aten_rows`, :mod:`.gather`), what the L2 does for it
(:mod:`.l2_use`), and its closed-form evaluation with occupancy, waves, latency chains and
bandwidth limits (:mod:`.evaluate`). Equations: docs/models/streaming.md.
"""

from opmodel.models.streaming.evaluate import (
    StreamingEvaluation,
    evaluate_streaming,
    loaded_chain_s,
)
from opmodel.models.streaming.kernels import (
    IMPLEMENTATIONS,
    StreamKernel,
    rope_kernel,
    streaming_kernel,
)
from opmodel.models.streaming.l2_use import StreamWork

__all__ = [
    "IMPLEMENTATIONS",
    "StreamKernel",
    "StreamWork",
    "StreamingEvaluation",
    "evaluate_streaming",
    "loaded_chain_s",
    "rope_kernel",
    "streaming_kernel",
]
