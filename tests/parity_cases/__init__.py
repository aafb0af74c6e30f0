"""Shared inputs and a harness for the parity tests against the real inspect_ai scorers."""
