"""Transformations within one level, one sub-package per level.

A pass here imports only dialects and passes of its own level (and
`ember.errors`, `ember.reference`); the registry of every pass by name is
`ember.registry`.
"""
