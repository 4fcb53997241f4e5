"""Shards of one run on several hosts (``harness run --hosts SPEC,...``): execnet gateways carry everything.

Each host (an execnet spec such as ``ssh=gpu1//python=/opt/venv/bin/python``; ``3*popen`` is three gateways to
one host, as in xdist) gets the run's wheels, contract files and expectations file in a fresh folder and the
wheels installed in a fresh virtual environment there (:mod:`harness.onhost`), once per run. Each shard gets a
gateway of its own; its supervisor (:func:`harness.session.supervise`) starts each worker attempt over it and
appends the journal lines the host sends back, as they are written, to the shard's local journal: a lost host
loses at most the groups it had not finished, and a resume re-runs only those, here or on any host.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from harness import onhost
from harness.contracts import contract_paths
from harness.datafile import read_json
from harness.errors import HarnessError
from harness.fingerprint import MANIFEST_ENV  # the fingerprint records the wheels a worker ran from
from harness.gpus import VISIBLE_ENV
from harness.journal import CaseRecord, JournalLock, JournalWriter, final_cases, from_json, read_journal
from harness.session import RunConfig

if TYPE_CHECKING:
    import execnet

#: How the run's files are sent: in chunks of this many bytes (a wheel with fatbins is tens of megabytes).
CHUNK_BYTES = 1 << 22
#: The gateway types a spec may name (execnet's; ``vagrant_ssh`` and ``socket`` reach a host as well).
GATEWAY_TYPES = ("popen", "ssh", "socket", "vagrant_ssh")


class HostError(HarnessError):
    """A host could not be reached, could not install the wheels, or was lost mid-run; names host and shard."""


def _execnet() -> Any:
    try:
        import execnet
    except ImportError:
        raise HarnessError("--hosts needs execnet (pip install execnet, or the harness's [hosts] extra)") from None
    return execnet


def _lost(execnet: Any) -> tuple[type[BaseException], ...]:
    """What a channel raises when its host went away (or the code there raised: its traceback is the text)."""
    return OSError, EOFError, execnet.RemoteError, execnet.DataFormatError


def parse_hosts(given: Sequence[str]) -> list[str]:
    """``--hosts`` (repeatable, each comma-separated) as one gateway spec per shard slot; ``N*SPEC`` is N.

    >>> parse_hosts(["2*popen", "ssh=gpu1//python=/opt/venv/bin/python"])
    ['popen', 'popen', 'ssh=gpu1//python=/opt/venv/bin/python']
    """
    specs: list[str] = []
    for item in given:
        for part in filter(None, (p.strip() for p in item.split(","))):
            times, star, spec = part.partition("*")
            if not star:
                times, spec = "1", part
            if not times.isdigit() or int(times) < 1 or not spec:
                raise HarnessError(f"--hosts {part!r}: write N*SPEC with N at least 1, e.g. 3*popen")
            spec_type = spec.split("//")[0].partition("=")[0]
            if spec_type not in GATEWAY_TYPES:
                raise HarnessError(f"--hosts {part!r}: an execnet spec starts with one of {', '.join(GATEWAY_TYPES)}"
                                   " (e.g. popen//python=python3, ssh=gpu1//python=/opt/venv/bin/python)")
            specs += [spec] * int(times)
    if not specs:
        raise HarnessError("--hosts names no host: give execnet specs such as popen or ssh=gpu1")
    return specs


def run_files(config: RunConfig, dist: Path) -> tuple[list[tuple[str, Path]], str, str | None]:
    """What every host receives (relative name, local file): the wheels of ``dist`` and their manifest, the
    contract files, the expectations file; and the relative names of the manifest and the expectations."""
    manifest_path = dist / "manifest.json"
    if not manifest_path.is_file():
        raise HarnessError(f"--dist {dist}: no manifest.json: build the run's wheels first (python -m wheels.build) "
                           "or name their folder with --dist")
    manifest = read_json(manifest_path, HarnessError, f"--dist {dist}")
    records = manifest.get("wheels") if isinstance(manifest, dict) else None
    if not isinstance(records, list) or not all(isinstance(r, dict) and isinstance(r.get("file"), str)
                                                for r in records):
        raise HarnessError(f"{manifest_path}: lists no wheels (a manifest of python -m wheels.build)")
    files = [("dist/manifest.json", manifest_path)]
    for record in records:
        wheel = dist / record["file"]
        if not wheel.is_file():
            raise HarnessError(f"{manifest_path}: lists {record['file']}, which {dist} lacks")
        files.append((f"dist/{record['file']}", wheel))
    files += [(f"contracts/{path.name}", path) for path in contract_paths(config.contracts_dir)]
    expectations = None
    if config.expectations is not None:
        expectations = f"expectations/{config.expectations.name}"
        files.append((expectations, config.expectations))
    return files, "dist/manifest.json", expectations


@dataclass
class Host:
    """One host of the run (one spec): set up once, by the first of its shards to start, for all of them."""

    spec: str
    files: list[tuple[str, Path]]
    manifest: str
    expectations: str | None
    gateways: list[execnet.Gateway] = field(default_factory=list)  # its shards', any of which may clean up
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ready: tuple[str, str] | None = None  # (the run's folder there, the interpreter of its environment)
    _failed: str | None = None

    def ready(self, gateway: execnet.Gateway, shard: str) -> tuple[str, str]:
        with self._lock:
            if self._failed is not None:
                raise HostError(f"host {self.spec} ({shard}): {self._failed}")
            if self._ready is None:
                try:
                    self._ready = self._setup(gateway)
                except HostError as exc:
                    self._failed = str(exc)
                    raise HostError(f"host {self.spec} ({shard}): {exc}") from None
            return self._ready

    def _setup(self, gateway: execnet.Gateway) -> tuple[str, str]:
        execnet = _execnet()
        try:
            channel = gateway.remote_exec(onhost)
            channel.send(("setup",))
            for relative, path in self.files:
                with path.open("rb") as fh:
                    while chunk := fh.read(CHUNK_BYTES):
                        channel.send(("file", relative, chunk))
            channel.send(("install", self.manifest))
            answer = channel.receive()
        except _lost(execnet) as exc:
            raise HostError(f"lost while setting up: {_first_line(exc)}") from None
        if answer[0] == "failed":
            raise HostError(f"cannot {answer[1]}: {answer[2]}")
        print(f"harness: host {self.spec}: the run's wheels installed in {answer[2]}", file=sys.stderr, flush=True)
        return answer[1], answer[2]

    def cleanup(self) -> None:
        """Remove the run's folder there, if one was made, through the first gateway still alive; a lost host
        keeps it."""
        if self._ready is None:
            return
        for gateway in self.gateways:
            try:
                channel = gateway.remote_exec(onhost)
                channel.send(("cleanup", self._ready[0]))
                channel.waitclose(timeout=60)
                return
            except Exception:  # this gateway is gone: try the next
                continue

    def remote_config(self, config: RunConfig, root: str) -> RunConfig:
        """``config`` with the paths of its files on the host."""
        return replace(config, contracts_dir=Path(root, "contracts"),
                       expectations=Path(root, self.expectations) if self.expectations else None)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[-1] if text else "") or type(exc).__name__


class HostLaunch:
    """Starts each worker attempt of one shard on its host, over a gateway of the shard's own."""

    def __init__(self, group: execnet.Group, host: Host, shard: tuple[int, int]) -> None:
        self.group, self.host, self.shard = group, host, "shard {}/{}".format(*shard)
        self.where = f" on host {host.spec} ({self.shard})"
        self._gateway: execnet.Gateway | None = None

    def start(self, config: RunConfig, journal: Path, lock: JournalLock) -> HostWorker:
        execnet = _execnet()
        if self._gateway is None:
            try:
                self._gateway = self.group.makegateway(self.host.spec)
                self.host.gateways.append(self._gateway)
            except Exception as exc:  # execnet raises what its transport raised: OSError, HostNotFound, ...
                raise HostError(f"host {self.host.spec} ({self.shard}): cannot be reached: "
                                f"{_first_line(exc)}") from None
        root, python = self.host.ready(self._gateway, self.shard)
        remote = self.host.remote_config(config, root)
        shards = Path("journals", journal.name)
        files = {str(shards.with_suffix(suffix)): text for suffix, text in remote.worker_files().values()}
        argv = remote.worker_args() + [arg for option, (suffix, _text) in remote.worker_files().items()
                                       for arg in (option, str(Path(root, shards.with_suffix(suffix))))]
        env = {MANIFEST_ENV: str(Path(root, self.host.manifest)), **({VISIBLE_ENV: config.gpu} if config.gpu else {})}
        task = {"root": root, "python": python, "argv": argv, "env": env, "journal": str(shards),
                "prior": journal.read_bytes() if journal.exists() else b"", "files": files}
        try:
            channel = self._gateway.remote_exec(onhost)
            channel.send(("shard", task))
        except _lost(execnet) as exc:
            raise self.lost(journal, exc) from None
        return HostWorker(self, channel, journal, lock)

    def lost(self, journal: Path, exc: BaseException) -> HostError:
        kept = len(final_cases(read_journal(journal, kinds=(CaseRecord,)))) if journal.exists() else 0
        how = "the shard's code there failed" if isinstance(exc, _execnet().RemoteError) else "lost mid-run"
        return HostError(f"host {self.host.spec} ({self.shard}): {how} ({_first_line(exc)}); {journal} "
                         f"keeps the {kept} verdict(s) that came back")


