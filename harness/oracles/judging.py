"""How an oracle turns a launch's output into verdicts, shared by every family: the ABI check of what ``launch``
returned, the inputs a launch must leave alone, and one verdict per failing case built from its failing blocks.

A family gives its element-wise comparison (:class:`Judging`); everything here is vectorized over the launch,
and per-element detail is built only for failing cases. The hypotheses that every family's diagnosis has (a
y-major rank, canonicalized floats) and the matching of a failing block against a family's hypotheses are here
too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import coopcheck
import numpy as np
import numpy.typing as npt

from harness.oracles.launch import PASSED, Launch, Verdict
from harness.oracles.values import raw_view

MAX_DETAIL = 8
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


def show(value: np.generic, other: np.generic) -> str:
    """A value for a message; floats that print alike show their raw bits too (``nan(0x7fa00001)``)."""
    text = repr(value.item())
    if value.dtype.kind == "f" and text == repr(other.item()):
        bits = value.dtype.itemsize * 2
        text += f"(0x{int(raw_view(np.array([value]))[0]):0{bits}x})"
    return text


def abi_problem(dtype: str, length: int, out: object) -> str | None:
    """Why ``out`` is not the ABI's ``dst``: an ndarray of ``dtype`` in native byte order, ``length`` elements."""
    want = np.dtype(dtype)
    says = f"the ABI says {want.name}[{length}] in native byte order"
    if not isinstance(out, np.ndarray):
        return f"launch returned {type(out).__name__}, not a NumPy array; {says}"
    order = {"<": "little-endian", ">": "big-endian", "=": "native", "|": "no byte order"}[out.dtype.byteorder]
    if out.dtype != want or not out.dtype.isnative or out.shape != (length,):
        shape = "x".join(map(str, out.shape)) or "scalar"
        return f"launch returned {out.dtype.name}[{shape}] ({order}); {says}"
    return None


def modified_inputs(snap: Any, live: Any, fields: Sequence[str], n_blocks: int) -> Bools:
    """(block, input field) -> whether the launch changed that block's part of the input."""
    touched = np.zeros((n_blocks, len(fields)), dtype=bool)
    for f, name in enumerate(fields):
        before, after = np.asarray(getattr(snap, name)), getattr(live, name)
        if not isinstance(after, np.ndarray) or after.shape != before.shape or after.dtype != before.dtype:
            touched[:, f] = True
            continue
        diff = raw_view(np.ascontiguousarray(after)) != raw_view(np.ascontiguousarray(before))
        touched[:, f] = diff.reshape(n_blocks, -1).any(axis=1)
    return touched


