# Fuzz smoke runs. The seed corpus of the wire fuzzer is replayed in every
# build by test_wire (WireCorpus.*, through the same checks as the fuzz
# target). In addition, when a libFuzzer build made by `cmake --preset fuzz`
# (or `make fuzz`) exists beside this one, each fuzz_<name> binary gets a
# short deterministic run over its corpus: fixed seed, fixed number of runs,
# new inputs written to the build tree, never into fuzz/corpus.
set(WEIR_FUZZ_BUILD_DIR "${PROJECT_SOURCE_DIR}/build/fuzz/fuzz"
    CACHE PATH "Where the libFuzzer binaries of the fuzz preset are")
file(GLOB _weir_fuzz_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fuzz/fuzz_*.cc)
foreach(_src IN LISTS _weir_fuzz_srcs)
  get_filename_component(_name ${_src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" _corpus ${_name})
  set(_bin "${WEIR_FUZZ_BUILD_DIR}/${_name}")
  if(EXISTS "${_bin}" AND IS_DIRECTORY "${PROJECT_SOURCE_DIR}/fuzz/corpus/${_corpus}")
    set(_out "${CMAKE_CURRENT_BINARY_DIR}/fuzz_out/${_corpus}")
    file(MAKE_DIRECTORY "${_out}")
    add_test(NAME fuzz_smoke_${_corpus}
      COMMAND "${_bin}" -seed=1 -runs=20000 "${_out}" "${PROJECT_SOURCE_DIR}/fuzz/corpus/${_corpus}")
    set_tests_properties(fuzz_smoke_${_corpus} PROPERTIES LABELS fuzz TIMEOUT 120)
  endif()
endforeach()
