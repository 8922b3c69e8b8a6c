"""Session-wide settings of the test suite.

The persistent compile cache (`ember/cache.py`) is off for the suite
(`EMBER_CACHE=0`, inherited by the `ember` processes the tests start): each
test compiles its model through the pipeline under test, as the test says,
whatever ran before it, and the suite never writes to the user's cache.
The cache's own tests (`tests/compiler/test_cache.py`) turn it on, each in
a temporary directory of its own.

Every stage's IR is verified (`EMBER_VERIFY=all`), the CPU's generated loop
nests too, which a user's compile leaves unverified
(`targets.stages.verifies_after`): a pass that breaks an op's rule fails
the suite.
"""

from __future__ import annotations

import os

os.environ["EMBER_CACHE"] = "0"
os.environ["EMBER_VERIFY"] = "all"
os.environ["EMBER_RECORDS"] = "0"