@dataclass(frozen=True)
class Judging:
    """One family's judging: its names for the checks, and its comparison, per-element checks and diagnosis.

    ``compare(spec, snap, out)`` gives (output, expected output, wrong) per block and element (an element the
    contract leaves unspecified is never wrong); ``check_ids(spec, snap, rows)`` the check each element of
    blocks ``rows`` is judged by; ``explain(spec, snap, got, wrong, launch, bad)`` block -> the diagnoses whose
    output its output equals.
    """

    check_names: Mapping[int, str]
    why: Mapping[int, str]  # per element check: what a detail line says the element should hold
    input_fields: Callable[[Any], tuple[str, ...]]  # of a spec: the launch inputs it must leave alone
    inputs_check: str
    abi_check: str
    diagnoses: Mapping[str, str]
    out_length: Callable[[Any, Any], int]  # (spec, batch) -> elements of dst per block
    compare: Callable[[Any, Any, np.ndarray], tuple[np.ndarray, np.ndarray, Bools]]
    check_ids: Callable[[Any, Any, Ints], Ints]
    explain: Callable[[Any, Any, np.ndarray, Bools, Launch, Bools], dict[int, tuple[str, ...]]]

    @classmethod
    def of_fields(cls, check_names: Mapping[int, str], why: Mapping[int, str], diagnoses: Mapping[str, str], *,
                  input_fields: tuple[str, ...], inputs: int, abi: int, out_length: Callable[[Any], int],
                  compare: Callable[[Any, Any, np.ndarray], tuple[np.ndarray, np.ndarray, Bools]],
                  check_ids: Callable[[Any, Any, Ints], Ints],
                  explain: Callable[[Any, Any, np.ndarray, Bools, Launch, Bools], dict[int, tuple[str, ...]]]
                  ) -> Judging:
        """The judging of a family whose every spec has the same input fields and whose output length is a
        function of the spec alone; ``inputs`` and ``abi`` are the ids of its inputs-unmodified and ABI checks."""
        return cls(check_names=check_names, why=why, input_fields=lambda spec: input_fields,
                   inputs_check=check_names[inputs], abi_check=check_names[abi], diagnoses=diagnoses,
                   out_length=lambda spec, batch: out_length(spec), compare=compare, check_ids=check_ids,
                   explain=explain)

    def abi_problem(self, spec: Any, batch: Any, out: object) -> str | None:
        return abi_problem(spec.dtype, batch.n_blocks * self.out_length(spec, batch), out)

    def judge(self, launch: Launch, snap: Any, out: object) -> list[Verdict]:
        """Every case's verdict (in case order) from the output and what the launch left in its inputs."""
        spec, live, n_cases = launch.spec, launch.batch, len(launch.cases)
        problem = self.abi_problem(spec, snap, out)
        if problem is not None:
            return [Verdict((self.abi_check,), (), problem)] * n_cases
        assert isinstance(out, np.ndarray)
        got, want, wrong = self.compare(spec, snap, out)
        touched = modified_inputs(snap, live, self.input_fields(spec), snap.n_blocks)
        bad_blocks: Bools = np.asarray(wrong.any(axis=1) | touched.any(axis=1))
        if not bad_blocks.any():
            return [PASSED] * n_cases
        checks = np.zeros(wrong.shape, dtype=np.int64)
        checks[bad_blocks] = self.check_ids(spec, snap, np.flatnonzero(bad_blocks))
        diagnoses = self.explain(spec, snap, got, wrong, launch, bad_blocks)
        verdicts = [PASSED] * n_cases
        for case in np.unique(launch.case_of_block[bad_blocks]):
            blocks = np.flatnonzero((launch.case_of_block == case) & bad_blocks)
            verdicts[int(case)] = self._verdict(launch, got, want, checks, wrong, touched, blocks, diagnoses)
        return verdicts

    def _verdict(self, launch: Launch, got: np.ndarray, want: np.ndarray, checks: Ints, wrong: Bools,
                 touched: Bools, blocks: Ints, diagnoses: dict[int, tuple[str, ...]]) -> Verdict:
        """The verdict of one failing case from its failing blocks (one per pattern that caught it)."""
        failed = sorted({self.check_names[int(c)] for b in blocks for c in np.unique(checks[b][wrong[b]])})
        parts, total = [], int(wrong[blocks].sum())
        first = next((int(b) for b in blocks if wrong[b].any()), None)
        if first is not None:
            name = launch.patterns[int(launch.pattern_of_block[first])]
            for i in np.flatnonzero(wrong[first])[:MAX_DETAIL]:
                g, w = got[first, i], want[first, i]
                parts.append(f"out[{i}]={show(g, w)}, but should be {show(w, g)} ({self.why[int(checks[first, i])]})")
            parts[0] = f"pattern {name}, block {first}: " + parts[0]
        fields = self.input_fields(launch.spec)
        modified = sorted({fields[f] for b in blocks for f in np.flatnonzero(touched[b])})
        if modified:
            failed.append(self.inputs_check)
            parts.append(f"the launch modified its input(s) {', '.join(modified)}")
        caught = sorted({launch.patterns[int(launch.pattern_of_block[b])] for b in blocks})
        # A known wrong implementation is deterministic: it explains a case only if it explains every block
        # (pattern) whose output is wrong; a match in one pattern alone is a coincidence of that pattern's data.
        output_blocks = [int(b) for b in blocks if wrong[b].any()]
        explained = tuple(d for d in diagnoses.get(output_blocks[0], ()) if all(d in diagnoses.get(b, ())
                                                                                for b in output_blocks)) \
            if output_blocks else ()
        detail = "; ".join(parts)
        detail += (f" ({total} wrong element(s) in {len(caught)} of {len(launch.patterns)} patterns: "
                   f"{', '.join(caught)})")
        if explained:
            detail += " matches: " + ", ".join(self.diagnoses[d] for d in explained)
        return Verdict(tuple(sorted(failed)), explained, detail)

    def block_failures(self, spec: Any, snap: Any, out: object, describe: Callable[[int], str],
                       limit: int = MAX_DETAIL) -> list[str]:
        """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot
        of its inputs taken before the launch; ``describe(b)`` names block ``b``'s parameters. An output off the
        ABI is one line."""
        problem = self.abi_problem(spec, snap, out)
        if problem is not None:
            return [problem]
        assert isinstance(out, np.ndarray)
        got, want, wrong = self.compare(spec, snap, out)
        failing = np.flatnonzero(wrong.any(axis=1))
        checks = np.zeros(wrong.shape, dtype=np.int64)
        checks[failing] = self.check_ids(spec, snap, failing)
        lines = []
        for b in failing:
            shown = [f"out[{i}]={show(got[b, i], want[b, i])}, but should be {show(want[b, i], got[b, i])} "
                     f"({self.why[int(checks[b, i])]})" for i in np.flatnonzero(wrong[b])[:limit]]
            lines.append(f"block {b} ({describe(int(b))}): {int(wrong[b].sum())} wrong: " + "; ".join(shown))
        return lines


