"""``w4a16.nn``: an inference drop-in for ``torch.nn.Linear`` and a helper to swap a model's linears.

``Linear`` holds a 4-bit weight in the library's layout as buffers (so ``.to()``, ``state_dict()``
and ``torch.compile`` see them) and runs ``torch.ops.w4a16.gemm`` in ``forward``. It has no
gradient: it is for inference.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional

import torch
from torch import Tensor, nn

from . import _dtypes
from ._lib import PROBLEM, lib
from ._weight import QuantizedWeight, quantize

__all__ = ["Linear", "replace_linears", "ReplaceReport", "GATHER_MODES"]

#: The values of :attr:`Linear.gather`: how an act-order layer takes its input's columns in order.
GATHER_MODES = ("op", "fused", "index_select")
_DEFAULT_GATHER = "fused"


class Linear(nn.Module):
    """``y = x @ dequant(W).T + bias`` with a 4-bit W, through ``torch.ops.w4a16.gemm``.

    Buffers: ``qweight`` ``[N, K/2]`` uint8 (packed), ``scales`` ``[G, N]``, ``zeros`` ``[G, N]``
    or None, ``bias`` ``[N]`` or None, all in the activation dtype but qweight, and ``perm``
    (int64 ``[K]``, act-order: the weight's columns are stored sorted by group) or None: where
    given, ``forward`` computes ``x[..., perm] @ dequant(W).T``, taking ``x``'s columns in that
    order in one of three ways, chosen by the attribute ``gather``:

    - ``"fused"`` (the default): ``torch.ops.w4a16.gemm`` with ``perm`` (its int32 copy
      ``perm_i32``): one op call; at M = 1 on sm_90 the TMA GEMV gathers the row in the kernel,
      elsewhere the library gathers into the op's workspace and the GEMM after that gather starts
      streaming its weights while it runs.
    - ``"op"``: ``torch.ops.w4a16.gather_k`` then ``torch.ops.w4a16.gemm``: two op calls (the
      same gather kernel; the GEMM, launched by the op in plain stream order, no longer overlaps
      it).
    - ``"index_select"``: ``x.index_select(-1, perm)`` then the GEMM; better where
      ``torch.compile`` fuses it into the kernel producing ``x`` (a norm or an activation).

    All three are graph-safe and give the same product (up to the kernel's rounding).
    bench/decode_bench.py measures them (docs/PERFORMANCE.md). Another value of ``gather`` raises
    ``ValueError`` in ``forward``.

    ``forward`` takes ``x`` ``[..., K]`` in the activation dtype on the buffers' device and returns
    ``[..., N]``; see :mod:`w4a16.ops` for the layout rules.
    """

    # the buffers (registered in __init__ / from_quantized; declared for type checkers)
    qweight: Tensor
    scales: Tensor
    zeros: Optional[Tensor]
    bias: Optional[Tensor]
    perm: Optional[Tensor]
    perm_i32: Optional[Tensor]

    def __init__(self, in_features: int, out_features: int, group_size: int = 128,
                 zero_point: bool = False, bias: bool = True, dtype: Any = torch.bfloat16,
                 device: Any = None) -> None:
        super().__init__()
        dt = getattr(torch, _dtypes.canonical_dtype(dtype))
        k, n = int(in_features), int(out_features)
        g = k if group_size in (-1, 0, None) else int(group_size)
        if g < 1 or k % g:
            raise ValueError(f"group_size {group_size} does not divide in_features = {k}")
        if n % 16 or k % 64:
            raise ValueError(f"w4a16.nn.Linear needs out_features % 16 == 0 and in_features % 64"
                             f" == 0, got out_features = {n}, in_features = {k}")
        self.in_features, self.out_features, self.group_size = k, n, g
        self.register_buffer("qweight", torch.zeros(n, k // 2, dtype=torch.uint8, device=device))
        self.register_buffer("scales", torch.ones(k // g, n, dtype=dt, device=device))
        self.register_buffer("zeros", torch.zeros(k // g, n, dtype=dt, device=device)
                             if zero_point else None)
        self.register_buffer("bias", torch.zeros(n, dtype=dt, device=device) if bias else None)
        self.register_buffer("perm", None)
        self.register_buffer("perm_i32", None, persistent=False)
        self.gather = _DEFAULT_GATHER

    @classmethod
    def from_quantized(cls, qweight: QuantizedWeight, bias: Optional[Tensor] = None) -> "Linear":
        """A Linear holding qweight (its tensors moved to torch as they are; a copy of none).

        bias: ``[N]``, converted to qweight's dtype on qweight's device.
        """
        qw = qweight if qweight.is_torch else qweight.to_torch()
        dt = getattr(torch, qw.dtype)
        mod = cls.__new__(cls)
        nn.Module.__init__(mod)
        mod.in_features, mod.out_features, mod.group_size = qw.k, qw.n, qw.group_size
        mod.register_buffer("qweight", qw.qweight)
        mod.register_buffer("scales", qw.scales)
        mod.register_buffer("zeros", qw.zeros)
        mod.register_buffer("bias", None if bias is None else
                            bias.detach().to(device=qw.qweight.device, dtype=dt).contiguous())
        mod.register_buffer("perm", None if qw.perm is None else
                            torch.as_tensor(qw.perm, dtype=torch.int64,
                                            device=qw.qweight.device))
        # the gather op's index type (K < 2^31); not saved: state_dict keeps perm
        mod.register_buffer("perm_i32", None if mod.perm is None else
                            mod.perm.to(torch.int32), persistent=False)
        mod.gather = _DEFAULT_GATHER
        return mod

    @classmethod
    def from_float(cls, linear: nn.Linear, group_size: Optional[int] = 128,
                   zero_point: bool = False, dtype: Any = None) -> "Linear":
        """Quantize a ``torch.nn.Linear`` (round-to-nearest, :func:`w4a16.quantize`).

        dtype: the activation dtype; None keeps the linear's weight dtype where it is float16 or
        bfloat16, else bfloat16. The result lives on the linear's device.
        """
        w = linear.weight.detach()
        if dtype is None:
            dtype = w.dtype if w.dtype in (torch.float16, torch.bfloat16) else torch.bfloat16
        qw = quantize(w, group_size=group_size, zero_point=zero_point, dtype=dtype)
        return cls.from_quantized(qw.to(w.device), linear.bias)

    @property
    def dtype(self) -> torch.dtype:
        """The activation dtype (of x, the scales and the output)."""
        return self.scales.dtype

    def qweight_info(self) -> QuantizedWeight:
        """The layer's weight as a :class:`w4a16.QuantizedWeight` (sharing the buffers)."""
        return QuantizedWeight(self.qweight, self.scales, self.zeros, group_size=self.group_size,
                               n=self.out_features, k=self.in_features, dtype=self.scales.dtype,
                               perm=self.perm)

    def forward(self, x: Tensor) -> Tensor:
        g = -1 if self.scales.shape[0] == 1 else self.group_size
        if self.perm is not None:
            gather = self.gather
            if gather == "fused":
                return torch.ops.w4a16.gemm(x, self.qweight, self.scales, self.zeros, self.bias,
                                            g, 1.0, self.perm_i32)
            if gather == "op":
                x = torch.ops.w4a16.gather_k(x, self.perm_i32)
            elif gather == "index_select":
                x = x.index_select(-1, self.perm)
            else:
                raise ValueError(f"w4a16.nn.Linear: gather = {gather!r}; it must be one of "
                                 + ", ".join(repr(v) for v in GATHER_MODES))
        return torch.ops.w4a16.gemm(x, self.qweight, self.scales, self.zeros, self.bias, g, 1.0)

    def extra_repr(self) -> str:
        mode = _dtypes.MODES[self.qweight_info().mode]
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"group_size={self.group_size}, mode={mode}, dtype={self.dtype}, "
                f"bias={self.bias is not None}, act_order={self.perm is not None}")


@dataclass
class ReplaceReport:
    """What :func:`replace_linears` did: the module names it replaced, and why it skipped others."""

    replaced: List[str] = field(default_factory=list)
    skipped: Dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"replaced {len(self.replaced)} linear(s), skipped {len(self.skipped)}"]
        lines += [f"  skipped {name}: {why}" for name, why in self.skipped.items()]
        return "\n".join(lines)


