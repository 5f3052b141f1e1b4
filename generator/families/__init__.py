"""Kernel families. Each module defines:
  FAMILY, ARCH, TEMPLATE   what it is and which template renders one instantiation
  enumerate()              every candidate Config of the family (the product of its axes)
  is_valid(cfg)            (ok, reason): validity rules
  is_default(cfg)          membership in the default build set (CI-sized)
"""
from . import gemv, grouped_gemv, grouped_sm80, grouped_sm90, sm80, sm90

FAMILIES = (sm80, sm90, gemv, grouped_gemv, grouped_sm80, grouped_sm90)
