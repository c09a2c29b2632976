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
