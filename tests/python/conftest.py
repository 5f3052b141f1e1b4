"""pytest configuration of tests/python.

``W4A16_TEST_HIDE_TORCH=1`` hides torch, as if it were not installed (``import torch`` raises
ImportError): ctest's ``python_tests_without_torch`` runs the suite so a second time, so that the
package's torch-free paths (numpy quantization, checkpoint import, sharding; ``import w4a16``
itself) stay tested where torch is installed. The tests that need torch skip themselves.
"""

from __future__ import annotations

import os
import sys

if os.environ.get("W4A16_TEST_HIDE_TORCH") == "1":
    sys.modules["torch"] = None  # type: ignore[assignment]
