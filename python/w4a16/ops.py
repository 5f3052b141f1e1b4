"""``torch.ops.w4a16.gemm``: the W4A16 GEMM as a PyTorch operator.

Registered with ``torch.library`` (``define`` + a CUDA ``impl`` + ``register_fake``) when
``w4a16`` is imported where torch is importable. Schema::

    w4a16::gemm(Tensor a, Tensor w, Tensor scales, Tensor? zeros=None, Tensor? bias=None,
                int group_size=128, float alpha=1.0, Tensor? perm=None) -> Tensor
    w4a16::gemm.out(Tensor a, Tensor w, Tensor scales, Tensor? zeros=None, Tensor? bias=None,
                    int group_size=128, float alpha=1.0, Tensor? perm=None, *,
                    Tensor(a!) out) -> ()

computing ``out = alpha * a @ dequant(w).T (+ bias)`` (``torch.nn.functional.linear``'s
convention), or ``alpha * a[..., perm] @ dequant(w).T (+ bias)`` where perm is given, with fp32
accumulation:

- ``a``: ``[..., K]`` float16 or bfloat16 on a CUDA device; the leading dims are flattened to M
  rows, which must be one strided view (no copy is made): last dim contiguous, row stride a
  multiple of 8 elements, 16-byte aligned data.
- ``w``: ``[N, K/2]`` uint8 packed by the library (``w4a16.pack`` / ``w4a16.quantize``),
  contiguous; N % 16 == 0, K % 64 == 0.
- ``scales``: ``[G, N]`` in ``a``'s dtype, contiguous; G = K / group_size (G = 1 and
  ``group_size`` -1, 0 or K: one scale per column).
- ``zeros``: ``[G, N]`` float zero points ``z = -s * zq`` in ``a``'s dtype, or None; given, the
  mode is FINEGRAINED_SCALE_AND_ZEROS (``w = s * q + z``), else ``w = s * (q - 8)``.
- ``bias``: ``[N]`` in ``a``'s dtype, or None.
- ``perm`` (act-order): int32 ``[K]`` on ``a``'s device, contiguous, 16-byte aligned data, a
  permutation of ``0..K-1``, or None. An act-order (GPTQ ``desc_act``) checkpoint's weight is
  stored with its K columns sorted by group, ``perm = argsort(g_idx)``
  (:attr:`w4a16.QuantizedWeight.perm`), so the product takes ``a``'s columns in that order:
  ``out = a[..., perm] @ W.T``. Like ``w`` it is read on the device only (graph-safe) and must
  not be written by the kernel just before the op on the stream (programmatic dependent launch,
  include/w4a16/w4a16.h "Ordering"). An index outside ``[0, K)`` gives NaN in ``out``, never a
  fault. The library gathers ``a`` into the workspace first (``w4a16_gather_k``, one more
  kernel, as ``torch.ops.w4a16.gather_k`` then this op would), except at M = 1 on sm_90, where
  the selected TMA GEMV gathers the row itself where it can (include/w4a16/w4a16.h ``a_perm``).
- ``out`` (the ``.out`` overload): ``[..., N]`` in ``a``'s dtype, last dim contiguous, row stride
  a multiple of 8, on ``a``'s device; only its ``[M, N]`` elements are written.

Every call reads the current CUDA stream of ``a``'s device, launches one kernel (two where the
library splits K, one more where it gathers for ``perm``) and never synchronises. The call's first
kernel launches in plain stream order (:data:`GEMM_FLAGS` = ``W4A16_GEMM_NO_PDL``,
include/w4a16/w4a16.h): in a torch program the kernel before the op is torch's, which does not let
its dependents launch early, and after such a kernel a programmatic dependent launch only starts
later (docs/PERFORMANCE.md, "Programmatic dependent launch"); the kernels the library chains inside
the call keep it. The library selects the kernel (config cache, else heuristic; ``w4a16.tune``
fills the cache). Workspace, where the selected kernel splits K or ``perm`` is given (the gathered
``[M, K]`` activations, M*K*2 bytes rounded up to 256): outside CUDA-graph capture from torch's
caching allocator (stream-ordered, so concurrent streams never share it); inside capture, a
per-device buffer allocated before the capture (grown to the largest size an eager call has
needed, or by :func:`reserve_workspace`), so nothing but the output is allocated in a captured
graph. Graphs holding the op must not be replayed concurrently on different streams (they share
that buffer). A captured graph holds the buffer's address, not the tensor, so a buffer that a
capture has used and that a larger need later replaces is kept for the life of the process (the
graphs may replay it); reserving the largest size before the first capture keeps to one buffer. A
capture that needs more workspace than reserved runs the kernel without splitting
K (correct, slower on problems of few output tiles); one with ``perm`` whose gathered activations
do not fit raises ``RuntimeError`` (run the op eagerly once before capturing, or reserve).

``torch.ops.w4a16.grouped_gemm`` (mixture of experts, include/w4a16/w4a16.h "Grouped GEMM")::

    w4a16::grouped_gemm(Tensor a, Tensor w, Tensor scales, Tensor? zeros, Tensor offsets,
                        Tensor? row_index=None, Tensor? row_scale=None, int group_size=128,
                        float alpha=1.0, Tensor(a!)? status=None) -> Tensor

computes, for each expert e and grouped row r in ``[offsets[e], offsets[e+1])``,
``out[r] = alpha * row_scale[r] * a[row_index[r]] @ dequant(w[e]).T``: ``a`` ``[T, K]`` (row
stride a multiple of 8); ``w`` ``[E, N, K/2]`` uint8 (each expert packed as the dense op's
``w``); ``scales`` / ``zeros`` ``[E, G, N]``; ``offsets`` int32 or int64 ``[E + 1]`` on the
device (never read by the host: graph-safe); ``row_index`` int32 ``[R]`` or None (then R = T and
``a`` is in grouped order); ``row_scale`` float32 ``[R]`` or None; ``status`` int32 ``[1]``, or
None: written by the kernel (0, or the W4A16_GROUPED_BAD_* bits of bad offsets or row indices,
whose experts or rows are skipped). Returns ``[R, N]``; rows of no expert are left unwritten.
Launched with :data:`GEMM_FLAGS` as the dense op (in a MoE layer the kernels before it are
torch's: the router's sort and the activation). Workspace, with a ``row_index`` and many rows an
expert (the Hopper form's 256-token tile, which takes its rows gathered into grouped order by a
kernel before it: R*K*2 bytes), as the dense op's: from torch's caching allocator outside capture,
the capture buffer inside (there, a buffer too small for it selects a kernel that gathers the
rows itself; correct, slower).

Errors: ``TypeError`` / ``ValueError`` name the argument and value (wrong dtype, device, shape,
stride); :class:`w4a16.W4A16Error` carries the library's status and message (e.g. a misaligned
pointer, or ``NO_KERNEL`` for a shape no kernel of the build runs). Nothing is written on a
refusal. ``M = 0`` returns an empty ``[..., N]`` output without a launch.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

import torch
from torch import Tensor

from . import _dtypes, _gemm
from ._lib import GEMM_NO_PDL

__all__ = ["gemm", "grouped_gemm", "reserve_workspace"]

_C_DTYPE = {torch.float16: 0, torch.bfloat16: 1}
_SCHEMA_ARGS = ("Tensor a, Tensor w, Tensor scales, Tensor? zeros=None, Tensor? bias=None, "
                "int group_size=128, float alpha=1.0, Tensor? perm=None")

# The capture buffer of each device (index); the devices whose buffer a capture has taken; the
# buffers such captures took that a larger one replaced (their graphs hold the raw addresses).
_graph_ws: Dict[int, Tensor] = {}
_graph_ws_captured: Set[int] = set()
_graph_ws_kept: Dict[int, List[Tensor]] = {}

#: ``w4a16_gemm_args.flags`` of every ``gemm`` and ``grouped_gemm`` call: ``W4A16_GEMM_NO_PDL`` (see the module
#: docstring). Read at each call (a CUDA graph keeps what its capture read); benchmarks set it to 0
#: to time the programmatic launch (``bench/decode_bench.py --pdl``).
GEMM_FLAGS: int = GEMM_NO_PDL

_raw_stream: Callable[[int], int]
_current_device: Callable[[], int]
try:
    _raw_stream = torch._C._cuda_getCurrentRawStream  # the stream handle without a Stream object
    _current_device = torch._C._cuda_getDevice  # torch.cuda.current_device() without its checks
except AttributeError:  # pragma: no cover - older torch or a build without CUDA
    def _current_raw_stream(index: int) -> int:
        return torch.cuda.current_stream(index).cuda_stream
    _raw_stream = _current_raw_stream
    _current_device = torch.cuda.current_device


def reserve_workspace(nbytes: int, device: Optional[torch.device] = None) -> None:
    """Allocate (or grow to) nbytes of the workspace that captured graphs use on device.

    Call before capturing a CUDA graph whose op calls were never run eagerly (an eager call grows
    it by itself). Not during a capture. A buffer that earlier captures took stays allocated when
    this one replaces it (their graphs replay against it).
    """
    dev = torch.device("cuda", torch.cuda.current_device()) if device is None else \
        torch.device(device)
    idx = dev.index if dev.index is not None else torch.cuda.current_device()
    _grow_graph_ws(idx, int(nbytes), dev)


def _grow_graph_ws(index: int, nbytes: int, device: torch.device) -> None:
    """Grow device index's capture buffer to at least nbytes (on device).

    The buffer it replaces stays alive in ``_graph_ws_kept`` where a capture has taken it: a
    graph captured with it replays against its address, which freeing would hand to other
    tensors (or, after ``torch.cuda.empty_cache``, to no allocation at all).
    """
    cur = _graph_ws.get(index)
    if cur is not None and cur.numel() >= nbytes:
        return
    if cur is not None and index in _graph_ws_captured:
        _graph_ws_kept.setdefault(index, []).append(cur)
        _graph_ws_captured.discard(index)
    _graph_ws[index] = torch.empty(nbytes, dtype=torch.uint8, device=device)


def _capture_ws(index: int) -> Tuple[int, int, Optional[Tensor]]:
    """(pointer, bytes, tensor) of device index's capture buffer for a call being captured,
    marked as taken by a capture; (0, 0, None) where there is none."""
    ws = _graph_ws.get(index)
    if ws is None:
        return 0, 0, None
    _graph_ws_captured.add(index)
    return ws.data_ptr(), ws.numel(), ws


def _workspace(index: int, need: int, device: torch.device) -> Tuple[int, int, Optional[Tensor]]:
    """(pointer, bytes, tensor to keep alive) of the workspace of a call that wants need bytes.

    Outside capture a fresh block of torch's caching allocator (and the capture buffer grown to
    need); inside capture the capture buffer as it is (possibly smaller, or none: (0, 0, None)).
    """
    if not need:
        return 0, 0, None
    if torch.cuda.is_current_stream_capturing():
        return _capture_ws(index)
    ws = torch.empty(need, dtype=torch.uint8, device=device)
    _grow_graph_ws(index, need, device)
    return ws.data_ptr(), need, ws


def _group_size_of(groups: int, group_size: int, k: int, fn: str, rows: str,
                   scales_shape: str) -> int:
    """The group size that ``groups`` scale rows over K give, checked against ``group_size``.

    One row is one scale per column (``group_size`` -1, 0 or K; K is returned); else K / groups,
    which ``group_size`` must equal. ``fn``, ``rows`` and ``scales_shape`` word the error.
    """
    if groups == 1:
        if group_size not in (-1, 0, k):
            raise ValueError(f"{fn}: scales have {rows} (one scale per column) but "
                             f"group_size = {group_size}; pass -1 (or K = {k})")
        return k
    group = k // groups
    if group_size != group:
        raise ValueError(f"{fn}: group_size = {group_size} but scales {scales_shape} over "
                         f"K = {k} give groups of {group}")
    return group


def _check(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor],
           bias: Optional[Tensor], group_size: int,
           perm: Optional[Tensor] = None) -> Tuple[int, int, int, int, int]:
    """Shape, dtype and layout checks on (possibly fake) tensors: (M, N, K, group, mode).

    Each tensor attribute is read once: this runs on every call of the op.
    """
    adt = a.dtype
    if adt not in _C_DTYPE:
        raise TypeError(f"w4a16.gemm: a has dtype {adt}; it must be float16 or bfloat16")
    sa = a.shape
    if len(sa) < 1:
        raise ValueError("w4a16.gemm: a must have at least one dimension [..., K]")
    if w.dtype != torch.uint8:
        raise TypeError(f"w4a16.gemm: w has dtype {w.dtype}; it must be uint8 (packed [N, K/2])")
    sw = w.shape
    if len(sw) != 2:
        raise ValueError(f"w4a16.gemm: w has shape {tuple(sw)}; it must be [N, K/2]")
    k = sa[-1]
    n = sw[0]
    if sw[1] * 2 != k:
        raise ValueError(f"w4a16.gemm: w has shape {tuple(sw)} but a has K = {k}: w must be "
                         f"[N, K/2] = [N, {k // 2}]")
    if scales.dtype != adt:
        raise TypeError(f"w4a16.gemm: scales have dtype {scales.dtype}; they must be a's dtype "
                        f"{adt}")
    ss = scales.shape
    if len(ss) != 2 or ss[1] != n or ss[0] < 1 or k % ss[0]:
        raise ValueError(f"w4a16.gemm: scales have shape {tuple(ss)}; they must be "
                         f"[G, N] = [G, {n}] with G dividing K = {k}")
    groups = ss[0]
    group = _group_size_of(groups, group_size, k, "w4a16.gemm", "one row",
                           f"[{groups}, {n}]")
    if zeros is not None:
        if zeros.dtype != adt:
            raise TypeError(f"w4a16.gemm: zeros have dtype {zeros.dtype}; they must be a's "
                            f"dtype {adt}")
        sz = zeros.shape
        if sz != ss:
            raise ValueError(f"w4a16.gemm: zeros have shape {tuple(sz)}; they must "
                             f"match scales {tuple(ss)}")
        mode = _dtypes.FINEGRAINED_SCALE_AND_ZEROS
    else:
        mode = (_dtypes.PER_COLUMN_SCALE_ONLY if groups == 1
                else _dtypes.FINEGRAINED_SCALE_ONLY)
    if bias is not None:
        if bias.dtype != adt:
            raise TypeError(f"w4a16.gemm: bias has dtype {bias.dtype}; it must be a's dtype "
                            f"{adt}")
        sb = bias.shape
        if len(sb) != 1 or sb[0] != n:
            raise ValueError(f"w4a16.gemm: bias has shape {tuple(sb)}; it must be "
                             f"[N] = [{n}]")
    if perm is not None:
        if perm.dtype != torch.int32:
            raise TypeError(f"w4a16.gemm: perm has dtype {perm.dtype}; it must be torch.int32")
        sp = perm.shape
        if len(sp) != 1 or sp[0] != k:
            raise ValueError(f"w4a16.gemm: perm has shape {tuple(sp)}; it must be "
                             f"[K] = [{k}]")
        if not perm.is_contiguous():
            raise ValueError(f"w4a16.gemm: perm (shape {tuple(sp)}, strides "
                             f"{tuple(perm.stride())}) must be contiguous")
    if len(sa) == 2:
        m = sa[0]
    else:
        m = 1
        for d in sa[:-1]:
            m *= d
    return m, n, k, group, mode


def _rows_view(x: Tensor, k: int, name: str, op: str = "w4a16.gemm",
               ld_multiple: int = 8) -> Tuple[Tensor, int]:
    """x as one [M, K] strided view and its row stride in elements (no copy).

    The row stride must be a multiple of ``ld_multiple`` elements; ``op`` names the caller in
    the errors.
    """
    st = x.stride()
    if st[-1] != 1 and x.shape[-1] > 1:
        raise ValueError(f"{op}: {name} has strides {tuple(st)}; its last "
                         "dimension must be contiguous (stride 1)")
    if len(st) == 2:
        x2, rows = x, x.shape[0]
    else:
        try:
            x2 = x.view(-1, k)
        except RuntimeError:
            raise ValueError(f"{op}: {name} of shape {tuple(x.shape)} and strides "
                             f"{tuple(st)} is not one strided [M, K] view; make it "
                             "contiguous") from None
        st, rows = x2.stride(), x2.shape[0]
    ld = st[0] if rows > 1 else k
    if ld % ld_multiple:
        raise ValueError(f"{op}: {name} has a row stride of {ld} elements; it must be a "
                         f"multiple of {ld_multiple} ({2 * ld_multiple} bytes)")
    return x2, ld


def _launch(dims: Tuple[int, int, int, int, int], a: Tensor, w: Tensor, scales: Tensor,
            zeros: Optional[Tensor], bias: Optional[Tensor], alpha: float, out: Tensor,
            perm: Optional[Tensor] = None) -> None:
    """Check what _check left (devices, layouts, out), then run the library on out's [M, N]."""
    m, n, k, group, mode = dims
    index = a.get_device()  # -1 on the CPU
    if index < 0:
        raise ValueError(f"w4a16.gemm: a is on {a.device}; the op runs on CUDA devices")
    for name, t in (("w", w), ("scales", scales), ("zeros", zeros), ("bias", bias),
                    ("out", out), ("perm", perm)):
        if t is not None and t.get_device() != index:
            raise ValueError(f"w4a16.gemm: {name} is on {t.device} but a is on {a.device}")
    for name, t in (("w", w), ("scales", scales), ("zeros", zeros), ("bias", bias)):
        if t is not None and not t.is_contiguous():
            raise ValueError(f"w4a16.gemm: {name} (shape {tuple(t.shape)}, strides "
                             f"{tuple(t.stride())}) must be contiguous")
    if out.dtype != a.dtype:
        raise TypeError(f"w4a16.gemm: out has dtype {out.dtype}; it must be a's dtype {a.dtype}")
    want = a.shape[:-1] + (n,)
    if out.shape != want:
        raise ValueError(f"w4a16.gemm: out has shape {tuple(out.shape)}; it must be "
                         f"{tuple(want)}")
    if m == 0:
        return
    a2, lda = _rows_view(a, k, "a")
    d2, ldd = _rows_view(out, n, "out")
    dtype = _C_DTYPE[a.dtype]
    if index != _current_device():
        with torch.cuda.device(index):
            return _call(a2, w, scales, zeros, bias, alpha, d2, m, n, k, lda, ldd, group, mode,
                         dtype, index, perm)
    _call(a2, w, scales, zeros, bias, alpha, d2, m, n, k, lda, ldd, group, mode, dtype, index,
          perm)


