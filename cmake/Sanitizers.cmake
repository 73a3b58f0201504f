# KERNTUNE_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer on every target (clang or gcc);
# UB aborts (no recovery) so a test or fuzz run fails on it instead of printing and going on.
# KERNTUNE_FUZZ (clang only): libFuzzer targets in tests/fuzz. It implies KERNTUNE_SANITIZE, and
# every library gets libFuzzer's coverage instrumentation (fuzzer-no-link): without it the fuzzers
# would only see the coverage of their own small files and mutate blind.
option(KERNTUNE_SANITIZE "Build everything with -fsanitize=address,undefined" OFF)
option(KERNTUNE_FUZZ "Build the libFuzzer targets in tests/fuzz (clang; implies KERNTUNE_SANITIZE)"
  OFF)

if(KERNTUNE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "KERNTUNE_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ (Debian: clang-14, libclang-rt-14-dev)")
  endif()
  if(NOT KERNTUNE_BUILD_TESTS)
    message(FATAL_ERROR "KERNTUNE_FUZZ needs KERNTUNE_BUILD_TESTS=ON (the targets are tests)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(KERNTUNE_SANITIZE OR KERNTUNE_FUZZ)
  set(kt_sanitizers -fsanitize=address,undefined)
  add_compile_options(${kt_sanitizers} -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(${kt_sanitizers})
  # CUDA::nvrtc drags in the driver stub (libcuda.so); Debian's gcc links --as-needed and drops
  # it, clang does not, and a binary that needs libcuda.so.1 cannot start without a driver (CI).
  add_link_options(LINKER:--as-needed)
endif()
