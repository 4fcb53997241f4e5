"""CI files users can drop in, generated: pull requests run ``tox -m ci``; the nightly runs each lane of
contracts/nightly.toml on a self-hosted GPU runner, one job per combination, one at a time.

``python -m harness.report.ci`` writes them; ``--check`` exits 1 when a file differs from what the matrix
and tox.ini make (the tests check the same). The files are JSON, which is YAML too: no YAML library needed.
"""

from __future__ import annotations

import argparse
import configparser
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.report.matrix import Matrix, load_matrix

PR_ENVS_LABEL = "ci"
#: The image the jobs run in: Debian 13 has the Rust-to-PTX packages .ci/bootstrap installs.
IMAGE = "python:3.12-trixie"
#: The nightly's history, kept on the GPU runner between nights (a runner-side variable may move it).
HISTORY = "${COOP_NIGHTLY_HISTORY:-$HOME/coopcheck-nightly/history.jsonl}"
FILES = {"pr": Path(".github/workflows/pr.yml"), "nightly": Path(".github/workflows/nightly.yml"),
         "gitlab": Path(".gitlab-ci.yml")}


def ci_envs(tox_ini: Path) -> list[str]:
    """The tox environments of label ``ci`` (what ``tox -m ci`` runs)."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(tox_ini, encoding="utf-8")
    labels = {name.strip(): envs for name, _, envs in (line.partition("=") for line in
                                                         parser["tox"]["labels"].strip().splitlines())}
    return [env.strip() for env in labels[PR_ENVS_LABEL].split(",")]


def _nightly_script(lane: str) -> list[str]:
    return ["tox -e wheels",
            f'tox -e nightly -- --only "{lane}" --night "$NIGHT" --history "{HISTORY}" --out reports/out/nightly']


def documents(matrix: Matrix, tox_ini: Path) -> dict[str, dict[str, Any]]:
    """Each CI file's document, by the keys of ``FILES``."""
    envs = ci_envs(tox_ini)
    combos = matrix.expand()[0]
    lanes = [combo.id for combo in combos]
    # the longest lane's own limit, plus building the wheels and its environment
    minutes = int(max((combo.timeout_s or matrix.timeout_s for combo in combos), default=matrix.timeout_s) // 60) + 30
    checkout = {"uses": "actions/checkout@v4"}
    pr = {"name": "pull request", "on": {"pull_request": {}, "push": {"branches": ["main"]}},
          "jobs": {"tox": {"runs-on": "ubuntu-latest", "container": IMAGE,
                           "strategy": {"fail-fast": False, "matrix": {"env": envs}},
                           "steps": [checkout, {"run": "bash .ci/bootstrap"}, {"run": "tox -e ${{ matrix.env }}"}]}}}
    nightly = {"name": "nightly", "on": {"schedule": [{"cron": "0 2 * * *"}], "workflow_dispatch": {}},
               "jobs": {"lane": {"runs-on": ["self-hosted", "gpu"], "timeout-minutes": minutes,
                                 "strategy": {"fail-fast": False, "max-parallel": 1, "matrix": {"lane": lanes}},
                                 "env": {"NIGHT": "${{ github.run_id }}"},
                                 "steps": [checkout, *({"run": line} for line in _nightly_script("${{ matrix.lane }}")),
                                           {"uses": "actions/upload-artifact@v4", "if": "always()",
                                            "with": {"name": "nightly-${{ strategy.job-index }}",
                                                     "path": "reports/out/nightly"}}]}}}
    gitlab = {
        "stages": ["test", "nightly"],
        "tox": {"stage": "test", "image": IMAGE, "rules": [{"if": '$CI_PIPELINE_SOURCE != "schedule"'}],
                "parallel": {"matrix": [{"TOX_ENV": envs}]},
                "script": ["bash .ci/bootstrap", "tox -e $TOX_ENV"]},
        "nightly": {"stage": "nightly", "tags": ["gpu"], "resource_group": "gpu",
                    "timeout": f"{minutes} minutes", "rules": [{"if": '$CI_PIPELINE_SOURCE == "schedule"'}],
                    "variables": {"NIGHT": "$CI_PIPELINE_ID"}, "parallel": {"matrix": [{"LANE": lanes}]},
                    "script": _nightly_script("$LANE"),
                    "artifacts": {"when": "always", "paths": ["reports/out/nightly"]}},
    }
    return {"pr": pr, "nightly": nightly, "gitlab": gitlab}


def render(name: str, doc: dict[str, Any]) -> str:
    return (f"# Generated from contracts/nightly.toml and tox.ini by `python -m harness.report.ci` ({name});\n"
            "# edit those and run it again. JSON is YAML: this file is both.\n" + json.dumps(doc, indent=2) + "\n")


def parse(text: str) -> Any:
    """A generated file's document (its comment lines dropped)."""
    return json.loads("".join(line for line in text.splitlines(keepends=True) if not line.startswith("#")))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.report.ci", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(), help="the checkout (default: here)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is out of date")
    args = parser.parse_args(argv)
    docs = documents(load_matrix(args.root / "contracts" / "nightly.toml"), args.root / "tox.ini")
    stale = []
    for name, doc in docs.items():
        path, text = args.root / FILES[name], render(name, doc)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(FILES[name]))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for name in stale:
        print(f"{name}: out of date with contracts/nightly.toml or tox.ini: run python -m harness.report.ci",
              file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