def _call(a2: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor], bias: Optional[Tensor],
          alpha: float, d2: Tensor, m: int, n: int, k: int, lda: int, ldd: int, group: int,
          mode: int, dtype: int, index: int, perm: Optional[Tensor] = None) -> None:
    """The library call on the current device (index), with its workspace."""
    c_group = 0 if mode == _dtypes.PER_COLUMN_SCALE_ONLY else group
    act_order = 0 if perm is None else 1
    need = _gemm.workspace_bytes(index, m, n, k, c_group, mode, dtype, act_order)
    ws_ptr, ws_bytes, ws = _workspace(index, need, a2.device)  # (ws: alive until the launch)
    if act_order and ws_bytes < need and torch.cuda.is_current_stream_capturing():
        # the gathered activations have no smaller fallback (split-K has: unsplit)
        gather = (m * k * 2 + 255) // 256 * 256
        if ws_bytes < gather:
            raise RuntimeError(
                f"w4a16.gemm: with perm, M = {m}, K = {k} needs {gather} bytes of "
                f"workspace for the gathered activations ({need} with the kernel's "
                f"part) but {ws_bytes} are reserved for CUDA-graph capture on "
                f"cuda:{index}; run the op once eagerly before the capture, or call "
                f"w4a16.ops.reserve_workspace({need})")
    _gemm.gemm_raw(m, n, k, lda, ldd, c_group, mode, dtype, a2.data_ptr(), w.data_ptr(),
                   scales.data_ptr(), 0 if zeros is None else zeros.data_ptr(),
                   0 if bias is None else bias.data_ptr(), d2.data_ptr(), float(alpha), ws_ptr,
                   ws_bytes, _raw_stream(index), 0 if perm is None else perm.data_ptr(),
                   GEMM_FLAGS)


