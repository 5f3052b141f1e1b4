"""Axes of the configuration space as enums with name tables, and the record type.

Tile convention (stated once, kept everywhere): a kernel tile is written in the
kernel's own orientation. Weights are the register operand of the tensor-core
instruction, so the FIRST tile dimension runs along N of the problem (weight
rows), the SECOND along M (tokens), the THIRD along K.
"""
import dataclasses
import enum
from typing import Optional, Tuple


class Arch(enum.Enum):
    SM80 = "sm80"
    SM90A = "sm90a"


# compute capability range (major*10+minor, inclusive) a build target runs on
ARCH_SM_RANGE = {Arch.SM80: (80, 999), Arch.SM90A: (90, 90)}
# build targets each W4A16_CUDA_ARCHS entry selects: every entry >= 80 builds the
# sm80-class families (compiled for that GPU); 90a also builds the sm90a family
ARCH_FROM_CMAKE = {"80": (Arch.SM80,), "86": (Arch.SM80,), "89": (Arch.SM80,),
                   "90": (Arch.SM80,), "90a": (Arch.SM80, Arch.SM90A),
                   "100": (Arch.SM80,), "120": (Arch.SM80,)}


def archs_from_cmake(entry: str) -> Optional[Tuple[Arch, ...]]:
    """The build targets of one W4A16_CUDA_ARCHS entry ('80', 'sm_80', '8.0', '90a', 'sm_90a',
    '121', ...): any compute capability >= 8.0 builds the sm80-class families (also those not in
    the table above: 8.7, 10.3, 11.0, 12.1); 90a (only) adds the sm90a family. None if the entry is
    not an architecture of 8.0 or later."""
    a = entry.strip().lower()
    for prefix in ("compute_", "sm_", "sm"):
        if a.startswith(prefix):
            a = a[len(prefix):]
            break
    a = a.replace(".", "")
    if a in ARCH_FROM_CMAKE:
        return ARCH_FROM_CMAKE[a]
    num = a[:-1] if a.endswith("a") else a
    if num.isdigit() and int(num) >= 80:
        return (Arch.SM80,)
    return None


class Family(enum.Enum):
    SM80 = "sm80"
    SM90 = "sm90"
    GEMV = "gemv"


FAMILY_C = {Family.SM80: "W4A16_FAMILY_SM80", Family.SM90: "W4A16_FAMILY_SM90",
            Family.GEMV: "W4A16_FAMILY_GEMV"}


class DType(enum.Enum):
    F16 = "f16"
    BF16 = "bf16"


DTYPE_C = {DType.F16: "W4A16_DTYPE_F16", DType.BF16: "W4A16_DTYPE_BF16"}
DTYPE_CUDA = {DType.F16: "__half", DType.BF16: "__nv_bfloat16"}


class QuantMode(enum.Enum):
    PER_COLUMN_SCALE_ONLY = "pc"
    FINEGRAINED_SCALE_ONLY = "fgs"
    FINEGRAINED_SCALE_AND_ZEROS = "fgsz"


MODE_C = {m: "W4A16_" + m.name for m in QuantMode}


class Schedule(enum.Enum):
    MULTISTAGE = "multistage"
    COOPERATIVE = "cooperative"
    PINGPONG = "pingpong"
    GEMV = "gemv"
    GEMV_TMA = "tma"


SCHEDULE_C = {s: "W4A16_SCHEDULE_" + s.name for s in Schedule}


@dataclasses.dataclass(frozen=True, order=True)
class Config:
    """One kernel instantiation. `name` is its identity everywhere."""
    name: str
    family: Family
    arch: Arch
    dtype: DType
    mode: QuantMode
    tile_n: int
    tile_m: int
    tile_k: int
    cluster_n: int = 1
    cluster_m: int = 1
    cluster_k: int = 1
    schedule: Schedule = Schedule.MULTISTAGE
    stages: int = 0
    split_k: int = 1
    threads: int = 128
    smem_bytes: int = 0
    min_group: int = 32
    # N and K must be multiples of these (the kernel predicates part-full last tiles); 0: of the
    # tile (tile_n x cluster_n, tile_k)
    n_multiple: int = 0
    k_multiple: int = 0
    template: str = ""
    # a grouped (mixture-of-experts) kernel: registered in the grouped table, run by
    # w4a16_grouped_gemm (its launch takes struct w4a16_grouped_launch_params)
    grouped: bool = False

    @property
    def sm_min(self) -> int:
        return ARCH_SM_RANGE[self.arch][0]

    @property
    def sm_max(self) -> int:
        return ARCH_SM_RANGE[self.arch][1]

    # C spellings used by the templates
    @property
    def c_family(self) -> str:
        return FAMILY_C[self.family]

    @property
    def c_dtype(self) -> str:
        return DTYPE_C[self.dtype]

    @property
    def cuda_dtype(self) -> str:
        return DTYPE_CUDA[self.dtype]

    @property
    def c_mode(self) -> str:
        return MODE_C[self.mode]

    @property
    def c_schedule(self) -> str:
        return SCHEDULE_C[self.schedule]


def check_pipeline(c: Config, smem_limit: int) -> Tuple[bool, str]:
    """(ok, reason) for the multistage pipeline's two limits every cp.async family shares: at
    least two stages (one filling while one is read) and the shared memory within smem_limit
    bytes."""
    if c.stages < 2:
        return False, "at least 2 stages"
    if c.smem_bytes > smem_limit:
        return False, "shared memory %d > %d" % (c.smem_bytes, smem_limit)
    return True, ""


def kernel_prefix(family: Family, dtype: DType, mode: QuantMode, grouped: bool = False) -> str:
    """The general part of every name: w4a16_<family>_<dtype>_u4_<mode> (grouped kernels:
    w4a16_grouped_<family>_...)."""
    return "w4a16_%s%s_%s_u4_%s" % ("grouped_" if grouped else "", family.value, dtype.value,
                                    mode.value)
