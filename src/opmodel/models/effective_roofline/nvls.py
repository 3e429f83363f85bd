"""``effective_roofline`` of an NVLink SHARP all-reduce (``algorithm: nvls``): NCCL's chunked
loops over its NVLS channels.

How NCCL runs it inside one node (facts from NVIDIA/nccl's source, src/transport/nvls.cc and
``calcCollChunking`` in src/enqueue.cc, unchanged from 2.18 to 2.28 in what is used here):

- ``C`` channels: ``NVLS_NCHANNELS_SM90`` = 16 on sm_90; 24 on sm_100 and later inside one
  NVLink domain (``NVLS_NCHANNELS_SM100_NVL``). NCCL does not cut them for small buffers.
- ``n`` heads, one per rank (``nvls.nHeads`` = the node's ranks): each loop of a channel
  reduces one chunk per head in the switch and multicasts the sums back.
- The chunk ``c``: 128 KiB (``NCCL_NVLS_CHUNKSIZE``'s default), cut to 64 KiB when the buffer
  is under 64 loops of 128 KiB chunks (``S < 64 x C n x 128 KiB``), then to 32 KiB under 8
  loops of 64 KiB, then to 16 KiB under 2 loops of 32 KiB; a last, partial loop splits what
  is left over the ``C n`` (channel, head) pairs.

The time: ``L = max(1, S / (C n c))`` loops run one after another on each channel, each paying
a synchronisation ``tau`` (its ranks' flags before the switch may reduce the chunk) beside the
transfer of its chunk; the pipeline between scatter, reduction and gather fills for ``D``
loops before the first sums come back. ``tau = tau_8 n / 8`` grows with the heads, whose
credits the scatter and the gather wait on (since 2026-12-07; chosen with the published
72-GPU curves in view, docs/models/collective.md):

``t = a + (L + D) tau + D c' C n / R_inf + S / R_inf``, ``c' = min(c, S / (C n))``

with ``a`` = 23 us, NCCL's NVLS latency over NVLink (its tuning model's ``hwLat``, NVIDIA/nccl
at commit b647562), and ``R_inf`` the rate without synchronisation, from the config's
``interconnect.nvls_bandwidth_bytes_per_s`` ``R``: an algorithm bandwidth at large buffers on
one node's ``devices_per_node`` ranks, which run 128 KiB chunks on the architecture's ``C``
channels, so ``1 / R_inf = 1 / R - tau / (C x devices_per_node x 128 KiB)``, ``tau`` that of
``devices_per_node`` heads: 16 x 8 for NCCL's
maintainer's ~275 GB/s of 8 H100s (nccl-tests issue #212), 24 x 8 for the 483 GB/s of 8 B300s
(NVIDIA/nccl issue #2140).

``tau_8`` and ``D`` are fitted (``python scripts/fit_published_nvls.py``) on one published curve,
Azure's ND H100 v5 all-reduces from 1 MiB (NCCL 2.18.5; 14 sizes, 1 MiB-8 GiB); the rest is
held out (its ND H200 v5 curve under NCCL 2.20.5, marin's 1 GiB time; docs/validation.md,
"Published nccl-tests runs"). The fit is flat along a ridge: ``tau`` from 1 to 5 us with its
best ``D`` puts the training rows within 2.0-3.2 % and the held-out H200's from 1 MiB within
4.1-5.3 % (the fit: 4.05 us and 1.40 loops, 2.0 % and 5.1 %). docs/models/collective.md,
"NVLink SHARP".
"""

from __future__ import annotations

from opmodel.core.errors import UnsupportedOpError
from opmodel.core.op import LocalOp
from opmodel.core.views import CollectiveView
from opmodel.hardware.interconnect import InterconnectSpec
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.shared.collective_estimate import LinkTime

__all__ = [
    "NVLS_FILL_LOOPS",
    "NVLS_LATENCY_S",
    "NVLS_LOOP_SYNC_S",
    "nvls_channels",
    "nvls_chunk_bytes",
    "nvls_inverse_rate",
    "nvls_loop_sync_s",
    "nvls_reference_loop_bytes",
    "nvls_seconds",
    "nvls_timing",
    "nvls_usable",
]

NVLS_LATENCY_S = 23e-6
"""The latency NCCL's tuning model gives an NVLink SHARP collective inside one node: its
``hwLat`` for NVLS over NVLink, 23 us (src/graph/tuning.cc, NVIDIA/nccl at commit b647562)."""

NVLS_LOOP_SYNC_S = 4.05e-6
"""``tau_8``: each loop's synchronisation on a channel with 8 heads. Fitted with
:data:`NVLS_FILL_LOOPS` on Azure's ND H100 v5 curve from 1 MiB (module docstring;
scripts/fit_published_nvls.py); ``n`` heads take ``tau_8 n / 8`` (:func:`nvls_loop_sync_s`)."""

_FITTED_HEADS = 8  # the heads (ranks) of the curve tau_8 was fitted on

NVLS_FILL_LOOPS = 1.4
"""``D``: loops the pipeline takes to fill. Fitted with :data:`NVLS_LOOP_SYNC_S`."""

_MAX_CHUNK_BYTES = 128 * 1024  # NCCL_NVLS_CHUNKSIZE's default (src/transport/nvls.cc)
# (loops of the larger chunk below which NCCL takes the smaller one, the smaller one), in order
_CHUNK_CUTS = ((64, 64 * 1024), (8, 32 * 1024), (2, 16 * 1024))


