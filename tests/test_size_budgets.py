"""DESIGN.md's size budgets, checked: every Python module of the repository (library, tests,
scripts, benchmarks) holds at most 300 lines, so none nears the 500-line hard cap, and a
library function at most 40 (its docstring not counted)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

MODULE_LINES = 300
FUNCTION_LINES = 40
_LIBRARY = REPO / "src" / "opmodel"
_EVERY = ("src", "tests", "scripts", "benchmarks")


def _python_files(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py") if ".venv" not in p.parts)


def function_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from ``def`` to the last statement, less the docstring's."""
    lines = (node.end_lineno or node.lineno) - node.lineno + 1
    docstring = ast.get_docstring(node, clean=False)
    return lines - (docstring.count("\n") + 1 if docstring is not None else 0)


def test_function_lines_by_hand() -> None:
    """A three-line body under a two-line docstring: ``def``, three statements = 4 lines."""
    source = 'def f():\n    """One.\n    Two."""\n    a = 1\n    b = 2\n    return a + b\n'
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert function_lines(node) == 4


def test_every_module_keeps_its_budget() -> None:
    over = {
        str(p.relative_to(REPO)): n
        for p in _python_files(*(REPO / root for root in _EVERY))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    assert not over, f"modules over {MODULE_LINES} lines (split by concern): {over}"


def test_library_functions_keep_their_budget() -> None:
    over = {}
    for path in _python_files(_LIBRARY):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = function_lines(node)
                if lines > FUNCTION_LINES:
                    over[f"{path.relative_to(REPO)}:{node.lineno} {node.name}"] = lines
    assert not over, f"functions over {FUNCTION_LINES} lines: {over}"
