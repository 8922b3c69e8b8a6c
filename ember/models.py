"""Model sources the tools accept: a file path, or `light:NAME` for one of the
small real architectures that ship with the `onnx` package (no download).

    ember run light:resnet50
"""

from __future__ import annotations

from pathlib import Path

import onnx

from ember.errors import ModelLoadError

LIGHT_PREFIX = "light:"
LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def light_model_names() -> list[str]:
    return sorted(p.stem.removeprefix("light_") for p in LIGHT_DIR.glob("light_*.onnx"))


def resolve_model(source: str) -> str:
    """The file path for a CLI model argument."""
    if not source.startswith(LIGHT_PREFIX):
        return source
    name = source.removeprefix(LIGHT_PREFIX)
    path = LIGHT_DIR / f"light_{name}.onnx"
    if not path.exists():
        raise ModelLoadError(
            f"{source}: no such light model; available: {', '.join(light_model_names())}"
        )
    return str(path)
