"""A stand-in for compute-sanitizer in host tests: runs the target, then writes the XML its plan asks for.

It takes the real tool's command line (``--flag value`` pairs and ``--xml``, then the target),
runs the target with stdin/stdout passed through (the xdist channel), and writes a racecheck
hazard record, in the real XML format, for each launch the plan names. The launches it "saw" are
read from the lane's ledgers, by the target's pid, which is how the records name real kernels.
Plans (``FAKE_SANITIZER_PLAN``): ``control`` reports the positive control; ``case`` also block 1 of
the target's first contract launch; ``crash`` exits 3 with no XML. ``FAKE_SANITIZER_LINGER`` seconds pass
between the target's exit and the files, as the real tool spends them on its analysis at exit.
"""

import os
import subprocess
import sys
import time
from pathlib import Path
from xml.sax.saxutils import escape

from harness.journal import LaunchRecord, read_journal

FLAGS = {"--xml"}


def parse(argv):
    options, i = {}, 0
    while i < len(argv) and argv[i].startswith("--"):
        if argv[i] in FLAGS:
            options[argv[i]], i = "yes", i + 1
        else:
            options[argv[i]], i = argv[i + 1], i + 2
    return options, argv[i:]


def hazard(kernel, block):
    func = f"cudapy::tests::{kernel}[abi:v1,cw51cXTLSUwv1sCUt9Uw1VEw0NRRQPKzLTg4gaGKFsG2oMQGEY](Array<int, 1, C>)"
    where = f"<where><func>{escape(func)}</func><path>kernels.py</path><line>12</line></where>"
    return (f"<record><kind>Hazard</kind><level>Error</level><gridid>1</gridid>"
            f"<blockIdx><x>{block}</x><y>0</y><z>0</z></blockIdx>"
            f"<thread0><direction>Write</direction><threadIdx><x>0</x><y>0</y><z>0</z></threadIdx>{where}</thread0>"
            f"<thread1><direction>Read</direction><threadIdx><x>1</x><y>0</y><z>0</z></threadIdx>{where}</thread1>"
            f"<hostStack><saveLocation>kernel launch</saveLocation><frame><func>cuLaunchKernel</func>"
            f"<module>libcuda.so.1</module></frame></hostStack></record>")


def main():
    options, target = parse(sys.argv[1:])
    proc = subprocess.Popen(target)
    status = proc.wait()
    time.sleep(float(os.environ.get("FAKE_SANITIZER_LINGER", "0")))
    plan = os.environ["FAKE_SANITIZER_PLAN"]
    Path(options["--log-file"]).write_text(f"========= COMPUTE-SANITIZER (fake, plan {plan})\n")
    if plan == "crash":
        return 3
    root = Path(options["--save"]).parents[1]
    seen = [r for folder in ("journal", "controls") for path in sorted((root / folder).glob("*.jsonl"))
            for r in read_journal(path) if isinstance(r, LaunchRecord) and r.pid == proc.pid]
    records = [hazard(r.kernel_name, 0) for r in seen if r.kernel_name.startswith("coop_control")]
    first = next((r for r in seen if not r.kernel_name.startswith("coop_control")), None)
    if plan == "case" and first is not None:
        records.append(hazard(first.kernel_name, 1))
    body = "".join(records)
    Path(options["--save"]).write_text(f'<?xml version="1.0" encoding="utf-8"?>\n'
                                       f"<ComputeSanitizerOutput>{body}</ComputeSanitizerOutput>\n")
    return int(options["--error-exitcode"]) if records else status


if __name__ == "__main__":
    sys.exit(main())
