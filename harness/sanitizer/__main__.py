"""``python -m harness.sanitizer``."""

import sys

from harness.sanitizer.lane import main

sys.exit(main())
