"""Adversarial and malformed inputs: each case ends in a one-line diagnostic,
a non-zero exit (or `EmberError`) or a documented result, never a traceback,
a crash, a hang or a quietly different number."""
