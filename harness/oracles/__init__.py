"""Pure-NumPy oracles, one module per operation family; no backend imports."""
