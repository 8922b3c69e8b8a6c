"""Passes on structured ops of the `tensor` level."""
