"""Data files the validators and the sweep read: a file that is not UTF-8, not JSON, or a CSV
row with the wrong number of cells ends the command with one line naming the file; a
spreadsheet's byte-order mark is read through."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from opmodel.batch.tableio import read_table
from opmodel.cli import main
from opmodel.core.errors import ConfigError
from opmodel.validation.artifact import load_runs, predict_runs
from opmodel.validation.artifact_perop import load_measured_ops
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.gemm_traffic import compare_dram_bytes
from opmodel.validation.op_rows import load_op_rows

REPO = Path(__file__).resolve().parents[2]
UTF16 = "name,kind\nx,gemm\n".encode("utf-16")  # a spreadsheet's "Unicode text" export


@pytest.mark.parametrize("loader", [load_op_rows, load_gemm_rows, load_measured_ops])
def test_a_csv_that_is_not_utf8_is_named(tmp_path: Path, loader: object) -> None:
    (tmp_path / "export.csv").write_bytes(UTF16)
    with pytest.raises(ConfigError, match=r"export\.csv: not UTF-8 text \(byte 0: ") as info:
        loader(tmp_path)  # type: ignore[operator]
    assert "\n" not in str(info.value)


def test_cli_says_it_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "export.csv").write_bytes(UTF16)
    assert main(["validate-ops", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "export.csv: not UTF-8 text" in err


def test_sweep_table_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "ops.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (REPO / "examples" / "sweep_llama3_8b.csv").read_bytes())
    table = read_table(path)
    assert list(table)[:2] == ["name", "kind"]  # not "\ufeffname"


def test_ncu_row_with_too_few_cells(tmp_path: Path) -> None:
    folder = tmp_path / "rapid_llm_ncu_gemm"
    folder.mkdir()
    shipped = REPO / "data" / "rapid_llm_ncu_gemm" / "ncu_metrics_results.csv"
    lines = shipped.read_text(encoding="utf-8").splitlines()
    columns = len(lines[0].split(","))
    (folder / shipped.name).write_text(f"{lines[0]}\n{lines[1][:12]}\n", encoding="utf-8")
    cells = len(lines[1][:12].split(","))
    with pytest.raises(ConfigError, match=rf"line 2: {cells} cells for {columns} columns$"):
        compare_dram_bytes(tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[[{}, ", r"\.json: not JSON \(Expecting value, line 1\)$"),
        (
            '{"ops": []}',
            r"\.json: expected a JSON list of \[params, tags\] op entries \(got a dict\)$",
        ),
    ],
)
def test_workload_op_list_that_is_not_a_json_list(
    tmp_path: Path, content: str, message: str
) -> None:
    shipped = REPO / "data" / "energaizer"
    root = tmp_path / "energaizer"
    shutil.copytree(shipped / "measurements" / "a10", root / "measurements" / "a10")
    shutil.copytree(shipped / "workloads", root / "workloads")
    runs, _ = load_runs(root)
    runs[0].ops_file.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        predict_runs(runs[:1], "roofline")
