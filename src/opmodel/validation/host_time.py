"""The host's time per launch in an eager forward pass: per kernel and per ``nn.Module`` call.

An eager framework spends host time on every kernel it launches (Python, dispatch, the launch
call) and, in Hugging Face and torchvision models, on every ``nn.Module`` call (``__call__``, its
hook checks, the forward's own Python), kernels or not: container modules and eval-mode
``Dropout`` launch nothing. The launch queue (:mod:`opmodel.validation.launch_queue`) issues
kernel ``i`` at ``i g``; here ``g = launch_gap_s + module_call_s x calls / launches``: the pass's
module calls spread evenly over its launches (the order of the host's work inside the pass is
not in the op lists). ``calls`` is counted per forward pass from each model's source as the
artifact builds it (:data:`MODULE_CALLS`); a family without a count spends no host time on module
calls. Both times are fitted on the training runs by ``opmodel calibrate-energy``
(:func:`fit_host_time`): the measured host-bound passes spend less host time per kernel in
Qwen2, whose lists are mostly bare tensor operations, than in BERT, GPT-2 and OPT, whose lists
are mostly module calls (``python scripts/host_time_experiment.py``), which one time per kernel
cannot describe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from opmodel.validation.launch_queue import PassEnvelope

__all__ = ["MODULE_CALLS", "HostTime", "fit_host_time", "host_gap_s"]

# nn.Module calls in one eval-mode forward pass (containers, embeddings and Dropout included):
# transformers 4.51.3 with eager attention, the artifact's pinned version (run_model.py), and
# torchvision's resnet101.
MODULE_CALLS = {
    # BertModel 1, BertEmbeddings with 3 embeddings, LayerNorm and Dropout 6, BertEncoder 1,
    # 24 x BertLayer (the layer, attention, self-attention with q, k, v and its Dropout,
    # self-output with dense, Dropout and LayerNorm, intermediate with dense and GELU, output
    # with dense, Dropout and LayerNorm: 18), BertPooler with dense and Tanh 3
    "bert": 1 + 6 + 1 + 24 * 18 + 3,
    # GPT2Model 1, wte and wpe 2, drop 1, 12 x GPT2Block (block, ln_1, attention with c_attn,
    # attn_dropout, c_proj and resid_dropout, ln_2, MLP with c_fc, act, c_proj, dropout: 13),
    # ln_f 1
    "gpt2": 1 + 2 + 1 + 12 * 13 + 1,
    # OPTModel and OPTDecoder 2, embed_tokens and embed_positions 2, 24 x OPTDecoderLayer
    # (layer, self_attn_layer_norm, attention with q, k, v, out_proj, final_layer_norm, fc1,
    # activation, fc2: 11; attention dropout functional), final_layer_norm 1
    "opt": 2 + 2 + 24 * 11 + 1,
    # Qwen2Model 1, embed_tokens and rotary_emb 2, 28 x Qwen2DecoderLayer (layer,
    # input_layernorm, attention with q, k, v, o, post_attention_layernorm, MLP with gate, up,
    # down and act_fn: 13), norm 1
    "qwen2": 1 + 2 + 28 * 13 + 1,
    # ViTModel 1, embeddings with patch embeddings, projection and dropout 4, encoder 1, 24 x
    # ViTLayer (layer, layernorm_before, attention, self-attention with q, k, v, self-output
    # with dense and dropout, layernorm_after, intermediate with dense and act, output with
    # dense and dropout: 17; attention dropout functional), layernorm 1, pooler with dense and
    # Tanh 3
    "vit": 1 + 4 + 1 + 24 * 17 + 1 + 3,
    # MobileViTModel 1, conv stem 4 (conv, norm, activation), encoder 1, MobileNet layers of 1
    # and 3 inverted residuals (12 each, with the layer 13 and 37), MobileViT layers of 2, 4
    # and 3 transformer layers (17 each) with their downsampling, local and fusion convolutions
    # (63, 97 and 80), conv_1x1_exp 4
    "mobilevit": 1 + 4 + 1 + 13 + 37 + 63 + 97 + 80 + 4,
    # ResNet 1, conv1, bn1, relu, maxpool 4, layer1-4 4, 33 Bottlenecks (block, 3 conv, 3 bn,
    # relu called 3 times: 10), 4 downsample Sequentials with conv and bn 12, avgpool and fc 2
    "resnet101": 1 + 4 + 4 + 33 * 10 + 12 + 2,
}


@dataclass(frozen=True, slots=True)
class HostTime:
    """Host time per kernel launched and per module call [s]."""

    launch_gap_s: float
    module_call_s: float


def host_gap_s(host: HostTime, family: str, launches: int) -> float:
    """The queue's host time per launch for a pass of ``family`` (module docstring)."""
    calls = MODULE_CALLS.get(family, 0)
    spread = host.module_call_s * calls / launches if launches else 0.0
    return host.launch_gap_s + spread


def fit_host_time(
    passes: Sequence[tuple[Sequence[float], str, float]], *, module_calls: bool = True
) -> HostTime:
    """The two host times minimising the MAPE of the passes' times, each pass given as
    ``(kernel latencies per launch, family, measured time)``: a grid of 2 % steps in the time
    per kernel (0.5 µs to about 500 µs) and 10 % in the time per module call (0, or 0.1 µs to
    about 100 µs), then 0.5 % and 2 % steps around the best. ``module_calls=False`` fits the
    time per kernel alone (the law before 2026-12-07)."""
    prepared = [
        (PassEnvelope(latencies), MODULE_CALLS.get(family, 0) / max(len(latencies), 1), measured)
        for latencies, family, measured in passes
    ]
    if not prepared:
        msg = "no passes to fit the host time on"
        raise ValueError(msg)

    def mape(candidate: tuple[float, float]) -> float:
        gap, call = candidate
        total = sum(abs(env(gap + call * per) / measured - 1) for env, per, measured in prepared)
        return total / len(prepared)

    calls = [0.0, *(1e-7 * 1.1**j for j in range(73 if module_calls else 0))]
    coarse = [(0.5e-6 * 1.02**i, call) for i in range(348) for call in calls]
    gap, call = min(coarse, key=mape)
    fine_calls = [call * 1.02**b for b in range(-6, 7)] if call else [0.0]
    fine = [(gap * 1.005**a, c) for a in range(-4, 5) for c in fine_calls]
    return HostTime(*min(fine, key=mape))
