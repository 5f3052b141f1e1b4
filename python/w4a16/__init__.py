"""w4a16: W4A16 GEMM kernels (4-bit weights, fp16/bf16 activations) for NVIDIA GPUs, from Python.

A thin layer over the C library ``libw4a16.so`` (include/w4a16/w4a16.h), which stays the single
source of behaviour:

- host-side weights: :func:`quantize`, :func:`pack`, :func:`unpack`, :class:`QuantizedWeight`
  (numpy arrays or torch tensors; the same bits as the C functions);
- the op ``torch.ops.w4a16.gemm`` (registered on import where torch is importable; see
  :mod:`w4a16.ops`), and :mod:`w4a16.nn` (``Linear``, ``replace_linears``);
- selection: :func:`kernels`, :func:`info`, :func:`tune`;
- checkpoints: :func:`load_quantized`, :func:`from_gptq`, :func:`from_awq`,
  :func:`from_compressed_tensors` (:mod:`w4a16.checkpoints`); tensor parallelism: :func:`shard`
  (:mod:`w4a16.parallel`).

``import w4a16`` needs numpy only. Errors of the C library raise :class:`W4A16Error` (the status
name and the library's message); bad Python arguments raise ``ValueError`` / ``TypeError`` naming
the argument and its value.
"""

from __future__ import annotations

from ._dtypes import (FINEGRAINED_SCALE_AND_ZEROS, FINEGRAINED_SCALE_ONLY,
                      PER_COLUMN_SCALE_ONLY)
from ._lib import W4A16Error
from ._select import KernelInfo, info, kernels, tune
from ._weight import QuantizedWeight, pack, quantize, unpack
from .checkpoints import (QuantizedCheckpoint, from_awq, from_compressed_tensors, from_gptq,
                          load_quantized)
from .parallel import shard

__version__ = "0.1.0"

__all__ = ["W4A16Error", "QuantizedWeight", "quantize", "pack", "unpack", "kernels", "info",
           "tune", "KernelInfo", "PER_COLUMN_SCALE_ONLY", "FINEGRAINED_SCALE_ONLY",
           "FINEGRAINED_SCALE_AND_ZEROS", "from_gptq", "from_awq", "from_compressed_tensors",
           "load_quantized", "QuantizedCheckpoint", "shard", "__version__"]


def _register_torch() -> bool:
    """Register ``torch.ops.w4a16.*`` when torch is importable; False where it is not."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    from . import ops  # noqa: F401  (registers the op on import)
    from . import _act_order  # noqa: F401  (registers torch.ops.w4a16.gather_k)
    return True


HAS_TORCH = _register_torch()

if HAS_TORCH:
    from . import nn  # noqa: F401,E402
    __all__ += ["nn", "ops"]
