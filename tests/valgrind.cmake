# Valgrind (issue 9): the lab's smallest run under memcheck, in GCC builds
# without sanitizers (the default preset). Any invalid read/write, use of an
# uninitialised value or leaked block fails it. Skipped (exit 77) when
# valgrind is not installed (tools/install-deps.sh installs it).
#
# The run: lossy-link (1 % loss on a 20 Mbit/s, 40 ms RTT path, so loss
# recovery, SACK, RACK and the timers all run), one seed, 300 KB: a few
# seconds natively, well under a minute under memcheck.
if(TARGET weir_cli AND TARGET weir_sim AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
   AND NOT WEIR_SANITIZE AND NOT WEIR_BUILD_FUZZ)
  add_test(NAME valgrind_sim_lossy_link_small
    COMMAND sh -c "command -v valgrind >/dev/null || { echo 'valgrind not installed'; exit 77; }; \
exec valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
--track-origins=yes $<TARGET_FILE:weir_cli> sim ${PROJECT_SOURCE_DIR}/scenarios/lossy-link.toml \
--seed 1 --set flow.1.bytes=300KB --set duration=10s")
  set_tests_properties(valgrind_sim_lossy_link_small PROPERTIES
    LABELS valgrind SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