def nvls_channels(architecture: str | None) -> int:
    """NCCL's NVLS channels: 24 on sm_100 and later (one NVLink domain), else 16 (sm_90)."""
    digits = (architecture or "").removeprefix("sm")
    return 24 if digits.isdigit() and int(digits) >= 100 else 16


def nvls_chunk_bytes(buffer_bytes: int, concurrent: int) -> int:
    """NCCL's NVLS chunk for ``buffer_bytes`` over ``concurrent`` (channel, head) pairs."""
    chunk = _MAX_CHUNK_BYTES
    for loops, smaller in _CHUNK_CUTS:
        if buffer_bytes < loops * concurrent * chunk:
            chunk = smaller
    return chunk


def nvls_seconds(
    placed: tuple[int, int, int],
    inverse_rate_s_per_byte: float,
    sync_s: float,
    fill_loops: float = NVLS_FILL_LOOPS,
) -> tuple[float, float]:
    """``(a + D (tau + c' C n / R_inf), L tau + S / R_inf)``: the latency and the transfer of
    ``placed`` = (buffer bytes, ``concurrent`` (channel, head) pairs, their chunk from
    :func:`nvls_chunk_bytes`) at ``1 / R_inf`` (``inverse_rate_s_per_byte``), each loop's
    synchronisation ``tau`` = ``sync_s`` (:func:`nvls_loop_sync_s` of the heads); ``D``
    defaults to the fitted one."""
    buffer_bytes, concurrent, chunk = placed
    loops = max(1.0, buffer_bytes / (concurrent * chunk))
    filled = min(chunk, buffer_bytes / concurrent)  # a lone, partial loop splits the buffer
    latency = NVLS_LATENCY_S + fill_loops * (sync_s + filled * concurrent * inverse_rate_s_per_byte)
    return latency, loops * sync_s + buffer_bytes * inverse_rate_s_per_byte


def nvls_loop_sync_s(heads: int, sync_at_8_s: float = NVLS_LOOP_SYNC_S) -> float:
    """``tau = tau_8 n / 8``: a loop's synchronisation grows with its ``n`` heads, each of whose
    credits the scatter and the gather wait on (module docstring)."""
    return sync_at_8_s * heads / _FITTED_HEADS


def nvls_reference_loop_bytes(hardware: HardwareSpec, spec: InterconnectSpec) -> int:
    """Bytes one loop of all channels moves where the config's NVLS rate was measured: the
    architecture's channels x the node's ``devices_per_node`` heads x 128 KiB chunks."""
    return nvls_channels(hardware.architecture) * spec.devices_per_node * _MAX_CHUNK_BYTES


def nvls_inverse_rate(rate_bytes_per_s: float, loop_bytes: int, sync_s: float) -> float:
    """``1 / R_inf = 1 / R - tau / loop_bytes``: the config's rate without the loops'
    synchronisation, ``loop_bytes`` from :func:`nvls_reference_loop_bytes` and ``tau`` =
    ``sync_s`` that of the reference's heads (module docstring)."""
    return 1.0 / rate_bytes_per_s - sync_s / loop_bytes


def _inverse_rate(spec: InterconnectSpec, hardware: HardwareSpec) -> float | None:
    """``1 / R_inf`` from the config's NVLS rate, or None where it has none or where the rate
    would need more than twice itself between synchronisations (module docstring)."""
    rate = spec.nvls_bandwidth_bytes_per_s
    if rate is None:
        return None
    loop_bytes = nvls_reference_loop_bytes(hardware, spec)
    inverse = nvls_inverse_rate(rate, loop_bytes, nvls_loop_sync_s(spec.devices_per_node))
    return inverse if inverse * rate >= 0.5 else None


def nvls_usable(spec: InterconnectSpec, hardware: HardwareSpec) -> bool:
    """Whether ``hardware`` runs NVLS at all: a config NVLS rate its loops can deliver."""
    return _inverse_rate(spec, hardware) is not None


def nvls_timing(op: LocalOp, spec: InterconnectSpec, hardware: HardwareSpec) -> LinkTime:
    """The latency and rate of an NVLS all-reduce of ``op``'s buffer (module docstring)."""
    rate = spec.nvls_bandwidth_bytes_per_s
    if rate is None:
        raise UnsupportedOpError(
            f"op '{op.name}' (collective): algorithm nvls needs "
            f"interconnect.nvls_bandwidth_bytes_per_s, which hardware '{hardware.name}' does not "
            "give (NVLink SHARP: NVSwitch reduction, H100 and later boards)"
        )
    inverse = _inverse_rate(spec, hardware)
    if inverse is None:
        loop_bytes = nvls_reference_loop_bytes(hardware, spec)
        reference_sync = nvls_loop_sync_s(spec.devices_per_node)
        raise UnsupportedOpError(
            f"op '{op.name}' (collective): hardware '{hardware.name}' "
            f"interconnect.nvls_bandwidth_bytes_per_s {rate:.3g} is more than NCCL's NVLS "
            f"loops deliver with their synchronisation (accepted: under "
            f"{0.5 * loop_bytes / reference_sync:.3g} B/s)"
        )
    view = op.view
    assert isinstance(view, CollectiveView)
    size = view.buffer_bytes
    concurrent = nvls_channels(hardware.architecture) * view.ranks
    chunk = nvls_chunk_bytes(size, concurrent)
    latency, transfer = nvls_seconds(
        (size, concurrent, chunk), inverse, nvls_loop_sync_s(view.ranks)
    )
    return LinkTime.make(
        latency_s=latency,
        bandwidth_bytes_per_s=size / transfer,
        protocol="simple",
        algorithm="nvls",
        chunk_bytes=chunk,
    )
