"""Match a wheel's modules and stubs to their source files, byte for byte, in both directions.

Each top-level package of the wheel is located in its project folder by where its files are
(``src/``, the folder itself, or any other layout a build backend supports), so no layout is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from wheels.projects import source_files
from wheels.wheelfile import SOURCE_SUFFIXES, Wheel


@dataclass
class SourceMatch:
    """How a wheel's ``.py``/``.pyi`` files compare with the source tree."""

    matched: int = 0
    problems: list[str] = field(default_factory=list)


def _within(path: PurePosixPath, top: str) -> bool:
    """Whether ``path`` (relative to a package root) belongs to top-level package or module ``top``."""
    return path.parts[0] == top if len(path.parts) > 1 else path.stem == top


def _locate(
    top: str, wanted: set[PurePosixPath], sources: list[PurePosixPath]
) -> dict[PurePosixPath, set[PurePosixPath]]:
    """The best source roots of package ``top``, each with the ``top`` files found under it.

    Candidates are the folders in which some wheel path of ``top`` exists; the best share the
    most files with the wheel, then differ by the fewest, then lie shallowest. More than one
    best root means the location is ambiguous; none means no wheel file has a source.
    """
    candidates = {
        PurePosixPath(*source.parts[: len(source.parts) - len(path.parts)])
        for path in wanted
        for source in sources
        if source.parts[-len(path.parts) :] == path.parts
    }
    located = {
        prefix: {
            source.relative_to(prefix)
            for source in sources
            if source.is_relative_to(prefix) and _within(source.relative_to(prefix), top)
        }
        for prefix in candidates
    }

    def score(prefix: PurePosixPath) -> tuple[int, int, int]:
        return -len(located[prefix] & wanted), len(located[prefix] ^ wanted), len(prefix.parts)

    best = min(map(score, candidates), default=None)
    return {prefix: found for prefix, found in located.items() if score(prefix) == best}


def match_sources(wheel: Wheel, root: Path, project: PurePosixPath) -> SourceMatch:
    """Compare every module/stub of ``wheel`` with the source of project folder ``project`` under ``root``.

    A problem is a wheel file without source, one whose bytes differ, a source module the wheel
    lacks (a package the build left out), or a package whose location is ambiguous.
    """
    shipped = {path: blob for path, blob in wheel.payload.items() if path.suffix in SOURCE_SUFFIXES}
    sources = [path.relative_to(project) for path in source_files(root, project) if path.suffix in SOURCE_SUFFIXES]
    result = SourceMatch()
    for top in sorted({path.parts[0] if len(path.parts) > 1 else path.stem for path in shipped}):
        wanted = {path for path in shipped if _within(path, top)}
        roots = _locate(top, wanted, sources)
        if len(roots) != 1:
            where = sorted(str(project / prefix) for prefix in roots)
            result.problems.append(
                f"{wheel.path.name}: package {top!r} matches several source folders: {where}"
                if roots
                else f"{wheel.path.name}: package {top!r} has no source under {project}"
            )
            continue
        [(prefix, found)] = roots.items()
        for path in sorted(wanted):
            source = project / prefix / path
            if path not in found:
                result.problems.append(f"{wheel.path.name}: {path}: no source at {source}")
            elif (root / source).read_bytes() != shipped[path]:
                result.problems.append(f"{wheel.path.name}: {path}: differs from {source}")
            else:
                result.matched += 1
        result.problems += [
            f"{wheel.path.name}: lacks {path} (source {project / prefix / path})" for path in sorted(found - wanted)
        ]
    return result
