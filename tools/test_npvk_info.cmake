# Checks npvk-info's behaviour; run as
#   cmake -DNPVK_INFO=<path to npvk-info> -DMODE=<text|json|cli|no_driver|bad_selector> -P ...
# Printing NPVK-INFO-SKIP makes ctest report a skip (SKIP_REGULAR_EXPRESSION), for
# machines that have no Vulkan driver at all.
cmake_minimum_required(VERSION 3.19)  # string(JSON)

if(NOT NPVK_INFO OR NOT MODE)
  message(FATAL_ERROR "usage: cmake -DNPVK_INFO=... -DMODE=... -P test_npvk_info.cmake")
endif()

# Runs npvk-info with `args` (and an optional `env` list of VAR=value), leaving
# rc, out and err in the caller's scope. A crash shows up as a non-numeric rc
# ("Segmentation fault"), which every check below rejects.
function(run_info)
  cmake_parse_arguments(PARSE_ARGV 0 RUN "" "" "ARGS;ENV")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${RUN_ENV} ${NPVK_INFO} ${RUN_ARGS}
                  RESULT_VARIABLE result OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr
                  TIMEOUT 50)
  message(STATUS "npvk-info ${RUN_ARGS} (${RUN_ENV}) -> ${result}\n"
                 "--- stdout\n${stdout}--- stderr\n${stderr}---")
  set(rc "${result}" PARENT_SCOPE)
  set(out "${stdout}" PARENT_SCOPE)
  set(err "${stderr}" PARENT_SCOPE)
endfunction()

# The condition is passed unquoted, so it must not contain empty strings.
function(expect condition_text)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "FAILED: ${condition_text}")
  endif()
endfunction()

# Exit 1 with NPVK_ERR_NO_DEVICE is the documented answer of a machine without
# Vulkan: that skips the scenario (the caller checks `skipped`); any other
# non-zero exit fails it.
macro(check_device_or_skip)
  set(skipped FALSE)
  if(rc STREQUAL "1" AND err MATCHES "NPVK_ERR_NO_DEVICE")
    message("NPVK-INFO-SKIP: no usable Vulkan device here")
    set(skipped TRUE)
  endif()
endmacro()

if(MODE STREQUAL "text")
  run_info()
  check_device_or_skip()
  if(NOT skipped)
    expect("exit status 0" rc STREQUAL "0")
    expect("a version line" out MATCHES "^npvk [0-9]+\\.[0-9]+\\.[0-9]+ \\(ABI [0-9]+\\)")
    expect("the chosen device is named" out MATCHES "npvk uses device [0-9]+: ")
    expect("the chosen device is marked" out MATCHES "<- npvk uses this one")
    expect("NPVK_DEVICE is explained" out MATCHES "NPVK_DEVICE")
    if(out MATCHES "Cost model \\(measured")
      expect("the host threads are listed" out MATCHES "host threads: [1-9]")
    endif()
    foreach(field IN ITEMS "float64" "float16" "int64" "int16" "int8" "8-bit storage"
                           "16-bit storage" "buffer device address" "host memory import"
                           "timestamps" "unified memory" "push constants" "max allocation"
                           "device-local memory" "usable by npvk")
      expect("field '${field}' is listed" out MATCHES "    ${field}")
    endforeach()
    # Drivers may print to stderr (lavapipe warns that it is not conformant), so
    # only npvk-info's own complaints count.
    expect("no npvk-info error on stderr" NOT err MATCHES "npvk-info:")
  endif()

