"""w4a16 kernel generator: configurations as records -> validity -> filters -> render.

Stages are separate and testable:
  families.*.enumerate()  the product of each family's axes (records)
  families.*.is_valid()   validity rules (shared memory, registers, alignment, clusters)
  filters.match()         '*'-wildcard include / exclude on the kernel name
  render.emit()           deterministic, write-if-different output, stale files removed
"""