def _grouped_check(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor],
                   offsets: Tensor, row_index: Optional[Tensor], row_scale: Optional[Tensor],
                   group_size: int, status: Optional[Tensor]) -> Tuple[int, ...]:
    """Shape and dtype checks of the grouped op: (E, rows, N, K, group, mode)."""
    fn = "w4a16.grouped_gemm"
    adt = a.dtype
    if adt not in _C_DTYPE:
        raise TypeError(f"{fn}: a has dtype {adt}; it must be float16 or bfloat16")
    if a.dim() != 2:
        raise ValueError(f"{fn}: a has shape {tuple(a.shape)}; it must be [T, K]")
    k = a.shape[1]
    if w.dtype != torch.uint8 or w.dim() != 3 or w.shape[2] * 2 != k:
        raise ValueError(f"{fn}: w has shape {tuple(w.shape)} and dtype {w.dtype}; it must be "
                         f"uint8 [E, N, K/2] = [E, N, {k // 2}]")
    e, n = w.shape[0], w.shape[1]
    if scales.dtype != adt:
        raise TypeError(f"{fn}: scales have dtype {scales.dtype}; they must be a's dtype {adt}")
    ss = scales.shape
    if scales.dim() != 3 or ss[0] != e or ss[2] != n or ss[1] < 1 or k % ss[1]:
        raise ValueError(f"{fn}: scales have shape {tuple(ss)}; they must be [E, G, N] = "
                         f"[{e}, G, {n}] with G dividing K = {k}")
    groups = ss[1]
    group = _group_size_of(groups, group_size, k, fn, "one row per expert", str(tuple(ss)))
    if zeros is not None:
        if zeros.dtype != adt or zeros.shape != ss:
            raise ValueError(f"{fn}: zeros have shape {tuple(zeros.shape)} and dtype "
                             f"{zeros.dtype}; they must match scales {tuple(ss)}, {adt}")
        mode = _dtypes.FINEGRAINED_SCALE_AND_ZEROS
    else:
        mode = (_dtypes.PER_COLUMN_SCALE_ONLY if groups == 1
                else _dtypes.FINEGRAINED_SCALE_ONLY)
    if offsets.dtype not in (torch.int32, torch.int64) or offsets.dim() != 1 or \
            offsets.shape[0] != e + 1:
        raise ValueError(f"{fn}: offsets have shape {tuple(offsets.shape)} and dtype "
                         f"{offsets.dtype}; they must be int32 or int64 [E + 1] = [{e + 1}]")
    if row_index is not None:
        if row_index.dtype != torch.int32 or row_index.dim() != 1:
            raise ValueError(f"{fn}: row_index has shape {tuple(row_index.shape)} and dtype "
                             f"{row_index.dtype}; it must be int32 [R]")
        rows = row_index.shape[0]
    else:
        rows = a.shape[0]
    if row_scale is not None and (row_scale.dtype != torch.float32 or
                                  tuple(row_scale.shape) != (rows,)):
        raise ValueError(f"{fn}: row_scale has shape {tuple(row_scale.shape)} and dtype "
                         f"{row_scale.dtype}; it must be float32 [R] = [{rows}]")
    if status is not None and (status.dtype != torch.int32 or status.numel() < 1):
        raise ValueError(f"{fn}: status has dtype {status.dtype} and {status.numel()} elements; "
                         "it must be int32 with one element at least")
    return e, rows, n, k, group, mode


