# GEMV (decode) family tests: split-K determinism, graph capture, long K (tests/test_gpu_gemv.c).
w4a16_add_test(test_gpu_gemv test_gpu_gemv.c)
