# Install rules of npvk: the library and its header, a CMake package
# (find_package(npvk) -> npvk::npvk) and a pkg-config file (npvk.pc).
# Included from the top-level CMakeLists.txt after the `npvk` target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(NPVK_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/npvk"
    CACHE STRING "Where npvkConfig.cmake is installed, relative to the prefix")

# install(EXPORT) refuses include directories that point into the source or
# build tree. Wrap plain ones in $<BUILD_INTERFACE:...> so the exported target
# carries only the installed include directory (added below).
get_target_property(npvk_include_dirs npvk INTERFACE_INCLUDE_DIRECTORIES)
if(npvk_include_dirs)
  set(npvk_fixed_include_dirs "")
  foreach(dir IN LISTS npvk_include_dirs)
    string(FIND "${dir}/" "${PROJECT_SOURCE_DIR}/" in_source)
    string(FIND "${dir}/" "${PROJECT_BINARY_DIR}/" in_build)
    if(NOT dir MATCHES "^\\$<" AND (in_source EQUAL 0 OR in_build EQUAL 0))
      set(dir "$<BUILD_INTERFACE:${dir}>")
    endif()
    list(APPEND npvk_fixed_include_dirs "${dir}")
  endforeach()
  set_property(TARGET npvk PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${npvk_fixed_include_dirs}")
endif()

install(TARGETS npvk
        EXPORT npvkTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/../include/npvk
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

install(EXPORT npvkTargets NAMESPACE npvk:: DESTINATION ${NPVK_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/npvkConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/npvkConfig.cmake
                              INSTALL_DESTINATION ${NPVK_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# npvk.h keeps NPVK_ABI_VERSION across additions; this assumes an incompatible
# ABI change also bumps the major version, so any same-major release will do.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/npvkConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/npvkConfig.cmake ${PROJECT_BINARY_DIR}/npvkConfigVersion.cmake
        DESTINATION ${NPVK_INSTALL_CMAKEDIR})

# pkg-config: paths relative to ${pcfiledir}, so that `cmake --install --prefix`
# and a moved install tree keep working. Absolute install dirs stay absolute.
set(npvk_pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${npvk_pc_dir}")
  set(NPVK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  # RELATIVE_PATH needs absolute paths; any root works since both share it.
  file(RELATIVE_PATH npvk_pc_up "/npvk-root/${npvk_pc_dir}" "/npvk-root")
  string(REGEX REPLACE "/$" "" npvk_pc_up "${npvk_pc_up}")
  set(NPVK_PC_PREFIX "\${pcfiledir}/${npvk_pc_up}")
endif()
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(NPVK_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(NPVK_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/npvk.pc.in ${PROJECT_BINARY_DIR}/npvk.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/npvk.pc DESTINATION ${npvk_pc_dir})

# A prefix in the dynamic linker's search list (/usr/local/lib on Debian) needs
# its cache refreshed before programs find a new libnpvk.so.1 there; other
# prefixes are found through run paths (npvk-info's, npvk.pc's). Only root can
# refresh it, and a staged install (DESTDIR) is not where it will run.
install(CODE [[
  find_program(npvk_ldconfig ldconfig PATHS /sbin /usr/sbin NO_CACHE)
  execute_process(COMMAND id -u OUTPUT_VARIABLE npvk_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(npvk_ldconfig AND npvk_uid STREQUAL "0" AND "$ENV{DESTDIR}" STREQUAL "")
    execute_process(COMMAND "${npvk_ldconfig}" RESULT_VARIABLE npvk_ldconfig_rc)
    if(NOT npvk_ldconfig_rc EQUAL 0)
      message(WARNING "ldconfig failed (${npvk_ldconfig_rc}): run it before using libnpvk")
    endif()
  endif()
]])
