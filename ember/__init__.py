"""Ember: a deep-learning compiler built as MLIR-style dialects on xDSL.

    import ember
    model = ember.compile("model.onnx")             # native code for this CPU
    outputs = model(x)                              # NumPy arrays in, NumPy arrays out
    module = ember.import_onnx("model.onnx")        # graph IR
    outputs = ember.reference.run(module, inputs)   # NumPy reference semantics
    model = ember.load("out/")                      # what `ember compile -o out/` wrote

The API page, docs/api.md, is generated from these docstrings
(`python -m ember.apidoc`).
"""

from __future__ import annotations

from ember import reference
from ember.compiler import CompiledModel, compile
from ember.errors import EmberError
from ember.frontends.onnx import import_onnx
from ember.load_back import load

__all__ = ["CompiledModel", "EmberError", "compile", "import_onnx", "load", "reference"]
__version__ = "0.1.0"
