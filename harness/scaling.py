"""Kernel groups' measured cost, the cost-balanced shard assignment, and the wall time it predicts per GPU count.

A group's cost is the sum of its cases' ``seconds`` (their shares of the group's wall time, its compile
included; journals of harnesses before that understate compile-heavy groups) in a finished run's journals.
The prediction's model: one worker per GPU, each GPU's wall time its shards' summed group costs plus one
worker's startup (the mean ``startup`` phase of the journals' end records); the run takes as long as its
slowest GPU. It ignores what GPUs share: the host's cores (compiling is CPU-bound), its disk (journals, the
kernel cache), the supervisor, and the summary at the end; and any GPU being faster than the one measured.
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import itertools
import json
import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.journal import CaseRecord, EndRecord, GroupRecord, read_journal
from harness.options import positive_int


def balance(costs: list[float], shards: int) -> list[int]:
    """The shard (0-based) of each group: costliest first (ties: the earlier group) onto the least-loaded shard
    (ties: the lower one). Deterministic, so a supervisor and its workers agree.

    >>> balance([4.0, 3.0, 3.0, 2.0], 2)
    [0, 1, 1, 0]
    """
    loads = [(0.0, shard) for shard in range(shards)]
    owner = [0] * len(costs)
    for group in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        load, shard = heapq.heappop(loads)
        owner[group] = shard
        heapq.heappush(loads, (load + costs[group], shard))
    return owner


def contiguous(sizes: list[int], shards: int) -> list[int]:
    """The shard (0-based) of each run of ``sizes`` groups, in order: the shard whose contiguous k-th share of all
    the groups holds the run's first group, so runs of one group each are sliced exactly as the groups would be.

    >>> contiguous([1, 1, 1, 1, 1, 1], 3), contiguous([4, 1, 1, 2, 1, 1], 3)
    ([0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 2, 2])
    """
    total = sum(sizes)
    cuts = [k * total // shards for k in range(1, shards)]
    starts = list(itertools.accumulate(sizes, initial=0))[:-1]
    return [bisect.bisect_right(cuts, start) for start in starts]


def group_costs(journals: Iterable[Path]) -> dict[str, float]:
    """Seconds per kernel group (its group record's kernel id) in ``journals``: each case's last record counts,
    as in :func:`harness.journal.final_cases` (a resumed attempt replaces the charged one)."""
    kernel_of: dict[str, str] = {}
    seconds: dict[str, float] = {}
    for journal in journals:
        for record in read_journal(journal, kinds=(GroupRecord, CaseRecord)):
            if isinstance(record, GroupRecord):
                kernel_of.update(dict.fromkeys(record.cases, record.kernel))
            elif isinstance(record, CaseRecord):
                seconds[record.id] = record.seconds
    costs: defaultdict[str, float] = defaultdict(float)
    for case, spent in seconds.items():
        if case in kernel_of:
            costs[kernel_of[case]] += spent
    return dict(costs)


def costs_of(kernels: list[str], costs: dict[str, float]) -> list[float]:
    """The measured cost of each of ``kernels``; a group the journals never saw costs their mean."""
    mean = math.fsum(costs.values()) / len(costs) if costs else 1.0  # exact: the same in every process
    return [costs.get(kernel, mean) for kernel in kernels]


def startup_seconds(journals: Iterable[Path]) -> float:
    """One worker's start (imports, adapter activation): the mean over end records of their summed startup."""
    starts = [sum(phases.get("startup", 0.0) for phases in record.phases.values())
              for journal in journals for record in read_journal(journal, kinds=(EndRecord,))
              if isinstance(record, EndRecord)]
    return sum(starts) / len(starts) if starts else 0.0


def predict(journals: list[Path], gpu_counts: list[int]) -> dict[str, Any]:
    """The predicted wall time and speed-up over one GPU for each of ``gpu_counts`` (the module's model)."""
    costs = group_costs(journals)
    if not costs:
        raise HarnessError(f"{', '.join(map(str, journals))}: no kernel group with timed cases to predict from")
    startup = startup_seconds(journals)
    spent = list(costs.values())

    def wall(gpus: int) -> float:
        loads = [0.0] * gpus
        for group, shard in enumerate(balance(spent, gpus)):
            loads[shard] += spent[group]
        return max(loads) + startup

    one = wall(1)
    return {"groups": len(costs), "group_seconds": sum(spent), "startup_seconds": startup,
            "predictions": [{"gpus": g, "seconds": wall(g), "speedup": one / wall(g)} for g in gpu_counts]}


def _counts(text: str) -> list[int]:
    try:
        return [positive_int(part) for part in text.split(",")]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def cmd_predict(args: argparse.Namespace) -> int:
    figures = predict(args.journals, args.gpus)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{figures['groups']} kernel groups, {figures['group_seconds']:.1f} s of measured group time, "
          f"{figures['startup_seconds']:.1f} s startup per worker")
    print("  gpus   predicted s   speed-up   (one worker per GPU, groups balanced by measured cost)")
    for row in figures["predictions"]:
        print(f"{row['gpus']:>6} {row['seconds']:>11.1f} {row['speedup']:>8.2f}x")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("predict", help="predicted wall time per GPU count, from a finished run's journals",
                       description=__doc__)
    p.add_argument("journals", type=Path, nargs="+", metavar="JOURNAL", help="the run's journals (every shard)")
    p.add_argument("--gpus", type=_counts, default=[1, 2, 4, 8], metavar="N,...", help="GPU counts to predict for")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=cmd_predict)