#: ``_gemm.grouped_gemm_raw``'s arguments before the stream (experts ... status)
_GroupedArgs = Tuple[int, int, int, int, int, int, int, int, int, int, bool, int, int, int, int,
                     int, int, int, int, float, int]


def _grouped_cuda(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor],
                  offsets: Tensor, row_index: Optional[Tensor] = None,
                  row_scale: Optional[Tensor] = None, group_size: int = 128, alpha: float = 1.0,
                  status: Optional[Tensor] = None) -> Tensor:
    e, rows, n, k, group, mode = _grouped_check(a, w, scales, zeros, offsets, row_index,
                                                row_scale, group_size, status)
    out = torch.empty((rows, n), dtype=a.dtype, device=a.device)
    index = a.get_device()
    for name, t in (("w", w), ("scales", scales), ("zeros", zeros), ("offsets", offsets),
                    ("row_index", row_index), ("row_scale", row_scale), ("status", status)):
        if t is not None and t.get_device() != index:
            raise ValueError(f"w4a16.grouped_gemm: {name} is on {t.device} but a is on {a.device}")
        if t is not None and name != "status" and not t.is_contiguous():
            raise ValueError(f"w4a16.grouped_gemm: {name} (shape {tuple(t.shape)}, strides "
                             f"{tuple(t.stride())}) must be contiguous")
    if rows == 0:
        return out
    a2, lda = _rows_view(a, k, "a")
    c_group = 0 if mode == _dtypes.PER_COLUMN_SCALE_ONLY else group
    args: _GroupedArgs = (
        e, rows, n, k, lda, n, a.shape[0], c_group, mode, _C_DTYPE[a.dtype],
        offsets.dtype == torch.int64, a2.data_ptr(), w.data_ptr(), scales.data_ptr(),
        0 if zeros is None else zeros.data_ptr(), offsets.data_ptr(),
        0 if row_index is None else row_index.data_ptr(),
        0 if row_scale is None else row_scale.data_ptr(), out.data_ptr(), float(alpha),
        0 if status is None else status.data_ptr())
    if index != _current_device():
        with torch.cuda.device(index):
            _grouped_call(args, row_index is not None, index, a.device)
    else:
        _grouped_call(args, row_index is not None, index, a.device)
    return out


