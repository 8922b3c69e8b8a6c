"""Without PyTorch installed, the PyTorch frontend's error says how to
install it. PyTorch's absence is simulated (`import torch` made to fail),
so this runs whether or not the `torch` extra is installed."""

from __future__ import annotations

import sys

import pytest

from ember.errors import EmberError


def test_without_torch_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from ember.frontends import torch as frontend

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails
    with pytest.raises(EmberError, match=r"pip install -e '\.\[torch\]'"):
        frontend.load_pt2(__file__)
