"""The ONNX frontend: model file, bytes or ModelProto -> `graph` IR."""

from ember.frontends.onnx.importer import import_onnx
from ember.frontends.onnx.loader import load_model

__all__ = ["import_onnx", "load_model"]
