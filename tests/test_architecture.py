"""The architectural rule made executable: the engine, journal, sanitizer attribution, expectations, reports
and pytest plugin name no operation family; they reach one only through its contract's oracle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parent.parent / "harness"
FAMILY_FREE = ["engine.py", "journal.py", "expectations.py", "plugin.py", "sanitizer", "report"]
#: What naming a family looks like: its operations, its kernel ABI, its oracle module.
FORBIDDEN = ("block.load", "block.store", "LoadBatch", "StoreBatch", "block_load_store", "is_load")


def _sources() -> list[Path]:
    return sorted(p for name in FAMILY_FREE for p in ([HARNESS / name] if name.endswith(".py")
                                                       else (HARNESS / name).rglob("*.py")))


def _names(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string constant, identifier, attribute and imported module of a module, with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom):
            found += [(node.lineno, node.module or "")] + [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    """Lines of docstrings: a docstring's example may show a case id."""
    return {body[0].value.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and (body := node.body) and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)}


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(HARNESS)))
def test_family_free_module_names_no_family(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstrings(tree)
    hits = [f"{path.relative_to(HARNESS.parent)}:{line}: {text!r}" for line, text in _names(tree)
            if line not in docs and any(word in text for word in FORBIDDEN)]
    assert not hits, "a family-free module names an operation family:\n" + "\n".join(hits)


def test_the_scan_sees_every_family_free_module() -> None:
    assert len(_sources()) >= 6 and all(p.is_file() for p in _sources())
    assert sorted(_names(ast.parse("from harness.oracles import block_load_store\nx.is_load\n'block.load'"))) == [
        (1, "block_load_store"), (1, "harness.oracles"), (2, "is_load"), (2, "x"), (3, "block.load")]