def axes_lacking(contract: str, wanted: Iterable[str], axes: Mapping[str, Sequence[Any]]) -> str | None:
    """An oracle's ``axes_problem`` for a family whose contracts (``contract``: "a Shuffle contract") must name
    every axis of ``wanted``."""
    names = list(wanted)
    missing = [a for a in names if a not in axes]
    return f"{contract} has the axes {', '.join(names)} (it lacks {', '.join(missing)})" if missing else None


# -- diagnosis shared by the families ----------------------------------------------------------------------


def thread_ranks(spec: coopcheck.KernelSpec, y_major: bool = False) -> Ints:
    """The rank each thread (in ABI rank order) has for the primitive; ``y_major`` gives a y-fastest one (the
    ``rank-y-major`` hypothesis)."""
    if not y_major:
        return np.arange(spec.threads, dtype=np.int64)
    bx, by, bz = (*spec.block, 1, 1)[:3]
    z, y, x = np.indices((bz, by, bx)).reshape(3, -1)
    return (y + by * (x + bx * z)).astype(np.int64)


def canonical(items: np.ndarray) -> np.ndarray:
    """Items as an arithmetic move (x + 0) leaves them (the ``floats-canonicalized`` hypothesis)."""
    with np.errstate(invalid="ignore"):  # signalling NaNs quieten: that is the hypothesis
        return items + items.dtype.type(0)  # type: ignore[no-any-return]


#: One hypothesis' prediction for some blocks: (its name, the output it predicts, which elements it predicts,
#: and for a strict one the elements it must predict too, else None: a loose one only predicts what is wrong).
Prediction = tuple[str, np.ndarray, Bools, Bools | None]


def matches(got: np.ndarray, wrong: Bools, bad: Bools,
            predict: Callable[[Ints], Iterable[Prediction]]) -> dict[int, tuple[str, ...]]:
    """Block -> the hypotheses that explain its output (only blocks with wrong output), in the order
    ``predict(blocks)`` yields them: every wrong element is one the hypothesis predicts, as it predicts it, and a
    strict hypothesis predicts every element of its ``strict`` mask too."""
    at = np.flatnonzero(bad & wrong.any(axis=1))
    if not at.size:
        return {}
    got_raw = raw_view(np.ascontiguousarray(got))[at]
    found: dict[int, list[str]] = {}
    for name, alt, defined, strict in predict(at):
        same = raw_view(np.ascontiguousarray(alt)) == got_raw
        explained = (~wrong[at] | (defined & same)).all(axis=1)
        if strict is not None:
            explained &= (same | ~defined | ~strict).all(axis=1)
        for b in at[explained]:
            found.setdefault(int(b), []).append(name)
    return {b: tuple(names) for b, names in found.items()}
