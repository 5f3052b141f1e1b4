# the grouped (mixture-of-experts) GEMM: argument checks everywhere, every grouped kernel on a GPU
w4a16_add_test(test_grouped test_grouped.c)
