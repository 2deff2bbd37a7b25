"""The import rules of house-style.md, checked by parsing every module's imports, and its small
pieces: every module opens with a docstring and stays under the house's size."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STDLIB = set(sys.stdlib_module_names)
MAX_MODULE_LINES = 400
"""house-style.md, "Small pieces": modules under ~400 lines (every one is, since the forty-ninth
session)."""
PACKAGES = ("companion", "vision", "scripts", "tests")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _py_files(*folders: str) -> list[Path]:
    files: list[Path] = []
    for folder in folders:
        files.extend(sorted((ROOT / folder).rglob("*.py")))
    return files


def test_rules_core_imports_only_stdlib_and_itself() -> None:
    files = _py_files("companion/rules")
    assert files, "companion/rules has no modules"
    bad = []
    for path in files:
        for name in _imports(path):
            top = name.split(".")[0]
            if top in STDLIB or name.startswith("companion.rules"):
                continue
            bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, "\n".join(bad)


def test_only_vision_runtime_imports_onnxruntime() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in _py_files("companion", "vision", "scripts", "tests")
        if any(n.split(".")[0] == "onnxruntime" for n in _imports(p))
        and p != ROOT / "vision" / "runtime.py"
    ]
    assert not offenders, offenders


def test_torch_only_in_scripts() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in _py_files("companion", "vision", "tests")
        if any(n.split(".")[0] == "torch" for n in _imports(p))
    ]
    assert not offenders, offenders


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    """The parser above must actually find imports, or the checks prove nothing."""
    bad = tmp_path / "m.py"
    bad.write_text("import numpy\nfrom flask import Flask\nimport os\n")
    assert _imports(bad) == {"numpy", "flask", "os"}


def _without_docstring(path: Path) -> bool:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))) is None


def _over_size(path: Path) -> int | None:
    n = len(path.read_text(encoding="utf-8").splitlines())
    return n if n > MAX_MODULE_LINES else None


def test_every_module_opens_with_a_docstring_saying_what_it_owns() -> None:
    files = _py_files(*PACKAGES)
    assert len(files) > 100, "the packages' modules were not found"
    missing = [str(p.relative_to(ROOT)) for p in files if _without_docstring(p)]
    assert not missing, missing


def test_every_module_is_a_small_piece() -> None:
    big = [f"{p.relative_to(ROOT)}: {n} lines" for p in _py_files(*PACKAGES) if (n := _over_size(p))]
    assert not big, f"over {MAX_MODULE_LINES} lines (split by subject): {big}"


def test_the_size_and_docstring_checks_see_a_violation(tmp_path: Path) -> None:
    """A module with no docstring, and one a line too long, are both caught."""
    bare = tmp_path / "bare.py"
    bare.write_text("import os\n")
    assert _without_docstring(bare)
    long = tmp_path / "long.py"
    long.write_text('"""Owns nothing."""\n' + "x = 1\n" * MAX_MODULE_LINES)
    assert not _without_docstring(long)
    assert _over_size(long) == MAX_MODULE_LINES + 1
    long.write_text('"""Owns nothing."""\n' + "x = 1\n" * (MAX_MODULE_LINES - 1))
    assert _over_size(long) is None
