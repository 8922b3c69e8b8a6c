"""The console scripts `ember` and `ember-opt`: a tool's `main`, then an end
without the collector's last walk.

A compile builds hundreds of thousands of IR objects that refer to each
other in cycles (an op and its parent block), so only the cycle collector
frees them. Raised thresholds keep it from running while the pipeline does
(`targets.cpu.pipeline.fewer_collections`); what is left for the
interpreter's shutdown took a second after compiling ResNet-50. A script
whose work is done needs none of it freed: `gc.freeze` moves every object
out of the collector's reach, the usual exit (atexit handlers, flushed
streams) follows, and the operating system takes the memory back. In-process
callers (tests, `ember.cli.main(argv)`) call `main` and keep collecting.
"""

from __future__ import annotations

import gc
from collections.abc import Callable


def _run(main: Callable[[], int]) -> int:
    status = main()
    gc.freeze()
    return status


def ember() -> int:
    """`ember`: the model CLI (`ember.cli`)."""
    from ember.cli import main

    return _run(main)


def ember_opt() -> int:
    """`ember-opt`: the pass driver (`ember.opt`)."""
    from ember.opt import main

    return _run(main)


__all__ = ["ember", "ember_opt"]
