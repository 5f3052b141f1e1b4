"""Tensor parallelism: W4A16 weights sharded across ranks; parallel linears over torch.distributed.

Megatron-style tensor parallelism for 4-bit layers. A column-parallel layer (q/k/v, gate/up)
splits its output features N across the ranks: each rank computes its slice of the output from the
whole input. A row-parallel layer (o, down) splits its input features K: each rank multiplies its
slice of the input (the previous column-parallel layer's output slice, so no communication in
between) and the partial outputs are summed by one all-reduce.

Host side (numpy required, torch optional; ``import w4a16.parallel`` works without torch):

- :func:`shard` (also ``w4a16.shard``): one rank's :class:`~w4a16.QuantizedWeight` of a column-
  (``dim=0``) or row-parallel (``dim=1``) split; :func:`shard_bias` the matching bias.
- :func:`fold_act_order`: move a row-parallel layer's act-order permutation into the previous
  column-parallel layers' output rows, so that the row-parallel layer can be sharded.
- :func:`permute_rows`: reorder a weight's output features (what the fold does to gate/up).

How the packed layout (docs/LAYOUT.md) splits: it stores 16 x 64 tiles in tile-row-major order
(tile ``(nt, kt)`` at byte ``(nt * (K/64) + kt) * 512``). An N split at a multiple of 16 rows is
therefore a contiguous slice of the ``[N, K/2]`` bytes; a K split at a multiple of 64 columns
takes the same tile columns ``kt`` from every tile row (a slice of the ``[N/16, K/64, 512]`` view),
which is *not* a column slice of the ``[N, K/2]`` array. Both are byte moves, exactly
``pack(unpack(qweight)[rows or columns])``; a row permutation that is not tile-aligned goes
through the C unpack / pack.

Torch side (needs torch and ``torch.distributed``; NCCL on GPUs)::

    from w4a16.parallel import ColumnParallelLinear, RowParallelLinear, shard_mlp, shard_model

- :class:`ColumnParallelLinear`: a :class:`w4a16.nn.Linear` holding rank's N slice; ``forward``
  returns the local slice ``[..., N / world_size]``, or with ``gather_output=True`` the whole
  ``[..., N]`` (one ``all_gather_into_tensor``).
- :class:`RowParallelLinear`: a :class:`w4a16.nn.Linear` holding rank's K slice (bias on rank 0
  only); ``forward`` takes the local input slice ``[..., K / world_size]`` (or the whole input
  with ``input_is_parallel=False``) and all-reduces the partial sums (``dist.all_reduce``, in
  place: it can be captured in a CUDA graph once the communicator exists).
- :func:`shard_mlp` / :func:`shard_model`: a Llama-style MLP ``down(act(gate(x)) * up(x))`` whose
  linears are :class:`w4a16.nn.Linear` becomes gate/up column-parallel and down row-parallel, in
  place (down's act-order folded into gate/up first where it needs it). Attention is left whole
  (replicated): it is correct, not sharded.

Launchers on the lent GPU machines must keep ``NCCL_NVLS_ENABLE=0`` in the environment (NVLink
SHARP multicast is not available there; see tests/python/tp_mlp.py).

Errors: ``ValueError`` names the value that cannot be sharded (a world size that does not divide N
or K, a rank out of range, a shard that breaks the 16-row / 64-column tiles, groups that would
straddle two shards, an act-order permutation that crosses the K shards); ``TypeError`` a wrong
kind of argument.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ._weight import QuantizedWeight, _is_torch, pack, unpack

__all__ = ["shard", "shard_bias", "shard_range", "permute_rows", "fold_act_order"]
_TORCH_NAMES = ["ColumnParallelLinear", "RowParallelLinear", "shard_mlp", "shard_model"]

Array = Any  # numpy.ndarray or torch.Tensor


# --- host side: numpy or torch tensors ---------------------------------------------------------

def _copy(x: Array) -> Array:
    """A C-contiguous copy of x (numpy or torch, on x's device), sharing no memory with x."""
    if _is_torch(x):
        import torch
        return x.clone(memory_format=torch.contiguous_format)
    return np.array(x, copy=True, order="C")


def _host_index(x: Array, name: str) -> np.ndarray:
    """An int64 numpy copy of an index vector (numpy or torch)."""
    if _is_torch(x):
        return x.detach().cpu().numpy().astype(np.int64)
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got dtype {a.dtype}")
    return a.astype(np.int64)


def _as_index_like(idx: np.ndarray, ref: Array) -> Array:
    """idx as an int64 tensor on ref's device when ref is a torch tensor, else numpy."""
    if _is_torch(ref):
        import torch
        return torch.from_numpy(np.ascontiguousarray(idx)).to(ref.device)
    return np.ascontiguousarray(idx)


def _check_perm(perm: np.ndarray, k: int, name: str) -> None:
    if perm.shape != (k,) or not np.array_equal(np.sort(perm), np.arange(k)):
        raise ValueError(f"{name} is not a permutation of 0..{k - 1} (shape {perm.shape})")


def _check_rank(rank: int, world_size: int) -> Tuple[int, int]:
    if isinstance(world_size, bool) or not isinstance(world_size, (int, np.integer)) \
            or world_size < 1:
        raise ValueError(f"world_size {world_size!r} is not a positive integer")
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) \
            or not 0 <= rank < world_size:
        raise ValueError(f"rank {rank!r} is out of range for world_size {world_size} "
                         f"(0..{world_size - 1})")
    return int(rank), int(world_size)


