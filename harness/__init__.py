"""The coop conformance harness: contracts -> cases -> adapters -> journal -> verdicts -> reports.

Importing it loads no backend and probes no GPU; backends arrive through ``coopcheck.registry``.
"""

__version__ = "0.1.0"
