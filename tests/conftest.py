"""Session-wide settings of the test suite.

The persistent compile cache (`ember/cache.py`) is off for the suite
(`EMBER_CACHE=0`, inherited by the `ember` processes the tests start): each
test compiles its model through the pipeline under test, as the test says,
whatever ran before it, and the suite never writes to the user's cache.
The cache's own tests (`tests/compiler/test_cache.py`) turn it on, each in
a temporary directory of its own.
"""

from __future__ import annotations

import os

os.environ["EMBER_CACHE"] = "0"
