"""``python -m wheels.verify``: check each wheel of the dist folder against the manifest's sha256."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from wheels import add_dist_option, run_command
from wheels.manifest import verify


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m wheels.verify", description=__doc__.splitlines()[0])
    add_dist_option(parser)
    args = parser.parse_args(argv)
    manifest = verify(args.dist)
    source = f"{manifest.source_commit or 'no commit'}{' + changes' if manifest.dirty else ''}"
    print(f"wheels: {len(manifest.wheels)} wheels match the manifest in {args.dist} (source: {source})")


if __name__ == "__main__":
    sys.exit(run_command(main))
