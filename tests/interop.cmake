# The real-network driver (issue 8).
#
# test_driver: deterministic unit tests of the driver's pure parts; always on.
# interop_*: weir on TUN devices against Linux's TCP (curl, nc, python's
# http.server, weir emu) in private network namespaces. They need root and
# /dev/net/tun and report SKIPPED (exit 77) without them. Each is bounded by
# a ctest timeout; the whole label runs in about two minutes.
add_executable(test_driver ${CMAKE_CURRENT_SOURCE_DIR}/interop/driver_unit.cc ${CMAKE_CURRENT_SOURCE_DIR}/interop/tun_unit.cc)
target_link_libraries(test_driver PRIVATE weir GTest::gtest GTest::gtest_main)
gtest_discover_tests(test_driver DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60 PROPERTIES LABELS driver)

option(WEIR_INTEROP_TESTS "Register the interop tests (need root and /dev/net/tun)" ON)
if(WEIR_INTEROP_TESTS)
  set(_interop ${CMAKE_CURRENT_SOURCE_DIR}/interop)
  function(weir_interop name timeout)
    add_test(NAME interop_${name} COMMAND bash ${ARGN})
    set_tests_properties(interop_${name} PROPERTIES LABELS interop TIMEOUT ${timeout}
      SKIP_RETURN_CODE 77 ENVIRONMENT "WEIR=$<TARGET_FILE:weir_cli>;MB=10")
  endfunction()
  foreach(combo default nosack nots nows none)
    weir_interop(http_${combo} 30 ${_interop}/serve.sh http ${combo})
    weir_interop(fetch_${combo} 45 ${_interop}/serve.sh fetch ${combo})
    weir_interop(echo_${combo} 30 ${_interop}/serve.sh echo ${combo})
  endforeach()
  weir_interop(emu_linux_linux 45 ${_interop}/emu_linux_linux.sh)
  weir_interop(emu_weir 60 ${_interop}/emu_weir.sh)
  weir_interop(ss 30 ${_interop}/serve.sh ss default)
  weir_interop(fetch_chunked 30 ${_interop}/serve.sh chunked default)
  weir_interop(fetch_refused 30 ${_interop}/serve.sh refused default)
  weir_interop(emu_iperf 30 ${_interop}/emu_iperf.sh)
  # The issue's size: 100 MB each way with Linux's defaults (the option
  # combinations above run at 10 MB to keep the label short).
  weir_interop(http_100mb 120 ${_interop}/serve.sh http default)
  weir_interop(fetch_100mb 120 ${_interop}/serve.sh fetch default)
  set_tests_properties(interop_http_100mb interop_fetch_100mb PROPERTIES ENVIRONMENT "WEIR=$<TARGET_FILE:weir_cli>;MB=100")
  # Real-time measurements: nothing else runs beside them.
  set_tests_properties(interop_emu_linux_linux interop_emu_weir interop_emu_iperf PROPERTIES RUN_SERIAL TRUE)
  set_tests_properties(interop_emu_iperf PROPERTIES ENVIRONMENT "WEIR=$<TARGET_FILE:weir_cli>;MB=10;RATE_TOL=0.06")
endif()