elseif(MODE STREQUAL "json")
  run_info(ARGS --json)
  check_device_or_skip()
  if(NOT skipped)
    expect("exit status 0" rc STREQUAL "0")
    string(JSON ndev ERROR_VARIABLE json_error LENGTH "${out}" devices)
    expect("valid JSON with a devices array (${json_error})" json_error STREQUAL "NOTFOUND")
    expect("at least one device" ndev GREATER 0)
    string(JSON selected GET "${out}" selected)
    expect("selected is an index" selected MATCHES "^[0-9]+$")
    expect("selected is in range" selected LESS ndev)
    string(JSON usable GET "${out}" devices ${selected} usable)
    expect("the selected device is usable" usable STREQUAL "ON")
    string(JSON version GET "${out}" npvk_version)
    expect("npvk_version" version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+")
    math(EXPR last "${ndev} - 1")
    foreach(i RANGE ${last})
      string(JSON index GET "${out}" devices ${i} index)
      expect("device ${i} has index ${i}" index EQUAL i)
      foreach(key IN ITEMS name type vendor_id device_id api_version driver_name driver_info
                           driver_uuid usable unusable_reason float64 float16 int64 int16 int8
                           storage8 storage16 buffer_device_address host_memory_import
                           timestamps unified_memory max_push_constants_size
                           max_memory_allocation_size min_imported_host_pointer_alignment
                           device_local_bytes timestamp_period_ns)
        string(JSON type ERROR_VARIABLE key_error TYPE "${out}" devices ${i} ${key})
        expect("device ${i} has '${key}' (${key_error})" key_error STREQUAL "NOTFOUND")
      endforeach()
      string(JSON type GET "${out}" devices ${i} type)
      expect("device ${i} type is known" type MATCHES
             "^(other|integrated_gpu|discrete_gpu|virtual_gpu|cpu)$")
      string(JSON push GET "${out}" devices ${i} max_push_constants_size)
      # Vulkan guarantees at least 128 bytes of push constants.
      expect("device ${i} push constants >= 128" push GREATER_EQUAL 128)
    endforeach()
  endif()

elseif(MODE STREQUAL "cli")
  run_info(ARGS --help)
  expect("--help exits 0" rc STREQUAL "0")
  expect("--help prints usage" out MATCHES "^usage: npvk-info")
  expect("--help documents NPVK_DEVICE" out MATCHES "NPVK_DEVICE")
  run_info(ARGS --no-such-option)
  expect("an unknown option exits 2" rc STREQUAL "2")
  expect("an unknown option is named" err MATCHES "--no-such-option")

elseif(MODE STREQUAL "no_driver")
  # Point the Vulkan loader at a driver manifest that does not exist: the loader
  # is present, no driver is. npvk-info must explain and exit 1, not crash.
  set(no_icd "VK_ICD_FILENAMES=/nonexistent/npvk-no-driver.json"
             "VK_DRIVER_FILES=/nonexistent/npvk-no-driver.json")
  run_info(ENV ${no_icd})
  expect("exit status 1" rc STREQUAL "1")
  expect("an npvk error on stderr" err MATCHES "^npvk-info: NPVK_ERR_[A-Z_]+: ")
  run_info(ARGS --json ENV ${no_icd})
  expect("--json exit status 1" rc STREQUAL "1")
  # Either the count failed (error) or it was 0 and selection failed.
  string(JSON status ERROR_VARIABLE e1 GET "${out}" error status)
  string(JSON sel_status ERROR_VARIABLE e2 GET "${out}" selection_error status)
  expect("--json still prints a JSON document with the error (${e1}; ${e2})"
         status MATCHES "^NPVK_ERR_" OR sel_status MATCHES "^NPVK_ERR_")

elseif(MODE STREQUAL "bad_selector")
  # A bad selector fails with NPVK_ERR_NO_DEVICE too, so first learn whether
  # this machine has a device at all.
  run_info()
  check_device_or_skip()
  if(skipped)
    return()
  endif()
  run_info(ENV "NPVK_DEVICE=npvk-info-test-no-such-device")
  expect("exit status 1" rc STREQUAL "1")
  expect("NPVK_DEVICE is blamed" out MATCHES "NPVK_DEVICE=\"npvk-info-test-no-such-device\"")
  expect("an npvk error on stderr" err MATCHES "npvk-info: NPVK_ERR_[A-Z_]+: ")

else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
