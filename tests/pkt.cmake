# The project's own packetdrill scripts (tests/pkt/scripts/tcp_<area>_<case>.pkt),
# one ctest test per script, each run through `weir pkt` in every IP variant
# its name allows. Scripts the engine cannot pass yet live in tests/pkt/pending/
# and are not registered.
if(TARGET weir_cli)
  file(GLOB weir_pkt_scripts CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/pkt/scripts/tcp_*.pkt)
  foreach(script IN LISTS weir_pkt_scripts)
    get_filename_component(name ${script} NAME_WE)
    add_test(NAME pkt.${name}
             COMMAND $<TARGET_FILE:weir_cli> pkt --all-ip-versions ${script}
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/pkt/scripts)
    set_tests_properties(pkt.${name} PROPERTIES LABELS pkt TIMEOUT 60)
  endforeach()
endif()

# Seed contrasts at the packet level (docs/lab.md "Seed contrasts"): each
# script that pins a seed must fail, in every variant, with that seed's bug
# put back (`--sysctl fault_seed<NNN>_...=1`). The closing line is matched,
# so a crash or a skip does not count as the expected failure.
if(TARGET weir_cli)
  set(weir_pkt_seed_contrasts
    tcp_window_retreating_edge_no_send:fault_seed000_usable_wraps
    tcp_window_retreating_edge_partial:fault_seed000_usable_wraps
    tcp_wscale_off_rcv_wnd_capped_passive:fault_seed001_rcv_wnd_unclamped
    tcp_wscale_off_rcv_wnd_capped_active:fault_seed001_rcv_wnd_unclamped
    tcp_wscale_off_window_clamp_representable:fault_seed001_rcv_wnd_unclamped
    tcp_wscale_off_rcvlowat_clamp:fault_seed001_rcv_wnd_unclamped
    tcp_sack_seed002_sacked_then_acked_leaves_flight:fault_seed002_sacked_acked_leak
    tcp_undo_non_sack_hold_at_high_seq_no_undo:fault_seed003_undo_without_proof
    tcp_cubic_hystart_round_restarts_below_low_window:fault_seed004_hystart_round_start)
  foreach(pair IN LISTS weir_pkt_seed_contrasts)
    string(REPLACE ":" ";" parts ${pair})
    list(GET parts 0 name)
    list(GET parts 1 fault)
    add_test(NAME pkt_contrast.${name}
             COMMAND $<TARGET_FILE:weir_cli> pkt --all-ip-versions --sysctl ${fault}=1 ${name}.pkt
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/pkt/scripts)
    set_tests_properties(pkt_contrast.${name} PROPERTIES LABELS pkt TIMEOUT 60
                         PASS_REGULAR_EXPRESSION "\n0 passed, [1-9][0-9]* failed, 0 skipped")
  endforeach()
  add_test(NAME pkt_bad_sysctl_is_rejected
           COMMAND $<TARGET_FILE:weir_cli> pkt --sysctl fault_seed009=1 tcp_undo_non_sack_hold_at_high_seq_no_undo.pkt
           WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/pkt/scripts)
  set_tests_properties(pkt_bad_sysctl_is_rejected PROPERTIES LABELS pkt
                       PASS_REGULAR_EXPRESSION "--sysctl fault_seed009=1: unknown setting 'fault_seed009'")
endif()