def _grouped_call(args: _GroupedArgs, gather: bool, index: int, device: torch.device) -> None:
    """The grouped library call on the current device (index), with its workspace."""
    e, rows, n, k = args[0], args[1], args[2], args[3]
    need = _gemm.grouped_workspace_bytes(e, rows, n, k, args[7], args[8], args[9], gather)
    ws_ptr, ws_bytes, ws = _workspace(index, need, device)  # (ws: alive until the launch)
    _gemm.grouped_gemm_raw(*args, _raw_stream(index), flags=GEMM_FLAGS, workspace=ws_ptr,
                           workspace_bytes=ws_bytes)


def _grouped_fake(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor],
                  offsets: Tensor, row_index: Optional[Tensor] = None,
                  row_scale: Optional[Tensor] = None, group_size: int = 128, alpha: float = 1.0,
                  status: Optional[Tensor] = None) -> Tensor:
    _, rows, n, _, _, _ = _grouped_check(a, w, scales, zeros, offsets, row_index, row_scale,
                                         group_size, status)
    return a.new_empty((rows, n))


def _grouped_not_cuda(a: Tensor, *args: object, **kwargs: object) -> Tensor:
    raise ValueError(f"w4a16.grouped_gemm: a is on {a.device}; the op runs on CUDA devices")


