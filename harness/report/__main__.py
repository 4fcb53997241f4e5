"""``python -m harness.report``: the report commands on their own."""

import sys

from harness.report.cli import main

sys.exit(main())
