"""The README's Python example runs as written (on a GPU) and prints what it says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> str:
    text = README.read_text()
    section = text[text.index("## Python and PyTorch"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_example_is_ten_lines_or_so() -> None:
    code = [ln for ln in readme_example().splitlines() if ln.strip()]
    assert 5 <= len(code) <= 12


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_readme_example_runs() -> None:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(readme_example(), str(README), "exec"), {})
    same, err = buf.getvalue().split()
    assert same == "True" and float(err) < 1e-2
