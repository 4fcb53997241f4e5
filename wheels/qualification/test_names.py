"""The names the project publishes are its own.

A distribution or import package named like someone else's lets pip put that project in its place: a
requirement on ``coop`` resolved to PyPI's ``coop`` (a Wagtail site base) whenever the local one was not
installed first. So every distribution and import root carries the project's prefix, and every
requirement on a distribution of that prefix names a wheel built from this repository (one that does not
would be fetched from the package index).
"""

from __future__ import annotations

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from wheels.inventory import BACKENDS_GROUP, BASE, Inventory
from wheels.manifest import WheelRecord

PREFIX = "coopcheck"
#: Import roots that keep a top-level folder's name (``harness/`` is the engine room of the layout). PyPI's
#: unrelated ``harness`` 0.1.0 provides ``harness`` too: the two cannot share an environment, but no
#: requirement of ours can resolve to it, since no distribution of ours is named ``harness``.
LAYOUT_ROOTS = frozenset({"harness"})


def _own(name: str, separator: str) -> bool:
    return name == PREFIX or name.startswith(PREFIX + separator)


def test_distribution_names_carry_the_prefix(record: WheelRecord) -> None:
    assert _own(canonicalize_name(record.name), "-"), f"{record.file}: distribution {record.name!r} is not {PREFIX}-*"


def test_import_roots_carry_the_prefix(record: WheelRecord, inventory: Inventory) -> None:
    roots = {module.split(".")[0] for module in inventory.wheels[record.name].modules}
    foreign = sorted(root for root in roots if not _own(root, "_") and root not in LAYOUT_ROOTS)
    assert roots and not foreign, f"{record.file}: import roots {foreign} are not {PREFIX} or {PREFIX}_*"


def test_the_base_is_the_prefix_and_its_group(inventory: Inventory) -> None:
    assert PREFIX == BASE and f"{PREFIX}.backends" == BACKENDS_GROUP
    assert PREFIX in inventory.wheels[BASE].packages, f"the base wheel does not provide the {PREFIX} package"


def test_internal_requirements_resolve_to_this_repository(record: WheelRecord, inventory: Inventory) -> None:
    own = {canonicalize_name(name) for name in inventory.wheels}
    required = [Requirement(text) for text in inventory.wheels[record.name].metadata.get_all("Requires-Dist") or []]
    stray = sorted({r.name for r in required
                    if _own(canonicalize_name(r.name), "-") and canonicalize_name(r.name) not in own})
    if stray:
        pytest.fail(f"{record.file}: requires {stray}, which this repository does not build: pip would take "
                    "them from the package index", pytrace=False)
