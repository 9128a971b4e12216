# Driver of the install_consumer test (see CMakeLists.txt beside it): installs
# BUILD_DIR into WORK_DIR/install, then builds and runs the installed C example
# against that prefix through find_package(npvk), and the C and Fortran examples
# through pkg-config.
cmake_minimum_required(VERSION 3.21)  # find_program(NO_CACHE)

foreach(var BUILD_DIR WORK_DIR GENERATOR C_COMPILER LIBDIR BINDIR INCLUDEDIR DATAROOTDIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_install_test.cmake needs -D${var}=...")
  endif()
endforeach()

# Named "install", as run-main.sh's default prefix is, so that the README's
# commands run here as written (see the end).
set(prefix "${WORK_DIR}/install")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Runs a command, echoing it; a failure (or a crash) ends the test with its
# output. Extra VAR=value words after ENV go into the command's environment.
function(run what)
  cmake_parse_arguments(PARSE_ARGV 1 RUN "ALLOW_SKIP" "WORKING_DIRECTORY" "COMMAND;ENV")
  message(STATUS "${what}: ${RUN_COMMAND}")
  if(NOT RUN_WORKING_DIRECTORY)
    set(RUN_WORKING_DIRECTORY "${WORK_DIR}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${RUN_ENV} ${RUN_COMMAND}
                  WORKING_DIRECTORY "${RUN_WORKING_DIRECTORY}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc STREQUAL "0")
    message(STATUS "${out}")
  elseif(RUN_ALLOW_SKIP AND rc STREQUAL "77")
    message(STATUS "${out}(exit 77: the device has no float64; built and linked fine)")
  else()
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

function(expect_file path)
  if(NOT EXISTS "${prefix}/${path}")
    message(FATAL_ERROR "not installed: ${path}")
  endif()
endfunction()

# -- install -------------------------------------------------------------------
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
run("install" COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" ${config_args})

set(installed_files "${INCLUDEDIR}/npvk/npvk.h" "${LIBDIR}/libnpvk.so" "${BINDIR}/npvk-info"
                    "${INCLUDEDIR}/npvk/npvk_types.h" "${INCLUDEDIR}/npvk/npvk_context.h"
                    "${INCLUDEDIR}/npvk/npvk_observe.h" "${INCLUDEDIR}/npvk/npvk_ops.h"
                    "${INCLUDEDIR}/npvk/npvk_managed.h" "${INCLUDEDIR}/npvk/npvk_placement.h"
                    "${LIBDIR}/cmake/npvk/npvkConfig.cmake"
                    "${LIBDIR}/cmake/npvk/npvkConfigVersion.cmake" "${LIBDIR}/pkgconfig/npvk.pc")
if(EXAMPLES_SOURCE_DIR)
  set(examples "${EXAMPLES_SOURCE_DIR}")  # NPVK_BUILD_EXAMPLES=OFF: not installed
else()
  set(examples "${prefix}/${DATAROOTDIR}/doc/npvk/examples")
  list(APPEND installed_files "${DATAROOTDIR}/doc/npvk/examples/CMakeLists.txt"
       "${DATAROOTDIR}/doc/npvk/examples/c/npvk_example.c"
       "${DATAROOTDIR}/doc/npvk/examples/fortran/npvk_example.f90")
endif()
foreach(path IN LISTS installed_files)
  expect_file("${path}")
endforeach()

# Installed binaries carry no build-tree RPATH, and need no LD_LIBRARY_PATH:
# npvk-info finds the library through its run path ($ORIGIN/../lib), as
# programs linked through pkg-config do through theirs.
set(run_env "LD_LIBRARY_PATH=" "NPVK_CACHE_DIR=${CACHE_DIR}" "NPVK_VALIDATION=1")
run("installed npvk-info" COMMAND "${prefix}/${BINDIR}/npvk-info" --help ENV ${run_env})

# The installed files must not point back into the build or source tree, or the
# consumers below could pass while a relocated install would not.
file(GLOB_RECURSE package_files "${prefix}/${LIBDIR}/cmake/npvk/*.cmake"
     "${prefix}/${LIBDIR}/pkgconfig/npvk.pc")
get_filename_component(source_dir "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
foreach(file IN LISTS package_files)
  file(READ "${file}" text)
  foreach(tree "${BUILD_DIR}" "${source_dir}")
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} refers to ${tree}")
    endif()
  endforeach()
endforeach()

# -- the README's C example, as written there -----------------------------------
# The block between its c-example markers runs in a directory holding the
# prefix as install/ and the examples as examples/ (the repository root's
# layout after run-main.sh), with no LD_LIBRARY_PATH.
get_filename_component(readme "${CMAKE_CURRENT_LIST_DIR}/../../README.md" ABSOLUTE)
file(READ "${readme}" readme_text)
string(REGEX MATCH "<!-- BEGIN c-example[^\n]*-->\n```sh\n(.*)```\n<!-- END c-example -->"
       readme_block "${readme_text}")
if(NOT CMAKE_MATCH_1)
  message(FATAL_ERROR "README.md has no c-example block")
endif()
file(WRITE "${WORK_DIR}/readme_c_example.sh" "set -e\n${CMAKE_MATCH_1}")
if(NOT EXISTS "${WORK_DIR}/examples")
  file(CREATE_LINK "${examples}" "${WORK_DIR}/examples" SYMBOLIC)
endif()
if(INCLUDEDIR STREQUAL "include" AND LIBDIR STREQUAL "lib" AND BINDIR STREQUAL "bin")
  run("the README's C example" COMMAND sh "${WORK_DIR}/readme_c_example.sh" ENV ${run_env}
      "PKG_CONFIG_PATH=" ALLOW_SKIP)
else()
  message(STATUS "install dirs other than the README's: its C example is not run as written")
endif()

# -- consumer 1: find_package(npvk) --------------------------------------------
set(cmake_build "${WORK_DIR}/cmake-consumer")
set(consumer_args -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${prefix}
                  -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_BUILD_TYPE=Release
                  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
# Enabling Fortran in a CMake project costs seconds of compiler checks; the
# Fortran example is built against the prefix through pkg-config below instead.
list(APPEND consumer_args -DNPVK_EXAMPLES_FORTRAN=OFF)
run("configure find_package consumer"
    COMMAND ${CMAKE_COMMAND} -S "${examples}" -B "${cmake_build}" ${consumer_args})
file(STRINGS "${cmake_build}/CMakeCache.txt" npvk_dir REGEX "^npvk_DIR:")
string(FIND "${npvk_dir}" "${prefix}/" at)
if(NOT at GREATER -1)
  message(FATAL_ERROR "find_package(npvk) found another npvk: ${npvk_dir}")
endif()
run("build find_package consumer"
    COMMAND ${CMAKE_COMMAND} --build "${cmake_build}" --config Release)
# Multi-config generators put the binary in a per-config folder.
find_program(exe_path npvk_example_c PATHS "${cmake_build}" "${cmake_build}/Release"
             NO_DEFAULT_PATH NO_CACHE REQUIRED)
run("run npvk_example_c (find_package)" COMMAND "${exe_path}" ENV ${run_env} ALLOW_SKIP)

# -- consumer 2: pkg-config ----------------------------------------------------
if(NOT PKG_CONFIG)
  message(STATUS "no pkg-config: the pkg-config consumer is not tested")
  return()
endif()
set(pc_env "PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig")
run("pkg-config" COMMAND "${PKG_CONFIG}" --cflags --libs npvk ENV ${pc_env})
string(STRIP "${run_output}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
# The flags must name the prefix's directories, however pkg-config spells them.
get_filename_component(real_include "${prefix}/${INCLUDEDIR}" REALPATH)
get_filename_component(real_lib "${prefix}/${LIBDIR}" REALPATH)
set(seen_include FALSE)
set(seen_lib FALSE)
foreach(flag IN LISTS pc_flags)
  if(flag MATCHES "^-I(.+)$")
    get_filename_component(dir "${CMAKE_MATCH_1}" REALPATH)
    if(dir STREQUAL real_include)
      set(seen_include TRUE)
    endif()
  elseif(flag MATCHES "^-L(.+)$")
    get_filename_component(dir "${CMAKE_MATCH_1}" REALPATH)
    if(dir STREQUAL real_lib)
      set(seen_lib TRUE)
    endif()
  endif()
endforeach()
if(NOT seen_include OR NOT seen_lib OR NOT "-lnpvk" IN_LIST pc_flags)
  message(FATAL_ERROR "pkg-config flags do not point into ${prefix}: ${pc_flags}")
endif()

run("compile with pkg-config flags"
    COMMAND "${C_COMPILER}" -std=c99 -o "${WORK_DIR}/pc_example_c"
            "${examples}/c/npvk_example.c" ${pc_flags} -lm)
run("run pkg-config C example" COMMAND "${WORK_DIR}/pc_example_c" ENV ${run_env} ALLOW_SKIP)
if(FORTRAN_COMPILER)
  run("compile Fortran with pkg-config flags"
      COMMAND "${FORTRAN_COMPILER}" -o "${WORK_DIR}/pc_example_fortran"
              "${examples}/fortran/npvk_example.f90" ${pc_flags}
      WORKING_DIRECTORY "${WORK_DIR}")
  run("run pkg-config Fortran example" COMMAND "${WORK_DIR}/pc_example_fortran" ENV ${run_env}
      ALLOW_SKIP)
endif()
message(STATUS "install test passed")