def shard_range(size: int, rank: int, world_size: int, what: str = "size") -> Tuple[int, int]:
    """``(start, stop)`` of rank's equal part of ``range(size)``.

    Raises:
        ValueError: world_size does not divide size, or rank is not in ``[0, world_size)``.
    """
    rank, world_size = _check_rank(rank, world_size)
    if size % world_size:
        raise ValueError(f"world_size {world_size} does not divide {what} = {size}")
    part = size // world_size
    return rank * part, (rank + 1) * part


def shard(qweight: QuantizedWeight, rank: int, world_size: int, dim: int) -> QuantizedWeight:
    """Rank's shard of a 4-bit weight for tensor parallelism (a copy; the input is unchanged).

    Args:
        qweight: the whole weight (logical ``[N, K]``), numpy or torch on any device; the shard
            is of the same kind on the same device.
        rank: this rank, ``0 <= rank < world_size``.
        world_size: the number of ranks sharing the layer.
        dim: ``0`` column-parallel (split N, the output features): rows ``[n0, n1)`` of the
            weight, columns ``[n0, n1)`` of scales and zeros, the act-order ``perm`` (over K)
            kept whole. Each shard's N must be a multiple of 16 (the layout's tile rows).
            ``1`` row-parallel (split K, the input features): columns ``[k0, k1)``, the group
            rows ``[k0 / g, k1 / g)`` of scales and zeros; one scale per column (``group_size ==
            K``) is replicated, the shard having ``group_size == K / world_size``. Needs
            ``(K / world_size) % group_size == 0`` for grouped weights and a shard K that is a
            multiple of 64 (the layout's tile columns). An act-order weight is refused unless
            its ``perm`` maps each shard's columns into themselves (e.g. the identity left by
            :func:`fold_act_order`); the shard then holds the local permutation (None where it
            is the identity).

    Returns:
        A :class:`~w4a16.QuantizedWeight` of shape ``[N / world_size, K]`` (dim 0) or
        ``[N, K / world_size]`` (dim 1): qweight ``[n, k/2]`` uint8, scales / zeros ``[G', n]``
        in the same representation as the input's, same dtype. Its bits equal packing the
        corresponding slice of the unpacked codes; for grouped weights (not per-column) they
        also equal :func:`w4a16.quantize` of the slice of the float weight.

    Raises:
        TypeError: qweight is not a QuantizedWeight.
        ValueError: a bad dim, world_size or rank; world_size not dividing N or K; a shard N not
            a multiple of 16 or shard K not a multiple of 64; groups straddling two shards; an
            act-order permutation that crosses the K shards (fold it first).
    """
    if not isinstance(qweight, QuantizedWeight):
        raise TypeError(f"shard takes a w4a16.QuantizedWeight, not {type(qweight).__name__}")
    if isinstance(dim, bool) or dim not in (0, 1):
        raise ValueError(f"dim {dim!r} must be 0 (split N, column-parallel) or 1 (split K, "
                         "row-parallel)")
    n, k, g = qweight.n, qweight.k, qweight.group_size
    if dim == 0:
        n0, n1 = shard_range(n, rank, world_size, "N")
        if (n1 - n0) % 16:
            raise ValueError(f"world_size {world_size} leaves each rank N = {n1 - n0} rows, not a "
                             "multiple of 16 (the packed layout's tile rows)")
        return QuantizedWeight(
            _copy(qweight.qweight[n0:n1]), _copy(qweight.scales[:, n0:n1]),
            None if qweight.zeros is None else _copy(qweight.zeros[:, n0:n1]),
            group_size=g, n=n1 - n0, k=k, dtype=qweight.dtype,
            perm=None if qweight.perm is None else _copy(qweight.perm))

    k0, k1 = shard_range(k, rank, world_size, "K")
    ks = k1 - k0
    if ks % 64:
        raise ValueError(f"world_size {world_size} leaves each rank K = {ks} columns, not a "
                         "multiple of 64 (the packed layout's tile columns)")
    per_column = g == k
    if not per_column and ks % g:
        raise ValueError(f"groups of group_size {g} would straddle the shards: K / world_size = "
                         f"{ks} is not a multiple of {g}")
    perm = None
    if qweight.perm is not None:
        p = _host_index(qweight.perm, "perm")
        _check_perm(p, k, "perm")
        local = p[k0:k1]
        if local.min() < k0 or local.max() >= k1:
            j = int(np.argmax((local < k0) | (local >= k1)))
            raise ValueError(
                f"act-order weight: row-parallel (dim 1) shard {rank} of {world_size} holds "
                f"stored columns [{k0}, {k1}) but perm[{k0 + j}] = {int(local[j])} reads an input "
                "column of another shard; fold the permutation into the previous column-parallel "
                "layer first (w4a16.parallel.fold_act_order)")
        local = local - k0
        if not np.array_equal(local, np.arange(ks)):
            perm = _as_index_like(local, qweight.perm)
    tiles = qweight.qweight.reshape(n // 16, k // 64, 512)[:, k0 // 64:k1 // 64]
    q = _copy(tiles).reshape(n, ks // 2)
    if per_column:
        s, z, gs = _copy(qweight.scales), qweight.zeros, ks
        z = None if z is None else _copy(z)
    else:
        g0, g1 = k0 // g, k1 // g
        s, gs = _copy(qweight.scales[g0:g1]), g
        z = None if qweight.zeros is None else _copy(qweight.zeros[g0:g1])
    return QuantizedWeight(q, s, z, group_size=gs, n=n, k=ks, dtype=qweight.dtype, perm=perm)


def shard_bias(bias: Optional[Array], rank: int, world_size: int, dim: int) -> Optional[Array]:
    """Rank's part of a ``[N]`` bias (a copy), to go with :func:`shard` of the same dim.

    dim 0 (column-parallel): elements ``[n0, n1)``. dim 1 (row-parallel): the whole bias on rank
    0, None on the others (the all-reduce adds it once). None stays None.

    Raises:
        ValueError: a bad dim, rank or world_size, or world_size not dividing N.
    """
    _check_rank(rank, world_size)
    if isinstance(dim, bool) or dim not in (0, 1):
        raise ValueError(f"dim {dim!r} must be 0 (column-parallel) or 1 (row-parallel)")
    if bias is None:
        return None
    if dim == 1:
        return _copy(bias) if rank == 0 else None
    n0, n1 = shard_range(int(bias.shape[0]), rank, world_size, "the bias's N")
    return _copy(bias[n0:n1])


def permute_rows(qweight: QuantizedWeight, order: Array) -> QuantizedWeight:
    """The weight with its output features (rows) reordered: new row ``i`` is old row
    ``order[i]`` (the codes through the C unpack / pack, scales and zeros by column).

    Exact: ``permute_rows(w, o).dequantize() == w.dequantize()[o]``. The act-order ``perm``
    (over K) is kept. The result is of the input's kind, on its device.

    Raises:
        ValueError: order is not a permutation of ``0..N-1``.
    """
    o = _host_index(order, "order")
    _check_perm(o, qweight.n, "order")
    codes = unpack(qweight.qweight, qweight.n, qweight.k)
    if _is_torch(codes):
        codes = codes.numpy()
    packed = pack(np.ascontiguousarray(codes[o]))
    if qweight.is_torch:
        import torch
        dev = qweight.qweight.device
        packed = torch.from_numpy(packed).to(dev)
        idx = torch.from_numpy(o).to(qweight.scales.device)
        s = qweight.scales.index_select(1, idx).contiguous()
        z = None if qweight.zeros is None else qweight.zeros.index_select(1, idx).contiguous()
    else:
        s = np.ascontiguousarray(np.asarray(qweight.scales)[:, o])
        z = None if qweight.zeros is None else np.ascontiguousarray(np.asarray(qweight.zeros)[:, o])
    return QuantizedWeight(packed, s, z, group_size=qweight.group_size, n=qweight.n,
                           k=qweight.k, dtype=qweight.dtype,
                           perm=None if qweight.perm is None else _copy(qweight.perm))


def fold_act_order(previous: Sequence[QuantizedWeight], following: QuantizedWeight,
                   biases: Optional[Sequence[Optional[Array]]] = None
                   ) -> Tuple[List[QuantizedWeight], QuantizedWeight, List[Optional[Array]]]:
    """Fold a row-parallel layer's act-order permutation into the previous layers' output rows.

    ``following`` (e.g. an MLP's down projection, ``[H, I]``) reads stored column ``j`` from input
    feature ``perm[j]``. Reordering the rows of every layer in ``previous`` (gate and up,
    ``[I, H]`` each) by ``perm`` makes them emit feature ``perm[j]`` at position ``j``, so
    ``following`` then needs no gather: its ``perm`` becomes None and it can be split along K.
    Valid only where what lies between the layers acts on each feature alone, as the Llama MLP's
    ``act(gate(x)) * up(x)`` does (not attention's softmax over heads, which is why o_proj's
    permutation cannot be folded into v_proj in general). Fold the whole weights, then shard.

    Args:
        previous: the layers whose outputs feed ``following`` (their N == following's K).
        following: the act-order weight; returned as is (no copies) where its perm is None.
        biases: the previous layers' ``[N]`` biases (None entries allowed), permuted alike.

    Returns:
        ``(previous', following', biases')``: numerically the same function
        (``following'(act(gate'(x)) * up'(x)) == following(act(gate(x)) * up(x))``).

    Raises:
        ValueError: a previous layer's N differs from following's K, biases of a different
            count, or a perm that is not a permutation.
    """
    prev = list(previous)
    bs: List[Optional[Array]] = [None] * len(prev) if biases is None else list(biases)
    if len(bs) != len(prev):
        raise ValueError(f"{len(bs)} biases given for {len(prev)} previous layers")
    for i, p in enumerate(prev):
        if p.n != following.k:
            raise ValueError(f"previous[{i}] has N = {p.n} outputs but the following layer has "
                             f"K = {following.k} inputs")
    if following.perm is None:
        return prev, following, bs
    perm = _host_index(following.perm, "perm")
    _check_perm(perm, following.k, "perm")
    new_prev = [permute_rows(p, perm) for p in prev]
    new_bs: List[Optional[Array]] = []
    for b in bs:
        if b is None:
            new_bs.append(None)
        elif _is_torch(b):
            import torch
            new_bs.append(b.index_select(0, torch.from_numpy(perm).to(b.device)).contiguous())
        else:
            new_bs.append(np.ascontiguousarray(np.asarray(b)[perm]))
    f = following
    new_following = QuantizedWeight(f.qweight, f.scales, f.zeros, group_size=f.group_size,
                                    n=f.n, k=f.k, dtype=f.dtype, perm=None)
    return new_prev, new_following, new_bs


# --- torch side ---------------------------------------------------------------------------------

try:
    import torch as _torch_mod
    import torch.distributed as _dist
    from torch import nn as _tnn
except ImportError:  # torch is optional: the host functions above work without it
    _torch_mod = None  # type: ignore[assignment]

if _torch_mod is not None:
    from .nn import Linear as _QLinear

    __all__ += _TORCH_NAMES

    def _world(group: Any, rank: Optional[int], world_size: Optional[int]) -> Tuple[int, int]:
        """(rank, world_size): the given values, else the process group's."""
        if rank is None or world_size is None:
            if not (_dist.is_available() and _dist.is_initialized()):
                raise ValueError("rank and world_size are needed when torch.distributed is not "
                                 "initialised")
            rank = _dist.get_rank(group) if rank is None else rank
            world_size = _dist.get_world_size(group) if world_size is None else world_size
        return _check_rank(rank, world_size)

    def _to_torch(qw: QuantizedWeight, device: Any) -> QuantizedWeight:
        return qw.to(device) if device is not None else (qw if qw.is_torch else qw.to_torch())

    class _ParallelLinear(_tnn.Module):
        """What both parallel linears share: the local shard, the rank and the constructors."""

        _dim = 0  # the dim of :func:`shard` that the subclass splits

        def __init__(self, local: _QLinear, rank: int, world_size: int, group: Any) -> None:
            super().__init__()
            self.local = local
            self.rank, self.world_size = _check_rank(rank, world_size)
            self.group = group

        @classmethod
        def from_quantized(cls, qweight: QuantizedWeight, bias: Optional[Any] = None,
                           rank: Optional[int] = None, world_size: Optional[int] = None, *,
                           group: Any = None, device: Any = None, **options: Any) -> Any:
            """Shard the whole qweight ``[N, K]`` and its bias ``[N]`` (:func:`shard`,
            :func:`shard_bias`) for rank, onto device (default: where qweight is).

            rank / world_size default to ``group``'s (torch.distributed must then be
            initialised); options are the class's (``gather_output`` / ``input_is_parallel``).
            Raises what :func:`shard` raises.
            """
            rank, world_size = _world(group, rank, world_size)
            qw = _to_torch(shard(qweight, rank, world_size, cls._dim), device)
            b = shard_bias(bias, rank, world_size, cls._dim)
            return cls(_QLinear.from_quantized(qw, b), rank, world_size, group=group, **options)

        @classmethod
        def from_linear(cls, linear: _QLinear, rank: Optional[int] = None,
                        world_size: Optional[int] = None, **kwargs: Any) -> Any:
            """Shard a whole :class:`w4a16.nn.Linear` (keyword arguments as from_quantized)."""
            return cls.from_quantized(linear.qweight_info(), linear.bias, rank, world_size,
                                      **kwargs)

    class ColumnParallelLinear(_ParallelLinear):
        """Column-parallel 4-bit linear: rank holds output features ``[n0, n1)`` of ``[N, K]``.

        ``forward(x)``: ``x`` ``[..., K]`` (the whole input, on every rank) -> ``[..., N / ws]``,
        this rank's slice; with ``gather_output`` the whole ``[..., N]`` (all ranks' slices in
        rank order, one ``all_gather_into_tensor`` over ``group``). Act-order: the local
        :class:`w4a16.nn.Linear` keeps the whole K permutation and gathers x as usual.

        Build with ``ColumnParallelLinear.from_quantized(qweight, bias, rank, world_size,
        gather_output=False, group=None, device=None)`` or ``.from_linear(linear, ...)`` from
        the whole weight. Attributes: ``local`` (the :class:`w4a16.nn.Linear` of the shard),
        ``rank``, ``world_size``, ``group``, ``gather_output``, ``in_features`` (K),
        ``out_features`` (N, whole), ``out_start`` / ``out_stop`` (n0, n1).
        """

        _dim = 0

        def __init__(self, local: _QLinear, rank: int, world_size: int, group: Any = None,
                     gather_output: bool = False) -> None:
            super().__init__(local, rank, world_size, group)
            self.gather_output = bool(gather_output)
            self.in_features = local.in_features
            self.out_features = local.out_features * self.world_size
            self.out_start = self.rank * local.out_features
            self.out_stop = self.out_start + local.out_features

        def forward_local(self, x: "_torch_mod.Tensor") -> "_torch_mod.Tensor":
            """This rank's output slice ``[..., N / world_size]`` (no communication)."""
            return self.local(x)

        def forward(self, x: "_torch_mod.Tensor") -> "_torch_mod.Tensor":
            y = self.local(x)
            if not self.gather_output or self.world_size == 1:
                return y
            n_local = y.shape[-1]
            y2 = y.reshape(-1, n_local).contiguous()
            m = y2.shape[0]
            parts = y2.new_empty((self.world_size * m, n_local))  # ranks stacked along rows
            _dist.all_gather_into_tensor(parts, y2, group=self.group)
            out = parts.view(self.world_size, m, n_local).transpose(0, 1)
            return out.reshape(*y.shape[:-1], self.out_features)

        def extra_repr(self) -> str:
            return (f"rank={self.rank}, world_size={self.world_size}, in_features="
                    f"{self.in_features}, out_features={self.out_features} "
                    f"[{self.out_start}:{self.out_stop}], gather_output={self.gather_output}")

    class RowParallelLinear(_ParallelLinear):
        """Row-parallel 4-bit linear: rank holds input features ``[k0, k1)`` of ``[N, K]``.

        ``forward(x)``: ``x`` ``[..., K / ws]`` (this rank's input slice, e.g. a column-parallel
        layer's output) or, with ``input_is_parallel=False``, the whole ``[..., K]`` (sliced
        here) -> ``[..., N]``, the sum over ranks (``dist.all_reduce`` over ``group``, in place;
        capturable in a CUDA graph once the communicator exists). The bias is added by rank 0's
        GEMM only. Act-order weights must have been folded (:func:`fold_act_order`) or have a
        permutation within each shard.

        Build with ``RowParallelLinear.from_quantized(qweight, bias, rank, world_size,
        input_is_parallel=True, group=None, device=None)`` or ``.from_linear(linear, ...)`` from
        the whole weight. Attributes: ``local`` (the :class:`w4a16.nn.Linear` of the shard),
        ``rank``, ``world_size``, ``group``, ``input_is_parallel``, ``in_features`` (K, whole),
        ``out_features`` (N), ``in_start`` / ``in_stop`` (k0, k1).
        """

        _dim = 1

        def __init__(self, local: _QLinear, rank: int, world_size: int, group: Any = None,
                     input_is_parallel: bool = True) -> None:
            super().__init__(local, rank, world_size, group)
            self.input_is_parallel = bool(input_is_parallel)
            self.in_features = local.in_features * self.world_size
            self.out_features = local.out_features
            self.in_start = self.rank * local.in_features
            self.in_stop = self.in_start + local.in_features

        def forward_local(self, x: "_torch_mod.Tensor") -> "_torch_mod.Tensor":
            """This rank's partial sum ``[..., N]`` (bias on rank 0), before the all-reduce."""
            if not self.input_is_parallel:
                if x.shape[-1] != self.in_features:
                    raise ValueError(f"RowParallelLinear: x has {x.shape[-1]} features, expected "
                                     f"the whole K = {self.in_features}")
                x = x[..., self.in_start:self.in_stop]
            return self.local(x)

        def forward(self, x: "_torch_mod.Tensor") -> "_torch_mod.Tensor":
            y = self.forward_local(x)
            if self.world_size > 1:
                _dist.all_reduce(y, group=self.group)
            return y

        def extra_repr(self) -> str:
            return (f"rank={self.rank}, world_size={self.world_size}, in_features="
                    f"{self.in_features} [{self.in_start}:{self.in_stop}], out_features="
                    f"{self.out_features}, input_is_parallel={self.input_is_parallel}")

    def shard_mlp(mlp: "_tnn.Module", rank: Optional[int] = None,
                  world_size: Optional[int] = None, *, group: Any = None, device: Any = None,
                  names: Tuple[str, str, str] = ("gate_proj", "up_proj", "down_proj")
                  ) -> "_tnn.Module":
        """Make a Llama-style MLP ``down(act(gate(x)) * up(x))`` tensor-parallel, in place.

        ``mlp``'s children ``names`` (gate, up, down) must be whole :class:`w4a16.nn.Linear`
        (e.g. after :func:`w4a16.nn.replace_linears`); gate and up become
        :class:`ColumnParallelLinear` (local outputs), down :class:`RowParallelLinear` (all-reduce),
        so ``mlp.forward`` is unchanged and returns the whole output on every rank. Where down
        has an act-order permutation that crosses the shards, it is folded into gate and up first
        (:func:`fold_act_order`). rank / world_size default to ``group``'s; device defaults to
        where the weights are.

        Raises:
            TypeError: a child is missing or not a w4a16.nn.Linear.
            ValueError: what :func:`shard` refuses (named).
        """
        rank, world_size = _world(group, rank, world_size)
        mods = []
        for nm in names:
            m = getattr(mlp, nm, None)
            if not isinstance(m, _QLinear):
                raise TypeError(f"shard_mlp: {type(mlp).__name__}.{nm} is "
                                f"{type(m).__name__}, not a w4a16.nn.Linear")
            mods.append(m)
        gate, up, down = (m.qweight_info() for m in mods)
        bg, bu, bd = (m.bias for m in mods)
        if down.perm is not None:
            try:
                shard(down, rank, world_size, 1)
            except ValueError:
                (gate, up), down, (bg, bu) = fold_act_order([gate, up], down, [bg, bu])
        kw = dict(group=group, device=device)
        setattr(mlp, names[0], ColumnParallelLinear.from_quantized(gate, bg, rank, world_size,
                                                                   **kw))
        setattr(mlp, names[1], ColumnParallelLinear.from_quantized(up, bu, rank, world_size,
                                                                   **kw))
        setattr(mlp, names[2], RowParallelLinear.from_quantized(down, bd, rank, world_size, **kw))
        return mlp

    def shard_model(model: "_tnn.Module", rank: Optional[int] = None,
                    world_size: Optional[int] = None, *, group: Any = None, device: Any = None,
                    names: Tuple[str, str, str] = ("gate_proj", "up_proj", "down_proj")
                    ) -> List[str]:
        """:func:`shard_mlp` on every submodule whose ``names`` children are all
        :class:`w4a16.nn.Linear`; returns the sharded modules' names. Other layers (attention,
        embeddings, norms) stay whole on every rank, which is correct (replicated)."""
        rank, world_size = _world(group, rank, world_size)
        found = [(nm, m) for nm, m in model.named_modules()
                 if all(isinstance(getattr(m, c, None), _QLinear) for c in names)]
        for _, m in found:
            shard_mlp(m, rank, world_size, group=group, device=device, names=names)
        return [nm for nm, _ in found]

else:  # pragma: no cover - without torch
    def __getattr__(name: str) -> Any:
        if name in _TORCH_NAMES:
            raise ImportError(f"w4a16.parallel.{name} needs torch (pip install torch)")
        raise AttributeError(f"module 'w4a16.parallel' has no attribute {name!r}")
