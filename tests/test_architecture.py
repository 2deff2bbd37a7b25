"""The import rules of house-style.md, checked by parsing every module's imports."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STDLIB = set(sys.stdlib_module_names)


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
