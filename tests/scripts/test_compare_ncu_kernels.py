"""scripts/compare_ncu_kernels.py on the shipped H200 ncu folders: the GEMMs' DRAM reads and
kernel times against the documented figures (docs/validation.md, "GEMM DRAM traffic" and
"Kernel-only, against ncu")."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from opmodel.hardware import load_hardware
from tests.scripts.loader import load_script

REPO = Path(__file__).resolve().parents[2]
_LABEL = re.compile(r"^gemm \w+ m=(\d+) n=(\d+) k=(\d+)")


def test_h200_gemm_dram_reads_and_times_match_the_docs() -> None:
    """437 of the 604 H200 GEMMs read DRAM within 10 % of ncu's counters (median 2.3 %; 331
    and 7.2 % before the persistent kernels' rounds), 143 of the 239 large ones (median
    4.8 %); their kernel times 10.9 % MAPE. With a little slack."""
    script = load_script("compare_ncu_kernels")
    spec = load_hardware("h200_sxm")
    known = script._known_cases([])
    folders = sorted(p.parent for p in (REPO / "data/measured").glob("*/ncu_kernels.csv"))
    cases = [
        c
        for folder in folders
        for c in script._cases(folder, spec, "effective_roofline", known)
        if c.kind == "gemm"
    ]
    assert len(cases) == 604
    errors = [abs(c.predicted_read_bytes / c.measured_read_bytes - 1) for c in cases]
    assert sum(e <= 0.1 for e in errors) >= 430 and statistics.median(errors) <= 0.03
    large = []
    for c, e in zip(cases, errors, strict=True):
        match = _LABEL.match(c.label)
        assert match is not None
        m, n, k = (int(x) for x in match.groups())
        if 2 * m * n * k >= 1e11:
            large.append(e)
    assert len(large) == 239 and sum(e <= 0.1 for e in large) >= 138
    times = [abs(c.ratio - 1) for c in cases]
    assert statistics.mean(times) <= 0.115


def test_the_table_splits_a_kind_by_kernel_count(capsys: pytest.CaptureFixture[str]) -> None:
    """cuBLAS ran 463 of the GEMMs as one kernel and 141 with split-K's reduce kernel after it;
    kinds whose cases all ran one kernel count get no split lines."""
    script = load_script("compare_ncu_kernels")
    assert script.main([]) == 0
    lines = {line[:28].strip(): line[28:].split() for line in capsys.readouterr().out.splitlines()}
    assert lines["gemm: 1 kernel"][0] == "463" and lines["gemm: 2 kernels"][0] == "141"
    assert lines["gemm"][0] == "604"
    assert not any(name.startswith("softmax:") for name in lines)
