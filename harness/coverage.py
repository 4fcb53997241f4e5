"""The coverage manifest (``contracts/coverage.toml``): the evidence each backend must earn for each contract.

A cell is contract x backend x evidence kind; a qualification report is qualified only when it earns
every cell. Each kind names the lane that earns it and which of that lane's checks count (the
kinds of :func:`harness.report.verdicts.describe`): the host lane's rejections, compiles and
resource inspections, the runtime checks on a GPU, and the same run checks under each
compute-sanitizer tool, whose lane must also have seen its planted positive control.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.datafile import read_toml
from harness.errors import ContractError
from harness.lanes import SANITIZER_TOOLS

SCHEMA = 1


@dataclass(frozen=True)
class Evidence:
    """What earns one kind of cell: every ``checks`` case of a contract and backend in ``lane`` accepted and
    at least one passed; a failure whose rules all lie in ``tolerates`` does not cost this kind."""

    lane: str
    checks: str  # reject | compile | run
    text: str
    tolerates: frozenset[str] = frozenset()

    @property
    def tool(self) -> str | None:
        """The compute-sanitizer tool of a ``gpu-<tool>`` lane: its control must be seen too."""
        return self.lane.removeprefix("gpu-") if self.lane.startswith("gpu-") else None


EVIDENCE: dict[str, Evidence] = {
    "reject": Evidence("host", "reject", "bad static parameters refused with the named rule"),
    # A compile check that compiled but broke a resource rule fails with rule "resources" (harness.engine).
    "compile": Evidence("host", "compile", "every kernel point compiles for the target", frozenset({"resources"})),
    "resources": Evidence("host", "compile", "the resource rules hold in the compiled SASS"),
    "runtime": Evidence("gpu", "run", "the run checks pass on a GPU"),
    **{tool: Evidence(f"gpu-{tool}", "run", f"the run checks pass under compute-sanitizer {tool}, "
                                            "its planted control reported in the same run")
       for tool in SANITIZER_TOOLS},
}


@dataclass(frozen=True)
class Cell:
    contract: str
    backend: str
    evidence: str

    def __str__(self) -> str:
        return f"{self.contract} x {self.backend} x {self.evidence}"


def load_coverage(path: Path, shown: str | None = None) -> list[Cell]:
    """Every cell of the manifest at ``path`` (named ``shown`` in messages), in file order.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as fh:
    ...     _ = fh.write('schema = 1\\n[[cell]]\\ncontract = "block.load"\\nbackends = ["numba"]\\n'
    ...                  'evidence = ["runtime", "racecheck"]\\n')
    >>> [str(c) for c in load_coverage(Path(fh.name))]
    ['block.load x numba x runtime', 'block.load x numba x racecheck']
    """
    data = read_toml(path, ContractError)
    name = shown or str(path)
    if set(data) - {"schema", "cell"}:
        raise ContractError(f"{name}: unknown keys {sorted(set(data) - {'schema', 'cell'})}")
    if data.get("schema") != SCHEMA:
        raise ContractError(f"{name}: schema: expected {SCHEMA}")
    entries = data.get("cell")
    if not isinstance(entries, list) or not entries:
        raise ContractError(f"{name}: cell: expected [[cell]] tables (a manifest that asks nothing qualifies nothing)")
    cells: dict[Cell, None] = {}
    for i, entry in enumerate(entries):
        where = f"{name}: cell[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"contract", "backends", "evidence"}:
            raise ContractError(f"{where}: expected exactly contract, backends and evidence")
        if not isinstance(entry["contract"], str) or not entry["contract"]:
            raise ContractError(f"{where}.contract: expected a contract id, e.g. 'block.load'")
        for key in ("backends", "evidence"):
            values = entry[key]
            if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
                raise ContractError(f"{where}.{key}: expected a non-empty list of strings")
        unknown = [kind for kind in entry["evidence"] if kind not in EVIDENCE]
        if unknown:
            raise ContractError(f"{where}.evidence: {unknown} not among {', '.join(EVIDENCE)}")
        for backend in entry["backends"]:
            for kind in entry["evidence"]:
                cell = Cell(entry["contract"], backend, kind)
                if cell in cells:
                    raise ContractError(f"{where}: cell {cell} is listed twice")
                cells[cell] = None
    return list(cells)
