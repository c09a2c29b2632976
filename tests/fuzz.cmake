# Fuzz targets in ctest (issue 9). Every fuzz/fuzz_<name>.cc has its seed
# corpus in fuzz/corpus/<name>/.
#
# - fuzz_replay_<name> (every build, GCC included): the target's
#   LLVMFuzzerTestOneInput linked with fuzz/replay_main.cc instead of
#   libFuzzer, run over the whole seed corpus. The corpus stays live (and its
#   regressions stay fixed) where no libFuzzer exists.
# - fuzz_smoke_<name> (builds with WEIR_BUILD_FUZZ=ON, i.e. the asan and fuzz
#   presets): a short libFuzzer run from the corpus with a fixed seed and a
#   bounded number of runs and time. New inputs go to the build tree, never
#   into fuzz/corpus.
file(GLOB _weir_fuzz_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fuzz/fuzz_*.cc)
foreach(_src IN LISTS _weir_fuzz_srcs)
  get_filename_component(_name ${_src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" _corpus ${_name})
  set(_dir "${PROJECT_SOURCE_DIR}/fuzz/corpus/${_corpus}")
  if(NOT IS_DIRECTORY "${_dir}")
    message(WARNING "fuzz target ${_name} has no seed corpus in ${_dir}")
    continue()
  endif()
  add_executable(replay_${_corpus} ${_src} ${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc)
  target_include_directories(replay_${_corpus} PRIVATE ${PROJECT_SOURCE_DIR}/fuzz)
  target_link_libraries(replay_${_corpus} PRIVATE weir)
  foreach(_lib weir_pkt weir_sim)
    if(TARGET ${_lib})
      target_link_libraries(replay_${_corpus} PRIVATE ${_lib})
    endif()
  endforeach()
  add_test(NAME fuzz_replay_${_corpus} COMMAND replay_${_corpus} "${_dir}")
  set_tests_properties(fuzz_replay_${_corpus} PROPERTIES LABELS fuzz TIMEOUT 120)

  if(WEIR_BUILD_FUZZ)
    # fuzz/CMakeLists.txt (added after tests/) defines the target; the
    # generator expression resolves it at generation time.
    set(_out "${CMAKE_CURRENT_BINARY_DIR}/fuzz_out/${_corpus}")
    file(MAKE_DIRECTORY "${_out}")
    add_test(NAME fuzz_smoke_${_corpus}
      COMMAND $<TARGET_FILE:${_name}> -seed=1 -runs=3000 -max_total_time=25
              -timeout=10 -rss_limit_mb=2048 "${_out}" "${_dir}")
    set_tests_properties(fuzz_smoke_${_corpus} PROPERTIES LABELS fuzz TIMEOUT 90)
  endif()
endforeach()
