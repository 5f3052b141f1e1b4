# GEMV (decode) family and launch-path tests: split-K determinism, graph capture, long K, stream-K,
# K pair, launch order, unsplit GEMV (tests/test_gpu_gemv.c).
w4a16_add_test(test_gpu_gemv test_gpu_gemv.c)

# The sm_90 TMA GEMV kernels are persistent (one CTA per SM walks units of row blocks); the
# GPU test's small N gives every CTA a single unit, so run them again on a 3-CTA grid
# (W4A16_GEMV_TMA_CTAS, a diagnostic cap) to exercise several units per CTA (uneven counts too).
add_test(NAME test_gpu_kernels_tma_units COMMAND test_gpu_kernels)
set_tests_properties(test_gpu_kernels_tma_units PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1800
                     ENVIRONMENT "W4A16_TEST_FILTER=*_tma;W4A16_GEMV_TMA_CTAS=3")

# The TMA GEMV's generic consumer (bf16 codes biased by 128, w4a16_gemv_tile_mma) ships as the
# A/B alternative to the specialized one (runtime/cuda/gemv/gemv_tma.cuh, W4A16_GEMV_TMA_GENERIC):
# every TMA kernel again with it.
add_test(NAME test_gpu_kernels_tma_generic COMMAND test_gpu_kernels)
set_tests_properties(test_gpu_kernels_tma_generic PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1800
                     ENVIRONMENT "W4A16_TEST_FILTER=*_tma;W4A16_GEMV_TMA_GENERIC=1")
