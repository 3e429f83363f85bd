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


def _fake_cupy(
    walked: list[tuple[int, int, frozenset[int]]], l2_bytes: int = 60 * 2**20
) -> ModuleType:
    """``RawKernel`` runs the chase in Python: each CTA follows its region's chain."""
    cp = ModuleType("cupy")
    cp.uint64, cp.uint32, cp.int32 = np.uint64, np.uint32, np.int32  # type: ignore[attr-defined]
    cp.zeros, cp.asarray = np.zeros, np.asarray  # type: ignore[attr-defined]
    cp.asnumpy = np.asarray  # type: ignore[attr-defined]
    props = {"name": b"Fake H200", "multiProcessorCount": 4, "l2CacheSize": l2_bytes}
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
    assert script.main([*argv, "--survival-fractions", "none"]) == 0
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


def test_survival_sweep_walks_each_region_whole_then_its_first_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walked: list[tuple[int, int, frozenset[int]]] = []
    l2_bytes = 64 * 2**10  # 512 lines of 128 bytes
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(walked, l2_bytes))
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml())
    script = load_script("pointer_chase")
    out = tmp_path / "chase.json"
    argv = ["--output", str(out), "--hops", "50", "--dram-bytes", str(4 * 2**20)]
    assert script.main([*argv, "--survival-fractions", "0.5,1"]) == 0
    tests = json.loads(out.read_text())["tests"]
    half, whole = tests["survival_one_sm_050"], tests["survival_all_sms_100"]
    assert half["region_bytes"] == 256 * 128 and whole["region_bytes"] == 512 * 128
    assert half["warm_ctas"] == 1 and whole["warm_ctas"] == 4 and whole["ctas"] == 1
    assert half["warm_hops"] == 256 and whole["warm_hops"] == 512
    assert half["hops"] == 32 and whole["hops"] == 50  # at most an eighth of the region
    assert half["l2_fraction"] == 0.5 and whole["l2_fraction"] == 1.0
    assert whole["warm_sm_ids"] == [0, 1, 2, 3] and whole["sm_ids"] == [0]
    assert whole["cycles_per_hop_median"] == CYCLES_PER_HOP
    # the last walks: four CTAs over all 512 lines (the same lines), then one over its first 50
    *warm, timed = walked[-5:]
    assert all(words == 0 and len(seen) == 512 for words, _, seen in warm)
    assert len({seen for _, _, seen in warm}) == 1
    assert len(timed[2]) == 50 and timed[2] <= warm[0][2] and 0 in timed[2]


def test_bad_arguments(tmp_path: Path) -> None:
    script = load_script("pointer_chase")
    with pytest.raises(SystemExit):
        script.main(["--output", str(tmp_path / "x.json"), "--hops", "0"])
    for fractions in ("0", "0.5,x", "9", ""):
        with pytest.raises(SystemExit):
            script.main(["--output", str(tmp_path / "x.json"), "--survival-fractions", fractions])
