"""Selection from Python: the kernel registry, the library's environment, and tuning.

Wraps ``w4a16_kernel_get`` / ``w4a16_kernel_count`` (the registry), ``w4a16_cache_env_current`` and
``w4a16_cache_default_path`` (what :func:`info` reports) and ``w4a16_tune`` (profile a problem on the
current GPU and store its ranking in the persisted config cache, which ``torch.ops.w4a16.gemm`` and
every other kernel-NULL call then use).
"""

from __future__ import annotations

import ctypes
import fnmatch
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from . import _dtypes, _gemm
from ._lib import CACHE_ENV, PROBLEM, PROFILE_OPTIONS, PROFILE_RESULT, KERNEL_DESC, check, lib

__all__ = ["KernelInfo", "kernels", "info", "tune", "TuneResult"]

_FAMILIES = {0: "sm80", 1: "sm90", 2: "gemv"}
_SCHEDULES = {0: "multistage", 1: "cooperative", 2: "pingpong", 3: "gemv", 4: "gemv_tma"}


@dataclass(frozen=True)
class KernelInfo:
    """One registered kernel (``w4a16_kernel_desc``); tiles in the kernel's orientation.

    ``tile_n`` runs along N (weights), ``tile_m`` along M (tokens), ``tile_k`` along K; the
    cluster likewise. ``sm_min`` / ``sm_max``: compute capabilities (major*10+minor) it runs on.
    ``n_multiple`` / ``k_multiple``: what N and K must be multiples of (a last tile may be part-full;
    e.g. 16 and 64), or the tile's ``tile_n x cluster_n`` and ``tile_k`` where it needs whole tiles.
    """

    name: str
    family: str
    arch: str
    sm_min: int
    sm_max: int
    dtype: str
    mode: str
    tile: Tuple[int, int, int]
    cluster: Tuple[int, int, int]
    schedule: str
    stages: int
    split_k: int
    threads: int
    smem_bytes: int
    min_group: int
    n_multiple: int
    k_multiple: int


def _kernel_info(d: KERNEL_DESC) -> KernelInfo:
    return KernelInfo(
        name=d.name.decode(), family=_FAMILIES.get(d.family, "?"), arch=d.arch.decode(),
        sm_min=d.sm_min, sm_max=d.sm_max, dtype="bfloat16" if d.dtype == 1 else "float16",
        mode=_dtypes.MODES.get(d.mode, "?"), tile=(d.tile_n, d.tile_m, d.tile_k),
        cluster=(d.cluster_n, d.cluster_m, d.cluster_k),
        schedule=_SCHEDULES.get(d.schedule, "?"), stages=d.stages, split_k=d.split_k,
        threads=d.threads, smem_bytes=d.smem_bytes, min_group=d.min_group,
        n_multiple=d.n_multiple or d.tile_n * d.cluster_n, k_multiple=d.k_multiple or d.tile_k)


def kernels(pattern: Optional[str] = None) -> List[KernelInfo]:
    """The kernels compiled into the library, in name order.

    Args:
        pattern: an ``fnmatch`` pattern on the name (``"*sm90*bf16*"``); None for all.
    """
    L = lib()
    out = []
    for i in range(L.w4a16_kernel_count()):
        d = L.w4a16_kernel_get(i).contents
        name = d.name.decode()
        if pattern is None or fnmatch.fnmatchcase(name, pattern):
            out.append(_kernel_info(d))
    return out


