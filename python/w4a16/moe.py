"""Mixture-of-experts layers over ``torch.ops.w4a16.grouped_gemm``.

- :class:`GroupedQuantizedWeight`: E experts' :class:`~w4a16.QuantizedWeight` of one shape, group
  size and mode, stacked as the grouped op takes them (``[E, N, K/2]``, ``[E, G, N]``).
- :class:`MoE`: the experts of a sparse MoE block (Mixtral, Qwen3-MoE, DeepSeek): given hidden
  states and the router's top-k expert ids and weights it computes
  ``sum_k weight_k * down_e(silu(gate_e(x)) * up_e(x))`` with two grouped GEMMs: gate and up as one
  product (``[E, 2I, H]``, gate rows first), the activation, and down with the router weights
  applied per row in its epilogue. Routing is built on the device with torch ops of fixed shapes
  (a stable sort by expert, a scatter-add of counts, a cumulative sum), so a forward never
  synchronises and can be captured in a CUDA graph. ``forward(hidden_states, top_k_index,
  top_k_weights)`` is the call signature of ``transformers``' fused experts modules, so a
  :class:`MoE` can stand in for a Mixtral / Qwen3-MoE block's ``experts``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import torch
from torch import Tensor, nn

from . import _dtypes
from ._weight import QuantizedWeight, quantize

__all__ = ["GroupedQuantizedWeight", "MoE", "route"]


class GroupedQuantizedWeight:
    """E experts' 4-bit weights ``W_e[N, K]`` of one group size and mode, stacked.

    Attributes:
        qweight: ``[E, N, K/2]`` uint8, each expert packed as :class:`~w4a16.QuantizedWeight`.
        scales: ``[E, G, N]`` in ``dtype``; zeros: the same or None.
        group_size, n, k, dtype, experts: as the experts' :class:`~w4a16.QuantizedWeight`.
    """

    def __init__(self, qweight: Tensor, scales: Tensor, zeros: Optional[Tensor], *,
                 group_size: int, n: int, k: int, dtype: Any = "bfloat16") -> None:
        self.qweight, self.scales, self.zeros = qweight, scales, zeros
        self.group_size, self.n, self.k = int(group_size), int(n), int(k)
        self.dtype = _dtypes.canonical_dtype(dtype)
        e = qweight.shape[0]
        g = self.k // self.group_size
        if tuple(qweight.shape) != (e, self.n, self.k // 2):
            raise ValueError(f"qweight has shape {tuple(qweight.shape)}, expected [E, N, K/2] = "
                             f"[{e}, {self.n}, {self.k // 2}]")
        for name, t in (("scales", scales), ("zeros", zeros)):
            if t is not None and tuple(t.shape) != (e, g, self.n):
                raise ValueError(f"{name} have shape {tuple(t.shape)}, expected [E, G, N] = "
                                 f"[{e}, {g}, {self.n}]")

    @property
    def experts(self) -> int:
        return int(self.qweight.shape[0])

    @classmethod
    def stack(cls, weights: Sequence[QuantizedWeight]) -> "GroupedQuantizedWeight":
        """Stack per-expert weights (all of one N, K, group size, mode and dtype; no act-order)."""
        if not weights:
            raise ValueError("GroupedQuantizedWeight.stack: no weights")
        w0 = weights[0]
        for i, w in enumerate(weights):
            if (w.n, w.k, w.group_size, w.mode, w.dtype) != (w0.n, w0.k, w0.group_size, w0.mode,
                                                              w0.dtype):
                raise ValueError(f"expert {i} is ({w.n}, {w.k}, group {w.group_size}, mode "
                                 f"{w.mode}, {w.dtype}); expert 0 is ({w0.n}, {w0.k}, group "
                                 f"{w0.group_size}, mode {w0.mode}, {w0.dtype})")
            if w.perm is not None:
                raise ValueError(f"expert {i} has an act-order permutation; the grouped op takes "
                                 "none")
        ts = [w.to_torch() if not w.is_torch else w for w in weights]
        dev = ts[0].qweight.device
        return cls(torch.stack([t.qweight.to(dev) for t in ts]),
                   torch.stack([t.scales.to(dev) for t in ts]),
                   None if w0.zeros is None else
                   torch.stack([t.zeros.to(dev) for t in ts if t.zeros is not None]),
                   group_size=w0.group_size, n=w0.n, k=w0.k, dtype=w0.dtype)

    def expert(self, e: int) -> QuantizedWeight:
        """Expert e as a :class:`~w4a16.QuantizedWeight` (views, no copy)."""
        return QuantizedWeight(self.qweight[e], self.scales[e],
                               None if self.zeros is None else self.zeros[e],
                               group_size=self.group_size, n=self.n, k=self.k, dtype=self.dtype)

    def dequantize(self) -> Tensor:
        """float32 ``[E, N, K]``: exactly what the kernels multiply by."""
        return torch.stack([self.expert(e).dequantize() for e in range(self.experts)])

    def to(self, device: Any) -> "GroupedQuantizedWeight":
        return GroupedQuantizedWeight(self.qweight.to(device), self.scales.to(device),
                                      None if self.zeros is None else self.zeros.to(device),
                                      group_size=self.group_size, n=self.n, k=self.k,
                                      dtype=self.dtype)


def route(top_k_index: Tensor, experts: int) -> Tuple[Tensor, Tensor, Tensor]:
    """The grouped layout of a router's choices, on the device, with fixed shapes (graph-safe).

    Args:
        top_k_index: ``[T, k]`` expert ids.
        experts: E.

    Returns:
        ``(order, offsets, row_index)``: ``order`` int64 ``[T*k]``, the flat (token, slot) index of
        each grouped row (stable by expert); ``offsets`` int32 ``[E + 1]``; ``row_index`` int32
        ``[T*k]``, the token of each grouped row.
    """
    t, k = top_k_index.shape
    flat = top_k_index.reshape(-1).to(torch.int64)
    order = torch.sort(flat, stable=True).indices
    counts = torch.zeros(experts, dtype=torch.int32, device=flat.device)
    counts.scatter_add_(0, flat, torch.ones_like(flat, dtype=torch.int32))
    offsets = torch.zeros(experts + 1, dtype=torch.int32, device=flat.device)
    offsets[1:] = torch.cumsum(counts, 0, dtype=torch.int32)
    row_index = torch.div(order, k, rounding_mode="floor").to(torch.int32)
    return order, offsets, row_index


class MoE(nn.Module):
    """The experts of a sparse MoE block in 4 bits, through two grouped GEMMs.

    Buffers: ``gate_up_qweight`` ``[E, 2I, H/2]``, ``gate_up_scales`` (``_zeros``) ``[E, G, 2I]``
    (gate rows ``[0, I)``, up rows ``[I, 2I)``), ``down_qweight`` ``[E, H, I/2]``, ``down_scales``
    (``_zeros``) ``[E, G', H]``. ``forward(hidden_states [T, H], top_k_index [T, k],
    top_k_weights [T, k]) -> [T, H]`` in the activation dtype.
    """

    # the buffers (registered in __init__; declared for type checkers)
    gate_up_qweight: Tensor
    gate_up_scales: Tensor
    gate_up_zeros: Optional[Tensor]
    down_qweight: Tensor
    down_scales: Tensor
    down_zeros: Optional[Tensor]

    def __init__(self, gate_up: GroupedQuantizedWeight, down: GroupedQuantizedWeight) -> None:
        super().__init__()
        if gate_up.experts != down.experts or gate_up.n != 2 * down.k or gate_up.k != down.n:
            raise ValueError(f"gate_up is [{gate_up.experts}, {gate_up.n}, {gate_up.k}] and down "
                             f"[{down.experts}, {down.n}, {down.k}]: they must be [E, 2I, H] and "
                             "[E, H, I]")
        self.experts, self.hidden, self.inter = gate_up.experts, gate_up.k, down.k
        self.gu_group, self.down_group = gate_up.group_size, down.group_size
        for prefix, w in (("gate_up", gate_up), ("down", down)):
            self.register_buffer(prefix + "_qweight", w.qweight)
            self.register_buffer(prefix + "_scales", w.scales)
            self.register_buffer(prefix + "_zeros", w.zeros)

    @classmethod
    def from_float(cls, gate: Tensor, up: Tensor, down: Tensor, group_size: int = 128,
                   zero_point: bool = False, dtype: Any = torch.bfloat16,
                   device: Any = None) -> "MoE":
        """Quantize float experts: gate, up ``[E, I, H]``, down ``[E, H, I]`` (Linear layout).

        Round-to-nearest by :func:`w4a16.quantize` per expert; the tensors go to ``device``
        (default: gate's device).
        """
        device = gate.device if device is None else device
        dt = _dtypes.canonical_dtype(dtype)

        def q(ws: Tensor) -> GroupedQuantizedWeight:
            qs = [quantize(ws[e].detach().float().cpu(), group_size=group_size,
                           zero_point=zero_point, dtype=dt) for e in range(ws.shape[0])]
            return GroupedQuantizedWeight.stack([w.to_torch() for w in qs]).to(device)
        return cls(q(torch.cat([gate, up], dim=1)), q(down))

    def gate_up_weight(self) -> GroupedQuantizedWeight:
        return GroupedQuantizedWeight(self.gate_up_qweight, self.gate_up_scales, self.gate_up_zeros,
                                      group_size=self.gu_group, n=2 * self.inter, k=self.hidden,
                                      dtype=str(self.gate_up_scales.dtype).split(".")[-1])

    def down_weight(self) -> GroupedQuantizedWeight:
        return GroupedQuantizedWeight(self.down_qweight, self.down_scales, self.down_zeros,
                                      group_size=self.down_group, n=self.hidden, k=self.inter,
                                      dtype=str(self.down_scales.dtype).split(".")[-1])

    def forward(self, hidden_states: Tensor, top_k_index: Tensor, top_k_weights: Tensor) -> Tensor:
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, self.hidden)
        t, k = top_k_index.reshape(x.shape[0], -1).shape
        order, offsets, row_index = route(top_k_index.reshape(t, k), self.experts)
        row_scale = top_k_weights.reshape(-1).to(torch.float32)[order]
        gu_group = -1 if self.gu_group == self.hidden else self.gu_group
        dn_group = -1 if self.down_group == self.inter else self.down_group
        gu = torch.ops.w4a16.grouped_gemm(x, self.gate_up_qweight, self.gate_up_scales,
                                          self.gate_up_zeros, offsets, row_index, None, gu_group)
        act = nn.functional.silu(gu[:, :self.inter]) * gu[:, self.inter:]
        y = torch.ops.w4a16.grouped_gemm(act, self.down_qweight, self.down_scales,
                                         self.down_zeros, offsets, None, row_scale, dn_group)
        out = torch.empty_like(y)
        out[order] = y
        return out.view(t, k, self.hidden).sum(dim=1).reshape(shape)
