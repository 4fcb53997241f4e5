"""Which case a sanitizer record belongs to: kernel name -> launches of that worker -> block -> case.

The launch ledger (:class:`harness.journal.LaunchRecord`) gives each launch's kernel name
(``coopcheck.launched_symbol(adapter, spec)``: the adapter's name of the kernel it launched, by default
``coopcheck.kernel_symbol(spec)``, contained in every backend's kernel name), its cases in block order (block ``b``
ran ``cases[b]``) and the worker pid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from harness import caseid
from harness.contracts import parse_block
from harness.journal import LaunchRecord, read_journal
from harness.sanitizer.records import SanitizerRecord


@dataclass(frozen=True)
class Launch:
    """One kernel launch as the ledger at ``ledger`` recorded it; ``control`` for a positive control."""

    kernel_name: str
    cases: tuple[str, ...]
    seq: int
    pid: int
    ledger: Path
    control: bool = False
    blocks: tuple[int, ...] = ()  # case index per block (several blocks run one case: its data patterns)

    def __str__(self) -> str:
        return f"launch {self.seq} of {self.kernel_name} (pid {self.pid}, {self.n_blocks} block(s))"

    @property
    def n_blocks(self) -> int:
        return len(self.blocks) if self.blocks else len(self.cases)

    def case_of_block(self, block: int) -> str | None:
        """The case that block ``block`` ran, or None past the grid."""
        if block >= self.n_blocks:
            return None
        return self.cases[self.blocks[block] if self.blocks else block]


@dataclass(frozen=True)
class Target:
    launch: Launch
    case: str


@dataclass(frozen=True)
class Finding:
    """A record charged to ``targets``; ``note`` says how, when it is not one block of one launch."""

    record: SanitizerRecord
    targets: tuple[Target, ...]
    note: str = ""


@dataclass(frozen=True)
class Unmapped:
    record: SanitizerRecord
    reason: str


def read_launches(path: Path, *, control: bool = False) -> list[Launch]:
    """The launch ledger lines of one journal (or control ledger)."""
    return [Launch(r.kernel_name, r.cases, r.seq, r.pid, path, control, r.blocks)
            for r in read_journal(path) if isinstance(r, LaunchRecord)]


def attribute(record: SanitizerRecord, launches: list[Launch]) -> Finding | Unmapped:
    """Map ``record`` onto ``launches`` (those of the worker process whose sanitizer wrote it).

    Candidates are the launches whose kernel name a device frame contains (the longest such name
    wins, so ``..._ipt16_...`` never also matches ``..._ipt1_...``); the record's block index then
    picks each candidate's case of that block, keeping only launches that have that block and
    whose case's block shape holds the record's threads (and, for a kernel name with a
    ``__b16x8`` shape suffix, that shape). Several launches left is an ambiguity: the record is
    charged to each, and the note says so. A record without block index is charged to every case
    of its candidates. A record naming no launched kernel, or whose block fits none, is unmapped.
    """
    named = _named(record, launches)
    if not named:
        functions = ", ".join(record.functions) or "none"
        return Unmapped(record, f"no launch of its worker runs a kernel its device frames name (functions: "
                                f"{functions}; {len(launches)} launch(es) in the ledger)")
    kernels = " / ".join(sorted({launch.kernel_name for launch in named}))
    if record.block is None:
        targets = tuple(Target(launch, case) for launch in named for case in launch.cases)
        return Finding(record, targets, f"the record has no block index: charged to all {len(targets)} "
                                        f"case(s) of {len(named)} launch(es) of {kernels}")
    x, y, z = record.block
    fitting = tuple(Target(launch, case) for launch in named
                    if y == z == 0 and (case := launch.case_of_block(x)) is not None and _fits(record, launch, case))
    if not fitting:
        return Unmapped(record, f"block ({x},{y},{z}) with these threads fits none of the {len(named)} "
                                f"launch(es) of {kernels}")
    if len(fitting) == 1:
        return Finding(record, fitting)
    seqs = ", ".join(str(t.launch.seq) for t in fitting)
    return Finding(record, fitting, f"ambiguous: block {x} of {len(fitting)} launches of {kernels} "
                                    f"(seq {seqs}) fits; charged to each")


def _named(record: SanitizerRecord, launches: list[Launch]) -> list[Launch]:
    """Launches whose kernel name a device frame contains; a name inside a longer matched one loses."""
    names = {launch.kernel_name for launch in launches
             if any(launch.kernel_name in function for function in record.functions)}
    names = {name for name in names if not any(name != other and name in other for other in names)}
    return [launch for launch in launches if launch.kernel_name in names]


def _fits(record: SanitizerRecord, launch: Launch, case_id: str) -> bool:
    """Whether block ``case_id`` can have produced the record: its shape holds the threads and the name."""
    if launch.control:
        return True
    params = dict(caseid.parse(case_id)[2])
    if "block" not in params:
        return True
    shape = (*parse_block(params["block"]), 1, 1)[:3]
    if any(t[axis] >= shape[axis] for t in record.threads for axis in range(3)):
        return False
    suffix = re.compile(re.escape(launch.kernel_name) + r"__b([0-9]+(?:x[0-9]+)*)")
    shapes = {m.group(1) for function in record.functions for m in suffix.finditer(function)}
    return not shapes or params["block"] in shapes