# --- registration -------------------------------------------------------------------------------

_lib = torch.library.Library("w4a16", "DEF")
_lib.define(f"gemm({_SCHEMA_ARGS}) -> Tensor")
# the .out overload returns nothing: functionalization (torch.compile, opcheck's AOT test) does
# not take a custom op whose output aliases an input
_lib.define(f"gemm.out({_SCHEMA_ARGS}, *, Tensor(a!) out) -> ()")


def _gemm_cuda(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, group_size: int = 128, alpha: float = 1.0,
               perm: Optional[Tensor] = None) -> Tensor:
    dims = _check(a, w, scales, zeros, bias, group_size, perm)
    out = torch.empty(a.shape[:-1] + (dims[1],), dtype=a.dtype, device=a.device)
    _launch(dims, a, w, scales, zeros, bias, alpha, out, perm)
    return out


def _gemm_out_cuda(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor] = None,
                   bias: Optional[Tensor] = None, group_size: int = 128, alpha: float = 1.0,
                   perm: Optional[Tensor] = None, *, out: Tensor) -> None:
    _launch(_check(a, w, scales, zeros, bias, group_size, perm), a, w, scales, zeros, bias, alpha,
            out, perm)


def _not_cuda(a: Tensor, *args: object, **kwargs: object) -> Tensor:
    raise ValueError(f"w4a16.gemm: a is on {a.device}; the op runs on CUDA devices (move a, w, "
                     "scales, zeros, bias and perm to the GPU)")