def info() -> Dict[str, Any]:
    """The library's version, built architectures, kernel count, GPU and config cache path.

    Keys: ``version``, ``library`` (the loaded shared object), ``archs`` (built targets, e.g.
    ``["sm80", "sm90a"]``), ``kernels``, ``registry_fingerprint``, ``gpu`` (None without a GPU,
    else ``name``, ``compute_capability``, ``sm_count``, ``cuda_runtime``), ``cache_path``
    (None where no path can be formed), ``torch`` (whether the op is registered).
    """
    from ._lib import library_path
    L = lib()
    ks = kernels()
    env = CACHE_ENV()
    gpu = None
    if L.w4a16_cache_env_current(ctypes.byref(env)) == 0:
        gpu = {"name": env.device_name.decode(errors="replace"),
               "compute_capability": (env.cc // 10, env.cc % 10), "sm_count": env.sm_count,
               "cuda_runtime": env.cuda_runtime}
    buf = ctypes.create_string_buffer(4096)
    path = buf.value.decode() if L.w4a16_cache_default_path(buf, len(buf)) == 0 else None
    from ._weight import _torch
    has_torch = _torch() is not None
    return {"version": L.w4a16_version_string().decode(), "library": str(library_path()),
            "archs": sorted({k.arch for k in ks}), "kernels": len(ks),
            "registry_fingerprint": f"{L.w4a16_registry_fingerprint():016x}", "gpu": gpu,
            "cache_path": path, "torch": has_torch}


@dataclass(frozen=True)
class TuneResult:
    """The profiled ranking of one problem: (m, n, k, group_size, mode, dtype) and its rows.

    ``ranking``: ``(kernel name, median microseconds)`` of the kernels that ran, fastest first
    (the first is what kernel-NULL calls now select for this problem's M bucket).
    """

    m: int
    n: int
    k: int
    group_size: int
    mode: str
    dtype: str
    ranking: Tuple[Tuple[str, float], ...]


Shape = Tuple[int, ...]


def _problems_of(model_or_shapes: Any, ms: Sequence[int], group_size: int, mode: Optional[int],
                 dtype: Any) -> List[Tuple[int, int, int, int, int, str]]:
    """(m, n, k, group_size, mode, dtype) problems of a module's w4a16 linears or of shapes."""
    probs = []
    modules = getattr(model_or_shapes, "modules", None)
    if callable(modules):
        from .nn import Linear
        for mod in model_or_shapes.modules():
            if isinstance(mod, Linear):
                qw = mod.qweight_info()
                for m in ms:
                    probs.append((m, qw.n, qw.k, qw.group_size, qw.mode, qw.dtype))
        if not probs:
            raise ValueError("tune: the module holds no w4a16.nn.Linear (replace its linears "
                             "first, e.g. with w4a16.nn.replace_linears)")
    else:
        dt = _dtypes.canonical_dtype(dtype)
        for shape in model_or_shapes:
            shape = tuple(int(v) for v in shape)
            if len(shape) == 2:
                n, k = shape
                mlist: Iterable[int] = ms
            elif len(shape) == 3:
                mlist, n, k = (shape[0],), shape[1], shape[2]
            else:
                raise ValueError(f"tune: shape {shape} is neither (N, K) nor (M, N, K)")
            g = k if group_size in (-1, 0, None) else group_size
            md = mode if mode is not None else (
                _dtypes.PER_COLUMN_SCALE_ONLY if g == k else _dtypes.FINEGRAINED_SCALE_ONLY)
            for m in mlist:
                probs.append((m, n, k, g, md, dt))
    seen, out = set(), []
    for p in probs:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def tune(model_or_shapes: Any, ms: Sequence[int] = (1, 16, 64, 256, 1024, 4096),
         group_size: int = 128, mode: Optional[int] = None, dtype: Any = "bfloat16",
         warmup: int = 0, iterations: int = 0, progress: bool = True) -> List[TuneResult]:
    """Profile problems on the current GPU and store the fastest kernels in the config cache.

    Each problem is timed by the library's profiler (``w4a16_tune``: random inputs, weights
    rotating out of L2, CUDA-graph replays, median over rounds) and its ranking stored under its
    key (M bucket, N, K, group size, mode, dtype) in the persisted cache (``info()["cache_path"]``),
    which later kernel-NULL calls — ``torch.ops.w4a16.gemm`` among them — read. Slow: seconds a
    problem. Not for use while other work runs on the GPU.

    Args:
        model_or_shapes: a ``torch.nn.Module`` (its ``w4a16.nn.Linear`` layers give N, K, group
            size, mode and dtype), or an iterable of ``(N, K)`` or ``(M, N, K)`` shapes.
        ms: the M values to tune each ``(N, K)`` for (one per M bucket of the cache).
        group_size, mode, dtype: of shapes given as tuples (``group_size=-1`` for per-column;
            mode None: scale-only).
        warmup, iterations: profiler options (0 = the library's defaults).
        progress: show a progress bar (tqdm, where installed).

    Returns:
        One :class:`TuneResult` per problem.

    Raises:
        W4A16Error: the profiler's status (NO_DEVICE, NO_KERNEL for a shape no kernel runs, ...).
    """
    probs = _problems_of(model_or_shapes, ms, group_size, mode, dtype)
    it: Iterable = probs
    if progress:
        try:
            from tqdm import tqdm
            it = tqdm(probs, desc="w4a16 tune", unit="problem")
        except ImportError:
            pass
    L = lib()
    opts = PROFILE_OPTIONS(warmup=warmup, iterations=iterations, rotate_min_bytes=0, seed=0)
    cap = 16
    rows = (PROFILE_RESULT * cap)()
    got = ctypes.c_int(0)
    results = []
    for m, n, k, g, md, dt in it:
        prob = PROBLEM(m=m, n=n, k=k, lda=0, ldd=0,
                       group_size=0 if md == _dtypes.PER_COLUMN_SCALE_ONLY else g, mode=md,
                       dtype=_dtypes.c_dtype(dt), has_bias=0)
        check(L.w4a16_tune(ctypes.byref(prob), ctypes.byref(opts), rows, cap, ctypes.byref(got)))
        ranking = tuple((rows[i].kernel.contents.name.decode(), float(rows[i].median_us))
                        for i in range(got.value) if rows[i].status == 0)
        results.append(TuneResult(m, n, k, g, _dtypes.MODES[md], dt, ranking))
    _gemm.forget_workspace_sizes()
    return results

