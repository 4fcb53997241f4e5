"""coopcheck_rustfatbin: coop block Load/Store as a Rust ``no_std`` crate, built per compute capability
into one fatbin that ships in the wheel, loaded and launched through ``cuda.bindings``.

Importing the package loads nothing: the adapter (``coopcheck_rustfatbin.adapter``) reaches the driver
only when it launches, and the build (``python -m coopcheck_rustfatbin.build``) needs only the stdlib.
"""

__version__ = "0.1.0"