def _gemm_fake(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, group_size: int = 128, alpha: float = 1.0,
               perm: Optional[Tensor] = None) -> Tensor:
    _check(a, w, scales, zeros, bias, group_size, perm)
    return a.new_empty(tuple(a.shape[:-1]) + (w.shape[0],))


def _gemm_out_fake(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor] = None,
                   bias: Optional[Tensor] = None, group_size: int = 128, alpha: float = 1.0,
                   perm: Optional[Tensor] = None, *, out: Tensor) -> None:
    _check(a, w, scales, zeros, bias, group_size, perm)


_lib.define("grouped_gemm(Tensor a, Tensor w, Tensor scales, Tensor? zeros, Tensor offsets, "
            "Tensor? row_index=None, Tensor? row_scale=None, int group_size=128, "
            "float alpha=1.0, Tensor(a!)? status=None) -> Tensor")
_lib.impl("grouped_gemm", _grouped_cuda, "CUDA")
_lib.impl("grouped_gemm", _grouped_not_cuda, "CPU")
torch.library.register_fake("w4a16::grouped_gemm", _grouped_fake, lib=_lib)
_lib.impl("gemm", _gemm_cuda, "CUDA")
_lib.impl("gemm.out", _gemm_out_cuda, "CUDA")
_lib.impl("gemm", _not_cuda, "CPU")
_lib.impl("gemm.out", _not_cuda, "CPU")
torch.library.register_fake("w4a16::gemm", _gemm_fake, lib=_lib)
torch.library.register_fake("w4a16::gemm.out", _gemm_out_fake, lib=_lib)


