# The lab as ctest entries: every shipped scenario loads, runs and meets
# its expectations (`--strict`: the seed experiments are part of the
# suite), and a link capture decodes as TCP with tshark. The sanitizer
# build runs the lab for memory safety only: the simulator is
# deterministic, so its figures are the default build's.
if(TARGET weir_cli AND TARGET weir_sim)
  set(WEIR_LAB_STRICT --strict)
  if(WEIR_SANITIZE)
    set(WEIR_LAB_STRICT)
  endif()
  add_test(NAME lab_runs_every_scenario
    COMMAND weir_cli lab ${WEIR_LAB_STRICT} --out ${PROJECT_BINARY_DIR}/lab-ctest --scenarios ${PROJECT_SOURCE_DIR}/scenarios)
  # Under ASan -O0 the whole lab takes about 9 min (the DCTCP scenarios
  # simulate 1 Gbit/s for 4 s); 2-3 s in RelWithDebInfo.
  set_tests_properties(lab_runs_every_scenario PROPERTIES LABELS lab TIMEOUT 1800)
  if(WEIR_SANITIZE)
    # Session 17's two PLB-over-ECMP scenarios (4 flows x 4 paths, 10 seeds)
    # add about 10 min there: about 20 min in all on the 2-core CI machine.
    set_tests_properties(lab_runs_every_scenario PROPERTIES TIMEOUT 3000)
  endif()
  add_test(NAME sim_bad_scenario_is_rejected
    COMMAND weir_cli sim ${PROJECT_SOURCE_DIR}/tests/sim/bad.toml)
  set_tests_properties(sim_bad_scenario_is_rejected PROPERTIES LABELS lab WILL_FAIL TRUE)
  find_program(TSHARK tshark)
  if(TSHARK)
    add_test(NAME sim_pcap_decodes_as_tcp
      COMMAND sh -c "$<TARGET_FILE:weir_cli> sim ${PROJECT_SOURCE_DIR}/scenarios/slow-consumer.toml --set flow.1.bytes=200KB --out ${PROJECT_BINARY_DIR}/sim-pcap-ctest >/dev/null; ${TSHARK} -r ${PROJECT_BINARY_DIR}/sim-pcap-ctest/link-fwd.pcap -Y 'tcp.flags.syn==1 && tcp.dstport==5001' -T fields -e tcp.srcport 2>/dev/null | grep -qx 40001")
    set_tests_properties(sim_pcap_decodes_as_tcp PROPERTIES LABELS lab TIMEOUT 120)
  endif()
endif()
# The long scenario sets (not run by `weir lab`): every file must load.
if(TARGET weir_cli AND TARGET weir_sim)
  add_test(NAME lab_fairness_scenarios_load
    COMMAND weir_cli lab --check --scenarios ${PROJECT_SOURCE_DIR}/scenarios/fairness)
  set_tests_properties(lab_fairness_scenarios_load PROPERTIES LABELS lab TIMEOUT 60)
  add_test(NAME lab_grid_scenario_loads
    COMMAND weir_cli lab --check --scenarios ${PROJECT_SOURCE_DIR}/scenarios/grid)
  set_tests_properties(lab_grid_scenario_loads PROPERTIES LABELS lab TIMEOUT 60)
endif()
