"""The architectural rules made executable: the engine, journal, sanitizer attribution, expectations, reports
and pytest plugin name no operation family (they reach one only through its contract's oracle); a backend
never imports another, and the harness imports none (backends arrive through entry points)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "harness"
BACKENDS = ROOT / "backends"
FAMILY_FREE = ["engine.py", "journal.py", "expectations.py", "plugin.py", "sanitizer", "report"]
#: What naming a family looks like: its operations, its kernel ABI, its oracle module.
FORBIDDEN = ("block.load", "block.store", "LoadBatch", "StoreBatch", "block_load_store", "is_load",
             "block.exchange", "ExchangeBatch", "block_exchange", "block.shuffle", "ShuffleBatch", "block_shuffle",
             "block.reduce", "ReduceBatch", "block_reduce", "block.scan", "ScanBatch", "block_scan",
             "warp.reduce", "WarpReduceBatch", "warp_reduce", "warp.scan", "WarpScanBatch", "warp_scan")


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


#: The dependency-free base package every backend and the harness may import; any other ``coopcheck_*`` (or
#: distribution ``coopcheck-*``) but a backend's own belongs to a backend.
BASE = "coopcheck"
#: A string that names a module (an ``import_module`` argument, a ``require`` table's key) of a backend.
BACKEND_MODULE = re.compile(r"coopcheck_\w+(?:\.\w+)*")


def _backend_folders() -> list[Path]:
    return sorted(p.parent for p in BACKENDS.glob("*/pyproject.toml"))


def _packages(folder: Path) -> list[Path]:
    """The import packages a backends/<name> distribution ships (``src/<package>/__init__.py``)."""
    return sorted(p.parent for p in folder.glob("src/*/__init__.py"))


def _modules_named(tree: ast.AST) -> list[tuple[int, str]]:
    """Every module a module imports (absolute imports) or names in a string outside its docstrings."""
    docs = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.lineno not in docs
              and BACKEND_MODULE.fullmatch(node.value)):
            found.append((node.lineno, node.value))
    return found


def _foreign(paths: list[Path], own: str | None) -> list[str]:
    """``file:line: module`` for each backend module (one not of the base nor of ``own``) that ``paths`` name."""
    hits = []
    for path in paths:
        for line, module in _modules_named(ast.parse(path.read_text(), str(path))):
            root = module.split(".")[0]
            if root.startswith(BASE + "_") and root != own:
                hits.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{line}: {module}")
    return hits


@pytest.mark.parametrize("package", [p for f in _backend_folders() for p in _packages(f)],
                         ids=lambda p: p.name)
def test_a_backend_imports_no_other_backend(package: Path) -> None:
    hits = _foreign(sorted(package.rglob("*.py")), package.name)
    assert not hits, f"{package.name} imports another backend (only {BASE!r} is shared):\n" + "\n".join(hits)


def test_the_harness_imports_no_backend() -> None:
    hits = _foreign(sorted(HARNESS.rglob("*.py")), None)
    assert not hits, "the harness imports a backend (backends arrive through entry points):\n" + "\n".join(hits)


def _requirements(pyproject: Path) -> tuple[str, list[str]]:
    """A pyproject's distribution name and every distribution it requires, extras included (canonical)."""
    project = tomllib.loads(pyproject.read_text())["project"]
    texts = [*project.get("dependencies", ()), *(t for ts in project.get("optional-dependencies", {}).values()
                                                   for t in ts)]
    return canonicalize_name(project["name"]), [canonicalize_name(Requirement(t).name) for t in texts]


@pytest.mark.parametrize("pyproject", [ROOT / "pyproject.toml", *(f / "pyproject.toml" for f in _backend_folders())],
                         ids=lambda p: str(p.parent.relative_to(ROOT)) if p.parent != ROOT else "harness")
def test_no_distribution_depends_on_a_backend(pyproject: Path) -> None:
    name, required = _requirements(pyproject)
    backends = sorted({r for r in required if r.startswith(BASE + "-") and r != name})
    assert not backends, (f"{pyproject.relative_to(ROOT)}: {name} requires {backends}: only the base {BASE!r} "
                          "is shared")


def test_the_import_scan_sees_every_backend() -> None:
    folders = _backend_folders()
    names = {f.name for f in folders}
    assert {"cccl", "numba", "cutlass", "rustfatbin", BASE} <= names
    assert all(_packages(f) for f in folders), "a backends/<name> distribution with no src/<package>"
    assert {p.name for f in folders for p in _packages(f)} >= {BASE, "coopcheck_cccl", "coopcheck_numba"}
    tree = ast.parse('"""coopcheck_numba in a docstring"""\nimport coopcheck_numba.kernels\n'
                     'from coopcheck_cutlass import kernels\nfrom . import sibling\nx = {"coopcheck_rustfatbin": 1}\n'
                     'y = "coopcheck_numba is a word in a sentence"')
    assert sorted(_modules_named(tree)) == [(2, "coopcheck_numba.kernels"), (3, "coopcheck_cutlass"),
                                            (5, "coopcheck_rustfatbin")]


def test_the_import_scan_tells_own_and_base_from_foreign(tmp_path: Path) -> None:
    module = tmp_path / "adapter.py"
    module.write_text("import coopcheck\nfrom coopcheck.load_store import OPERATIONS\nimport coopcheck_cccl.cache\n"
                      "from coopcheck_numba.kernels import launch\n")
    assert _foreign([module], "coopcheck_cccl") == ["adapter.py:4: coopcheck_numba.kernels"]
    assert len(_foreign([module], None)) == 2  # the harness owns no backend package