def gemm(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor] = None,
         bias: Optional[Tensor] = None, group_size: int = 128, alpha: float = 1.0,
         perm: Optional[Tensor] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """``torch.ops.w4a16.gemm`` (or ``.out`` when out is given); see the module's docstring.

    ``out = alpha * a[..., perm] @ dequant(w).T (+ bias)``, ``a[..., perm]`` read as ``a`` where
    perm is None. perm (act-order): int32 ``[K]`` on ``a``'s device, contiguous, a permutation of
    ``0..K-1`` (``argsort(g_idx)`` of a checkpoint whose weight columns are stored sorted by
    group); an index outside ``[0, K)`` gives NaN. Returns ``out`` (a new tensor where None).
    """
    if out is None:
        return torch.ops.w4a16.gemm(a, w, scales, zeros, bias, group_size, alpha, perm)
    torch.ops.w4a16.gemm.out(a, w, scales, zeros, bias, group_size, alpha, perm, out=out)
    return out


def grouped_gemm(a: Tensor, w: Tensor, scales: Tensor, zeros: Optional[Tensor], offsets: Tensor,
                 row_index: Optional[Tensor] = None, row_scale: Optional[Tensor] = None,
                 group_size: int = 128, alpha: float = 1.0,
                 status: Optional[Tensor] = None) -> Tensor:
    """``torch.ops.w4a16.grouped_gemm``; see the module's docstring."""
    return torch.ops.w4a16.grouped_gemm(a, w, scales, zeros, offsets, row_index, row_scale,
                                        group_size, alpha, status)
