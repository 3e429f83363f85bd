"""text_file, read_text_file, read_json_file: every failure a one-line ConfigError naming the
file; a spreadsheet's byte-order mark dropped."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from opmodel.core.errors import ConfigError
from opmodel.parsing.textfile import read_json_file, read_text_file, text_file


def test_byte_order_mark_is_not_part_of_the_first_column(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfname,kind\nx,gemm\n")  # Excel's "CSV UTF-8"
    with text_file(path) as handle:
        assert list(csv.DictReader(handle)) == [{"name": "x", "kind": "gemm"}]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfen\x00a\x00", r"u\.csv: not UTF-8 text \(byte 0: invalid start byte\); save"),
        (b'a\n"' + b"x" * 200_000 + b"\n", r"u\.csv: malformed CSV \(field larger than field"),
    ],
)
def test_undecodable_or_malformed_csv_names_the_file(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "u.csv"
    path.write_bytes(content)  # a UTF-16 export; a quote that never closes
    with pytest.raises(ConfigError, match=message) as info, text_file(path) as handle:
        list(csv.reader(handle))  # the csv module reads lazily: the error comes in the block
    assert "\n" not in str(info.value)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"absent\.json: file not found$"):
        read_text_file(tmp_path / "absent.json")
    with pytest.raises(ConfigError, match=r": is a directory, expected a file$"):
        read_text_file(tmp_path)


def test_other_errors_in_the_block_pass_through(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(KeyError), text_file(path):
        raise KeyError("not a file problem")


def test_json_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"cases": [\n  1,\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"run\.json: not JSON \(Expecting value, line 3\)$"):
        read_json_file(path)
    path.write_text('{"cases": []}', encoding="utf-8")
    assert read_json_file(path) == {"cases": []}
