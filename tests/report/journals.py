"""Journals for the report tests, written with harness.journal as lanes would leave them, and case ids."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness import caseid
from harness.journal import (
    CaseRecord,
    ControlRecord,
    EndRecord,
    GroupRecord,
    JournalWriter,
    ResourceRecord,
    SessionRecord,
)
from harness.statuses import Status

KERNEL = [("dtype", "int32"), ("block", "32"), ("ipt", "4"), ("alg", "striped")]
ENV = {"python": "3.12.3", "packages": {"numpy": "2.4.1"}, "gpu": "NVIDIA H200, 575.57, 9.0"}
SCRIPT = '<script>document.body.setAttribute("data-pwned","1")</script> | out[3]=5'
WAIVER = "https://bugs.example/coop/1"
#: A wheel manifest as ``python -m wheels.build`` writes it: one pure wheel, one with a native fatbin.
MANIFEST = {"schema": 1, "source_commit": "d0e1f2a3b4c5d6e7", "dirty": False,
            "toolchain": {"python": "3.12.3", "build": "1.2.2"},
            "wheels": [{"name": "coopcheck-numba", "version": "0.1.0", "file": "coopcheck_numba-0.1.0-py3-none-any.whl",
                        "sha256": "b8b8b92cdc34979a01c43fdb57b4b5aa", "project": "backends/numba",
                        "build_backend": "setuptools (80.9.0)", "native": []},
                       {"name": "coopcheck-rustfatbin", "version": "0.1.0", "file": "coopcheck_rustfatbin-0.1.0.whl",
                        "sha256": "b0658c68345ed679181ed1a41305851972676f92", "project": "backends/rustfatbin",
                        "build_backend": "setuptools (80.9.0)",
                        "native": [{"artifact": "coopcheck_rustfatbin/data/coop_kernels.fatbin", "sha256": "b6cc",
                                    "capabilities": ["sm_80", "sm_90"],
                                    "tools": {"rustc": "rustc 1.96.0", "ptxas": "V13.0.88"}}]}]}
#: A journal line to write: a record, or (case id, status[, detail]) for a case record of the lane.
Entry = CaseRecord | ControlRecord | ResourceRecord | tuple[str, Status] | tuple[str, Status, str]


def case_id(backend: str, kind: str = "run", contract: str = "block.load", dtype: str = "int32",
            valid: str = "full") -> str:
    """An id of one kind of check: ``run`` (case axes), ``compile`` (kernel axes only) or ``reject``."""
    kernel: list[tuple[str, caseid.Value]] = [("dtype", dtype), *KERNEL[1:]]
    params = {"run": [*kernel, ("valid", valid), ("oob", "none"), ("offset", "zero")], "compile": kernel,
              "reject": [*kernel, ("reject", "warp_multiple")]}[kind]
    return caseid.render(contract, backend, params)


def wheel_id(backend: str) -> str:
    return caseid.render("wheel.install", backend, [("python", "3.12")])


def write_journal(path: Path, lane: str, verdicts: Iterable[Entry], *, ended: bool = True,
                  groups: Iterable[tuple[str, list[str]]] = (), env: dict[str, Any] | None = None,
                  backends: tuple[str, ...] = ("numba", "cutlass", "rustfatbin"), contracts_sha256: str = "",
                  profile: str = "pr") -> Path:
    with JournalWriter(path) as writer:
        writer.write(SessionRecord(lane, profile, 7, backends, ENV if env is None else env, time=1.0,
                                   contracts_sha256=contracts_sha256))
        for kernel, ids in groups:
            writer.write(GroupRecord(kernel, tuple(ids), pid=1))
        for verdict in verdicts:
            writer.write(CaseRecord(verdict[0], verdict[1], lane, *verdict[2:]) if isinstance(verdict, tuple)
                         else verdict)
        if ended:
            writer.write(EndRecord({}, time=2.0))
    return path


#: The shipped Load contract, and the kernel point of the reviewer's question (a 3-D block, uint8).
CONTRACT = Path(__file__).resolve().parents[2] / "contracts" / "block_load.toml"
QUESTION = {"alg": "warp_transpose", "block": "8x4x2", "dtype": "uint8"}


def kernel(alg: str = "direct", block: str = "32", dtype: str = "int32") -> list[tuple[str, caseid.Value]]:
    return [("dtype", dtype), ("block", block), ("ipt", "4"), ("alg", alg)]


def run_id(offset: str = "zero", **axes: str) -> str:
    """A numba Load run check of the kernel point ``axes`` (see :func:`kernel`)."""
    return caseid.render("block.load", "numba", [*kernel(**axes), ("valid", "full"), ("oob", "none"),
                                                 ("offset", offset)])


def compile_id(**axes: str) -> str:
    return caseid.render("block.load", "numba", kernel(**axes))


def measured(lane: str, shared: int, forbidden: dict[str, int], **axes: str) -> ResourceRecord:
    """What a host lane records of one kernel: shared memory and a barrier when ``shared``, else none."""
    figures = {"registers": 20, "shared_bytes": shared, "barriers": 1 if shared else 0, "local_bytes": 0,
               "stack_bytes": 0}
    return ResourceRecord(compile_id(**axes), lane, "ab" * 32, figures, forbidden)
