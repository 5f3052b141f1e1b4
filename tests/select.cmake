# Selection tests (heuristic, config cache, the w4a16 command); included by tests/CMakeLists.txt,
# which defines w4a16_add_test(). None needs a GPU.
w4a16_add_test(test_select ${CMAKE_CURRENT_SOURCE_DIR}/test_select.c)
w4a16_add_test(test_cache ${CMAKE_CURRENT_SOURCE_DIR}/test_cache.c)
target_link_libraries(test_cache PRIVATE Threads::Threads)
# test_cli runs the command's entry point (tools/w4a16.c without its main) in child processes
w4a16_add_test(test_cli ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.c ${PROJECT_SOURCE_DIR}/tools/w4a16.c)
target_compile_definitions(test_cli PRIVATE W4A16_CLI_NO_MAIN)
target_link_libraries(test_cli PRIVATE CUDA::cudart)
target_link_libraries(test_select PRIVATE CUDA::cudart)
