"""scripts/ncu_cases.py parse and scripts/compare_ncu_kernels.py on a hand-made ncu CSV."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind
from opmodel.core.errors import ConfigError
from opmodel.hardware import load_hardware
from opmodel.measure.plan import Case
from opmodel.models import get_model
from tests.scripts.loader import load_script

HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
    '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
    '"Metric Value"\n'
)
RMS = "rmsnorm bf16 rows=8 length=4096"
ADD = "elementwise bf16 rows=1 length=4096 add"


def _line(kernel_id: int, name: str, metric: str, value: str) -> str:
    return (
        f'"{kernel_id}","1","python3","h","{name}","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0",'
        f'"Command line profiler metrics","{metric}","","{value}"\n'
    )


def _kernel(kernel_id: int, name: str, ns: str, read: str) -> str:
    return "".join(
        _line(kernel_id, name, metric, value)
        for metric, value in (
            ("gpu__time_duration.sum", ns),
            ("dram__bytes_read.sum", read),
            ("dram__bytes_write.sum", "0"),
            ("sm__cycles_elapsed.avg.per_second", "1,800,000,000"),
        )
    )


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """Two cases: the rmsnorm ran two kernels (4 us and 2 us), the add one (3 us)."""
    spin = "cuda::<unnamed>::spin_kernel(long)"
    text = "==PROF== Connected to process 1\n" + HEADER
    text += _kernel(0, spin, "2,048", "0")
    text += _kernel(1, "void native::vectorized_layer_norm_kernel", "4,000", "65,536")
    text += _kernel(2, "void native::reduce", "2,000", "0")
    text += _kernel(3, spin, "2,048", "0")
    text += _kernel(4, "void native::vectorized_elementwise_kernel<8>", "3,000", "16,384")
    folder = tmp_path / "run"
    folder.mkdir()
    with gzip.open(folder / "ncu.csv.gz", "wt") as handle:
        handle.write(text)
    (folder / "ncu_labels.csv").write_text(
        f"index,label,kind,phase,tensors,attrs\n0,{RMS},rmsnorm,prefill,x,{{}}\n"
        f"1,{ADD},elementwise,prefill,x,{{}}\n"
    )
    return folder


def test_parse_attributes_kernels_to_cases_by_markers(run: Path) -> None:
    script = load_script("ncu_cases")
    out = run / "ncu_kernels.csv"
    assert (
        script.main(
            [
                "parse",
                "--ncu-csv",
                str(run / "ncu.csv.gz"),
                "--labels",
                str(run / "ncu_labels.csv"),
                "--output",
                str(out),
            ]
        )
        == 0
    )
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["index"], r["position"], r["gpu__time_duration.sum"]) for r in rows] == [
        ("0", "0", "4000"),
        ("0", "1", "2000"),
        ("1", "0", "3000"),
    ]
    assert rows[0]["label"] == RMS and rows[0]["dram__bytes_read.sum"] == "65536"


def test_parse_counts_markers_against_labels(run: Path, tmp_path: Path) -> None:
    script = load_script("ncu_cases")
    labels = tmp_path / "three.csv"
    labels.write_text((run / "ncu_labels.csv").read_text() + f"2,{ADD},elementwise,p,x,{{}}\n")
    with pytest.raises(ConfigError, match="2 marker kernels for 3 cases"):
        script.parse(run / "ncu.csv.gz", labels, tmp_path / "k.csv")


def test_compare_sums_a_cases_kernels_and_predicts_at_the_ncu_clock(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    load_script("ncu_cases").parse(
        run / "ncu.csv.gz", run / "ncu_labels.csv", run / "ncu_kernels.csv"
    )
    out = tmp_path / "cmp.csv"
    script = load_script("compare_ncu_kernels")
    assert script.main(["--data-dir", str(run.parent), "--output-csv", str(out)]) == 0
    with out.open() as handle:
        rows = {r["label"]: r for r in csv.DictReader(handle)}
    rms = rows[RMS]
    assert float(rms["measured_s"]) == pytest.approx(6e-6) and rms["kernels"] == "2"
    assert float(rms["clock_hz"]) == pytest.approx(1.8e9)
    op = Case(kind=OpKind.RMSNORM, dtype=DType.BF16, sizes=(("rows", 8), ("length", 4096))).op()
    expected = get_model("effective_roofline").predict(
        op, load_hardware("h200_sxm").at_clock(1.8e9)
    )
    assert float(rms["predicted_s"]) == pytest.approx(expected.latency_s)
    assert float(rows[ADD]["measured_dram_read_bytes"]) == 16384
    printed = capsys.readouterr().out
    assert "rmsnorm" in printed and "elementwise" in printed


def test_compare_names_a_case_no_grid_has(run: Path) -> None:
    load_script("ncu_cases").parse(
        run / "ncu.csv.gz", run / "ncu_labels.csv", run / "ncu_kernels.csv"
    )
    labels = run / "ncu_labels.csv"
    labels.write_text(labels.read_text().replace(RMS, "rmsnorm bf16 rows=3 length=5"))
    with pytest.raises(ConfigError, match=r"'rmsnorm bf16 rows=3 length=5' is in no shipped grid"):
        load_script("compare_ncu_kernels").main(["--data-dir", str(run.parent)])


def test_files_without_their_columns_are_named(run: Path, tmp_path: Path) -> None:
    script = load_script("ncu_cases")
    other = tmp_path / "other.csv"
    other.write_text("x,y\n1,2\n")
    with pytest.raises(ConfigError, match=r"not an ncu --csv file \(missing columns: ID, "):
        script.parse(other, run / "ncu_labels.csv", tmp_path / "k.csv")
    with pytest.raises(ConfigError, match=r"not an ncu_cases labels file .*index, label"):
        script.parse(run / "ncu.csv.gz", other, tmp_path / "k.csv")
    folder = tmp_path / "folder" / "run"
    folder.mkdir(parents=True)
    (folder / "ncu_kernels.csv").write_text("index,label\n0,x\n")
    with pytest.raises(ConfigError, match=r"ncu_kernels.csv: missing columns kernel, gpu__time"):
        load_script("compare_ncu_kernels").main(["--data-dir", str(folder.parent)])
