"""What a run with ``--hosts`` executes on each host, sent there by execnet as source: standard library only, since
the host has nothing of the project until this has installed it.

A setup channel receives the run's files into a fresh folder, checks each wheel against the manifest's sha256,
and installs the wheels into a fresh virtual environment there, layered on the gateway interpreter's
site-packages (as ``wheels.qualify`` layers its own) so that heavy third-party requirements installed with that
interpreter are reused; pip installs what is missing. A shard channel runs one worker attempt,
``python -m harness worker``, from that environment and sends its journal lines back as they are written.
Messages are tuples whose first item names them (:mod:`harness.hosts` holds the other side).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

#: How often a shard channel looks for new journal lines.
POLL_SECONDS = 0.1
#: Lines of a failed command's output a setup error shows.
TAIL_LINES = 15


class SetupError(Exception):
    """A step of the setup failed; the message says which and why."""


def _inside(root: Path, relative: str) -> Path:
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise SetupError(f"{relative}: a run's file must land inside its folder")
    return path


def _run(what: str, command: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-TAIL_LINES:])
        raise SetupError(f"{what} exited {done.returncode}:\n{tail}")
    return done.stdout


def _verified_wheels(root: Path, manifest: str) -> list[str]:
    """The wheels the manifest lists, each checked against its sha256 as it arrived here."""
    try:
        records = json.loads(_inside(root, manifest).read_text(encoding="utf-8"))["wheels"]
        wheels = [(_inside(root, str(Path(manifest).parent / r["file"])), r["sha256"]) for r in records]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SetupError(f"{manifest}: not a wheel manifest: {exc}") from None
    for path, expected in wheels:
        actual = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
        if actual != expected:
            raise SetupError(f"{path.name}: sha256 is {actual}, the manifest says {expected}; nothing installed")
    return [str(path) for path, _sha in wheels]


def _environment(root: Path, wheels: list[str]) -> str:
    """A fresh virtual environment in ``root/venv`` with ``wheels`` installed; its interpreter."""
    venv = root / "venv"
    _run("python -m venv", [sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    own = _run("the new environment's python", [str(python), "-c", "import sysconfig; print("
                                                "sysconfig.get_paths()['purelib'])"]).strip()
    inherited = sorted({sysconfig.get_paths()[key] for key in ("purelib", "platlib")})
    Path(own, "_coop_inherit.pth").write_text("".join(f"import site; site.addsitedir({folder!r})\n"
                                                     for folder in inherited), encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    _run("pip install (the run's wheels)", [*pip, "--no-index", "--no-deps", "--force-reinstall", *wheels])
    _run("pip install (their missing requirements)", [*pip, *wheels])
    return str(python)


def _check_imports(python: str, venv: Path) -> str:
    """Where the worker's harness comes from: the installed wheel, or an error (``PYTHONPATH`` shadowing it)."""
    found = _run("import harness", [python, "-P", "-c", "import harness; print(harness.__file__)"]).strip()
    if not Path(found).resolve().is_relative_to(venv.resolve()):
        raise SetupError(f"the worker's harness imports from {found}, not from the installed wheels in {venv} "
                         "(PYTHONPATH on the host?)")
    return found


def setup(channel: Any) -> None:
    """``("setup",)``, then ``("file", relative, bytes)`` chunks, then ``("install", manifest)``; answers
    ``("ready", folder, python)`` or ``("failed", stage, text)``. The folder is fresh for every run."""
    root = Path(tempfile.mkdtemp(prefix="coopcheck-run-")).resolve()
    stage = "receive the run's files"
    try:
        while True:
            message = channel.receive()
            if message[0] == "file":
                path = _inside(root, message[1])
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("ab") as fh:
                    fh.write(message[2])
                continue
            stage = "verify the wheels"
            wheels = _verified_wheels(root, message[1])
            stage = "install the wheels"
            python = _environment(root, wheels)
            _check_imports(python, root / "venv")
            channel.send(("ready", str(root), python))
            return
    except (SetupError, OSError) as exc:
        shutil.rmtree(root, ignore_errors=True)  # nothing in it is of use: the message says what went wrong
        channel.send(("failed", stage, str(exc)))


def shard(channel: Any, task: dict[str, Any]) -> None:
    """Run one worker attempt: ``task`` names the folder, the interpreter, the worker's arguments, its
    environment's additions, its journal (relative) with the lines it already holds, and the files it reads.
    Answers ``("started", pid)``, ``("lines", [...])`` as the journal grows, then ``("exit", status)``; a
    ``("kill",)`` from the other side kills the worker."""
    root = Path(task["root"])
    for relative, text in task["files"].items():
        path = _inside(root, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    journal = _inside(root, task["journal"])
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_bytes(task["prior"])  # the worker resumes after what the run's journal holds already
    offset = len(task["prior"])
    command = [task["python"], "-P", "-m", "harness", "worker", *task["argv"], "--journal", str(journal),
               "--supervised"]
    # stdout to stderr: on a popen gateway this process's stdout may be execnet's own pipe
    proc = subprocess.Popen(command, cwd=root, stdin=subprocess.PIPE, stdout=sys.stderr.fileno(),
                            env={**os.environ, **task["env"]})
    channel.send(("started", proc.pid))

    def listen() -> None:  # the other side's kill; its close (EOFError) ends the listener
        try:
            while channel.receive()[0] != "kill":
                pass
        except Exception:  # the channel closed: the worker ends with its supervisor's pipe below
            return
        proc.kill()

    threading.Thread(target=listen, name="kill-listener", daemon=True).start()

    def send_lines() -> None:
        nonlocal offset
        with journal.open("rb") as fh:
            fh.seek(offset)
            chunk = fh.read()
        complete = chunk[:chunk.rfind(b"\n") + 1]
        if complete:
            offset += len(complete)
            channel.send(("lines", complete.decode("utf-8", "replace").splitlines()))

    while proc.poll() is None:
        send_lines()
        time.sleep(POLL_SECONDS)
    send_lines()
    if proc.stdin is not None:
        proc.stdin.close()
    channel.send(("exit", proc.returncode))


def cleanup(root: str) -> None:
    """Remove a run's folder (its journals came back; its environment is made afresh by every run)."""
    if Path(root).name.startswith("coopcheck-run-"):
        shutil.rmtree(root, ignore_errors=True)


def serve(channel: Any) -> None:
    """Dispatch the channel's first message."""
    first = channel.receive()
    if first[0] == "setup":
        setup(channel)
    elif first[0] == "shard":
        shard(channel, first[1])
    elif first[0] == "cleanup":
        cleanup(first[1])


if __name__ == "__channelexec__":
    serve(globals()["channel"])  # execnet puts the channel into the module's globals
