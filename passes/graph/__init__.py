"""Passes on the `graph` dialect."""
