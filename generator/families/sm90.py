"""Hopper family: TMA + wgmma, warp-specialized (cooperative, pingpong), clusters.

Weights are wgmma's register operand A (tile_n = wgmma M), activations reach
shared memory by TMA and are operand B (tile_m = wgmma N). Device code:
runtime/cuda/sm90/. (Placeholder until the Hopper family lands: enumerates nothing.)
"""
from ..model import Arch, Family

FAMILY = Family.SM90
ARCH = Arch.SM90A
TEMPLATE = "sm90_kernel.cu.j2"


def enumerate():
    return iter(())


def is_valid(c):
    return True, ""


def is_default(c):
    return True
