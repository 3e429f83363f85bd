"""scripts/pointer_chase.py with stand-in CuPy and NVML modules (no GPU): the chains are
single cycles over every line, the walks follow them, and the JSON says what was measured."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest

from tests.scripts.loader import load_script

CYCLES_PER_HOP = 300


class _Event:
    def record(self) -> None: ...
    def synchronize(self) -> None: ...


class _Device:
    def __init__(self, *args: int) -> None: ...
    def use(self) -> None: ...
    def synchronize(self) -> None: ...


def _fake_cupy(walked: list[tuple[int, int, frozenset[int]]]) -> ModuleType:
    """``RawKernel`` runs the chase in Python: each CTA follows its region's chain."""
    cp = ModuleType("cupy")
    cp.uint64, cp.uint32, cp.int32 = np.uint64, np.uint32, np.int32  # type: ignore[attr-defined]
    cp.zeros, cp.asarray = np.zeros, np.asarray  # type: ignore[attr-defined]
    cp.asnumpy = np.asarray  # type: ignore[attr-defined]
    props = {"name": b"Fake H200", "multiProcessorCount": 4, "l2CacheSize": 60 * 2**20}
    cp.cuda = SimpleNamespace(  # type: ignore[attr-defined]
        Device=_Device,
        Event=_Event,
        get_elapsed_time=lambda start, stop: 0.5,  # ms
        runtime=SimpleNamespace(getDeviceProperties=lambda device: props),
    )

    def raw_kernel(source: str, name: str) -> Any:
        assert "ld.global.cg" in source and name == "chase"

        def run(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
            chain, words, start, hops, timed, cycles, smid, sink = args
            for cta in range(grid[0]):
                p, seen = int(start), set()
                for _ in range(int(hops)):
                    seen.add(p)
                    p = int(chain[int(words) * cta + p])
                walked.append((int(words), int(hops), frozenset(seen)))
                if timed:
                    cycles[cta] = CYCLES_PER_HOP * int(hops)
                    smid[cta] = cta
                sink[cta] = p

        return run

    cp.RawKernel = raw_kernel  # type: ignore[attr-defined]
    return cp


def _fake_nvml() -> ModuleType:
    nvml = ModuleType("pynvml")
    nvml.nvmlInit = lambda: None  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetHandleByIndex = lambda device: 0  # type: ignore[attr-defined]
    nvml.NVML_CLOCK_SM = 0  # type: ignore[attr-defined]
    nvml.nvmlDeviceGetClockInfo = lambda handle, clock: 1980  # type: ignore[attr-defined]
    return nvml


def test_chains_are_one_cycle_over_every_line() -> None:
    script = load_script("pointer_chase")
    rng = np.random.default_rng(0)
    for page_lines in (None, 4):
        words = script._chain(np, 10, rng, page_lines)
        p, visited = 0, []
        for _ in range(10):
            visited.append(p // 32)
            p = int(words[p])
        assert sorted(visited) == list(range(10)) and p == 0
    local = script._chain(np, 8, rng, 4)
    p, pages = 0, []
    for _ in range(8):
        pages.append(p // 32 // 4)
        p = int(local[p])
    # around the cycle the page changes twice: each page's lines are visited in one run
    assert sum(pages[i] != pages[i - 1] for i in range(8)) == 2


def test_run_with_stand_ins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[tuple[int, int, frozenset[int]]] = []
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(walked))
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml())
    script = load_script("pointer_chase")
    out = tmp_path / "chase.json"
    argv = ["--output", str(out), "--hops", "50", "--dram-bytes", str(4 * 2**20)]
    assert script.main(argv) == 0
    result = json.loads(out.read_text())
    assert result["gpu"] == "Fake H200" and result["sms"] == 4
    per_sm = result["tests"]["l2_per_sm"]
    assert per_sm["ctas"] == 4 and per_sm["sm_ids"] == [0, 1, 2, 3]
    assert per_sm["warm_hops"] == 1024  # the untimed walk covers the 128 KiB region
    assert per_sm["cycles_per_hop_median"] == CYCLES_PER_HOP
    assert per_sm["ns_per_hop_events"] == pytest.approx(0.5e6 / 50)
    dram = result["tests"]["dram_random"]
    assert dram["warm_hops"] == 50 and dram["region_bytes"] == 4 * 2**20
    # the DRAM tests' timed walk starts where the untimed one stopped, on lines it did not visit
    dram_words = 4 * 2**20 // 4
    warm, timed = [seen for words, _, seen in walked if words == dram_words][-4:-2]
    assert len(warm) == len(timed) == 50 and not warm & timed


def test_bad_arguments(tmp_path: Path) -> None:
    script = load_script("pointer_chase")
    with pytest.raises(SystemExit):
        script.main(["--output", str(tmp_path / "x.json"), "--hops", "0"])
