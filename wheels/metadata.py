"""Compare a wheel's declared requirements with what its pyproject documents.

Both sides are reduced to "what pip installs here", per extra: each requirement whose marker holds
in this environment, with name, extras and specifier normalized, so spelling differences between
build backends do not count and a missing, added or changed requirement does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import NormalizedName, canonicalize_name

from wheels import WheelsError
from wheels.wheelfile import Wheel


def _normalized(requirement: Requirement) -> str:
    extras = ",".join(sorted(canonicalize_name(extra) for extra in requirement.extras))
    target = f" @ {requirement.url}" if requirement.url else str(requirement.specifier)
    return f"{canonicalize_name(requirement.name)}{f'[{extras}]' if extras else ''}{target}"


def _applicable(requirements: Iterable[Requirement], extra: str) -> list[Requirement]:
    environment = {**cast("dict[str, str]", default_environment()), "extra": extra}
    return [r for r in requirements if r.marker is None or r.marker.evaluate(environment)]


def _effective(requirements: Iterable[Requirement], extra: str) -> set[str]:
    return {_normalized(r) for r in _applicable(requirements, extra)}


def _parse(texts: Iterable[str], where: str) -> list[Requirement]:
    try:
        return [Requirement(text) for text in texts]
    except InvalidRequirement as exc:
        raise WheelsError(f"{where}: {exc}") from exc


def _requires_dist(wheel: Wheel) -> list[Requirement]:
    return _parse(wheel.metadata.get_all("Requires-Dist") or [], f"{wheel.path.name}: Requires-Dist")


def wheel_requirements(wheel: Wheel) -> dict[str, set[str]]:
    """``extra -> requirements`` as installed here; the key ``""`` is the install without extras."""
    extras = {canonicalize_name(e) for e in wheel.metadata.get_all("Provides-Extra") or []}
    requirements = _requires_dist(wheel)
    return {extra: _effective(requirements, extra) for extra in {"", *extras}}


def third_party(wheel: Wheel, own: Iterable[str]) -> set[NormalizedName]:
    """Distributions an install of ``wheel`` without extras requires here, less the project's ``own``."""
    needed = {canonicalize_name(r.name) for r in _applicable(_requires_dist(wheel), "")}
    return needed - {canonicalize_name(name) for name in own}


def declared_requirements(table: Mapping[str, Any], where: str) -> dict[str, set[str]]:
    """The same reduction of a pyproject ``[project]`` table; ``where`` names it in errors."""
    if "dependencies" in table.get("dynamic", ()) or "optional-dependencies" in table.get("dynamic", ()):
        raise WheelsError(f"{where}: dependencies are dynamic; declare them in [project] to have them checked")
    base = _parse(table.get("dependencies", []), f"{where}: dependencies")
    optional = {
        canonicalize_name(extra): _parse(texts, f"{where}: optional-dependencies.{extra}")
        for extra, texts in table.get("optional-dependencies", {}).items()
    }
    declared = {"": _effective(base, "")}
    for extra, requirements in optional.items():
        declared[extra] = _effective(base, extra) | _effective(requirements, extra)
    return declared


def requirement_problems(wheel: Wheel, table: Mapping[str, Any], where: str) -> list[str]:
    """Each difference between the wheel's requirements and the pyproject's, one line per difference.

    An extra is compared by what it adds to the install without extras, so that a difference in
    the base requirements is named once.
    """
    built, declared = wheel_requirements(wheel), declared_requirements(table, where)
    problems = []
    for extra in sorted(built.keys() | declared.keys()):
        label = f"extra {extra!r}" if extra else "requirements"
        if extra not in built:
            problems.append(f"{wheel.path.name}: {label} missing, {where} declares it")
            continue
        if extra not in declared:
            problems.append(f"{wheel.path.name}: {label} not declared in {where}")
            continue
        ours, theirs = (
            built[extra] - (built[""] if extra else set()),
            declared[extra] - (declared[""] if extra else set()),
        )
        problems += [f"{wheel.path.name}: {label}: {r} not in {where}" for r in sorted(ours - theirs)]
        problems += [f"{wheel.path.name}: {label}: lacks {r} of {where}" for r in sorted(theirs - ours)]
    return problems
