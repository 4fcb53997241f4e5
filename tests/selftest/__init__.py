"""The mutation self-test: a per-thread reference model, its mutants, and proof the oracle tells them
apart."""
