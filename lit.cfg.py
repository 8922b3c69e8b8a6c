# Lit configuration for Ember's FileCheck tests (tests/filecheck/).
#
#   lit -v tests/filecheck
#
# Tests run `ember-opt`, `ember` and `filecheck` from the Python environment
# that runs lit, so an activated venv (or `python -m lit`) is all it needs.
import os
import sys

import lit.formats

config.name = "Ember"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir", ".test"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["Inputs", "lit.local.cfg"]  # noqa: F821

bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")  # noqa: F821
config.environment["PYTHONWARNINGS"] = "ignore"  # noqa: F821