class HostWorker:
    """A worker attempt on a host, seen as a process: polling it appends the journal lines that came back."""

    stdin: IO[bytes] | None = None

    def __init__(self, launch: HostLaunch, channel: execnet.Channel, journal: Path, lock: JournalLock) -> None:
        self._launch, self._channel, self._journal = launch, channel, journal
        self._writer: JournalWriter | None = JournalWriter(journal, lock)
        self.pid = 0
        self.returncode: int | None = None
        self._receive(None)  # ("started", pid): the pid its group records carry

    def _receive(self, timeout: float | None) -> bool:
        """Handle one message, waiting up to ``timeout`` s; False when none came."""
        execnet = _execnet()
        try:
            message = self._channel.receive(timeout)
        except self._channel.TimeoutError:
            return False
        except _lost(execnet) as exc:
            self._close()
            raise self._launch.lost(self._journal, exc) from None
        if message[0] == "started":
            self.pid = message[1]
        elif message[0] == "lines" and self._writer is not None:
            for number, line in enumerate(message[1]):
                self._writer.write(from_json(line, f"{self._launch.host.spec}: {self._journal.name} (line "
                                                   f"{number + 1} of a batch)"))
        elif message[0] == "exit":
            self._close()
            self.returncode = message[1]
        return True

    def _close(self) -> None:
        if self._writer is not None:
            self._writer.sync()
            self._writer.close()
            self._writer = None

    def poll(self) -> int | None:
        while self.returncode is None and self._receive(0.05):
            pass
        return self.returncode

    def wait(self) -> int:
        while self.returncode is None:
            self._receive(None)
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(OSError):  # the channel is gone: wait() says how
            self._channel.send(("kill",))


class Hosts:
    """The hosts of one run and their gateways; close it (``with``) to remove the run's folders and end them."""

    def __init__(self, specs: list[str], config: RunConfig, dist: Path) -> None:
        execnet = _execnet()
        files, manifest, expectations = run_files(config, dist)
        self.specs = specs
        self.hosts = {spec: Host(spec, files, manifest, expectations) for spec in dict.fromkeys(specs)}
        self.group = execnet.Group()

    def launches(self, shards: int) -> list[HostLaunch]:
        """Shard k on spec k mod n: round-robin over the gateways ``--hosts`` lists."""
        return [HostLaunch(self.group, self.hosts[self.specs[k % len(self.specs)]], (k + 1, shards))
                for k in range(shards)]

    def __enter__(self) -> Hosts:
        return self

    def __exit__(self, *exc: object) -> None:
        for host in self.hosts.values():
            host.cleanup()
        self.group.terminate(timeout=10)
