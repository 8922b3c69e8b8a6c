"""Passes on the `loop` dialect."""
