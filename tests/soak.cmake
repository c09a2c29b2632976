# The randomized integrity soak (issue 9, src/sim/soak.h): 200 seeds, each
# moving >= 1 MB both ways over a random hostile link; a failure prints its
# seed and the command replaying it. The same 200 seeds in every build
# (GCC and ASan): the runs are kept cheap enough instead of fewer.
if(TARGET weir_cli AND TARGET weir_sim)
  add_test(NAME soak_200_seeds COMMAND weir_cli lab --soak 200 --seed 1)
  # About 20 s in RelWithDebInfo; about 15 min under ASan -O0 with the
  # scoreboard recount after every ACK, hence the generous timeout.
  set_tests_properties(soak_200_seeds PROPERTIES LABELS soak TIMEOUT 2400)
endif()
