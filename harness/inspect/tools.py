"""Finding the CUDA command-line tools the inspector runs: the pip wheel first, then PATH, then CUDA_HOME."""

from __future__ import annotations

import os
import shutil
from importlib import metadata
from pathlib import Path

from harness.inspect.errors import InspectError


def locate_tool(tool: str, distribution: str) -> Path:
    """Path of the executable ``tool``, or an error naming every place searched.

    ``distribution`` is the pip package that ships the tool (e.g. ``nvidia-cuda-nvdisasm``); its
    recorded files are searched rather than a guessed folder, because the wheels' layout differs
    between CUDA majors (``nvidia/cu13/bin`` now, ``nvidia/cuda_nvdisasm/bin`` for CUDA 12).
    """
    searched: list[str] = []
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        searched.append(f"pip package {distribution} (not installed)")
    else:
        for file in dist.files or ():
            if file.name == tool and file.parent.name == "bin":
                path = Path(str(dist.locate_file(file)))
                if os.access(path, os.X_OK):
                    return path
        searched.append(f"pip package {distribution} (no executable bin/{tool})")
    on_path = shutil.which(tool)
    if on_path:
        return Path(on_path)
    searched.append("PATH")
    cuda_home = os.environ.get("CUDA_HOME")
    if cuda_home:
        candidate = Path(cuda_home) / "bin" / tool
        if os.access(candidate, os.X_OK):
            return candidate
        searched.append(f"CUDA_HOME/bin ({candidate})")
    else:
        searched.append("CUDA_HOME (unset)")
    raise InspectError(f"{tool} not found; searched {', '.join(searched)}; try: pip install {distribution}")
