"""CUDA-core GEMV family for decode (M <= 16). Device code: runtime/cuda/gemv/.
(Placeholder until the decode family lands: enumerates nothing.)"""
from ..model import Arch, Family

FAMILY = Family.GEMV
ARCH = Arch.SM80
TEMPLATE = "gemv_kernel.cu.j2"


def enumerate():
    return iter(())


def is_valid(c):
    return True, ""


def is_default(c):
    return True