@functools.lru_cache(maxsize=None)
def _refusal(n: int, k: int, group: int, mode: int, dtype: str) -> Optional[str]:
    """Why no kernel of this build takes an [N, K] layer at some M (None: every M has one).

    Host-side: ``w4a16_can_implement`` over the registry at M = 1, 64 and 1024 (the families'
    ranges), without the GPU architecture check.
    """
    L = lib()
    c_group = 0 if mode == _dtypes.PER_COLUMN_SCALE_ONLY else group
    for m in (1, 64, 1024):
        prob = PROBLEM(m=m, n=n, k=k, lda=0, ldd=0, group_size=c_group, mode=mode,
                       dtype=_dtypes.c_dtype(dtype), has_bias=0)
        ok = False
        for i in range(L.w4a16_kernel_count()):
            if L.w4a16_can_implement(L.w4a16_kernel_get(i), ctypes.byref(prob)) == 0:
                ok = True
                break
        if not ok:
            return (f"no kernel of this build implements N = {n}, K = {k}, group {group}, "
                    f"{_dtypes.MODES[mode]}, {dtype} at M = {m}")
    return None


def replace_linears(model: nn.Module, quantized: Optional[Mapping[str, QuantizedWeight]] = None,
                    predicate: Optional[Callable[[str, nn.Linear], bool]] = None,
                    **quant_kwargs: Any) -> ReplaceReport:
    """Swap a model's ``torch.nn.Linear`` modules for :class:`Linear`, in place.

    Args:
        model: any module; its ``nn.Linear`` descendants are candidates.
        quantized: ``{module name: QuantizedWeight}`` (e.g. from a checkpoint): those modules take
            these weights (and keep their own bias); others are left alone. None: quantize every
            eligible linear with :meth:`Linear.from_float` and ``quant_kwargs`` (``group_size``,
            ``zero_point``, ``dtype``).
        predicate: ``predicate(name, linear)`` False keeps a linear as it is (reported).

    Returns:
        A :class:`ReplaceReport`: the replaced names, and each skipped linear with the reason (the
        predicate, a shape the packed layout or the library's kernels refuse, a weight dtype, a
        quantized weight whose shape disagrees).
    """
    report = ReplaceReport()
    targets = [(name, mod) for name, mod in model.named_modules() if isinstance(mod, nn.Linear)]
    for name, lin in targets:
        if not name:
            report.skipped[name] = "the model itself is a Linear: wrap it or use Linear.from_float"
            continue
        if predicate is not None and not predicate(name, lin):
            report.skipped[name] = "the predicate kept it"
            continue
        n, k = lin.out_features, lin.in_features
        if quantized is not None:
            if name not in quantized:
                report.skipped[name] = "no quantized weight for it"
                continue
            qw = quantized[name]
            if (qw.n, qw.k) != (n, k):
                report.skipped[name] = (f"the quantized weight is [{qw.n}, {qw.k}] but the linear "
                                        f"is [{n}, {k}]")
                continue
            why = _refusal(n, k, qw.group_size, qw.mode, qw.dtype)
            if why:
                report.skipped[name] = why
                continue
            new = Linear.from_quantized(qw.to(lin.weight.device), lin.bias)
        else:
            if n % 16 or k % 64:
                report.skipped[name] = (f"[{n}, {k}]: the packed layout needs out_features % 16 "
                                        "== 0 and in_features % 64 == 0")
                continue
            g = quant_kwargs.get("group_size", 128)
            g = k if g in (-1, 0, None) else g
            if k % g:
                report.skipped[name] = f"group_size {g} does not divide in_features = {k}"
                continue
            dtype = quant_kwargs.get("dtype")
            wdt = lin.weight.dtype
            if dtype is None:
                dtype = wdt if wdt in (torch.float16, torch.bfloat16) else torch.bfloat16
            zp = bool(quant_kwargs.get("zero_point", False))
            mode = (_dtypes.FINEGRAINED_SCALE_AND_ZEROS if zp else
                    _dtypes.PER_COLUMN_SCALE_ONLY if g == k else _dtypes.FINEGRAINED_SCALE_ONLY)
            why = _refusal(n, k, g, mode, _dtypes.canonical_dtype(dtype))
            if why:
                report.skipped[name] = why
                continue
            new = Linear.from_float(lin, group_size=g, zero_point=zp, dtype=dtype)
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, new)
        report.replaced.append(name)
    return report


# the mixture-of-experts layer (w4a16.moe), here beside Linear
from .moe import GroupedQuantizedWeight, MoE  # noqa: E402

__all__ += ["MoE", "GroupedQuantizedWeight"]
