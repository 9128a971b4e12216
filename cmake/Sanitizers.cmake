# -DNPVK_SANITIZE=ON: everything is built with AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/test-sanitize.sh). Any UB report aborts,
# so a test cannot pass with one.
# -DNPVK_FUZZ=ON (clang only): the libFuzzer targets of tests/fuzz.
option(NPVK_SANITIZE "Build with ASan and UBSan" OFF)
option(NPVK_FUZZ "Build the libFuzzer targets (needs clang)" OFF)

if(NPVK_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "NPVK_FUZZ needs clang (libFuzzer): CC=clang CXX=clang++")
endif()

if(NPVK_SANITIZE)
  set(NPVK_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                          -fno-omit-frame-pointer)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # One shared runtime for libnpvk, the test programs and the Python
    # extension (which Python can only get through LD_PRELOAD): clang links a
    # static copy into executables otherwise, and a second into nothing else.
    list(APPEND NPVK_SANITIZE_FLAGS -shared-libasan)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-x86_64.so
                    OUTPUT_VARIABLE NPVK_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
    get_filename_component(NPVK_ASAN_RUNTIME_DIR "${NPVK_ASAN_RUNTIME}" DIRECTORY)
    add_link_options(-Wl,-rpath,${NPVK_ASAN_RUNTIME_DIR})
  else()
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE NPVK_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  add_compile_options(${NPVK_SANITIZE_FLAGS})
  add_link_options(${NPVK_SANITIZE_FLAGS})
  # For scripts: the runtime that an uninstrumented python3 must preload.
  file(WRITE ${CMAKE_BINARY_DIR}/asan-runtime.txt "${NPVK_ASAN_RUNTIME}\n")
endif()
