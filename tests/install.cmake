# Installs this build tree into a scratch prefix and builds a tiny consumer
# project against it with find_package(weir), then runs it: proves the
# exported package (targets, config, dependencies, headers) works.
add_test(NAME install_consumer
  COMMAND ${CMAKE_COMMAND}
    -DWEIR_BUILD_DIR=${PROJECT_BINARY_DIR}
    -DCONSUMER_SRC=${CMAKE_CURRENT_SOURCE_DIR}/install_consumer
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_consumer
    -DGENERATOR=${CMAKE_GENERATOR}
    -DCXX=${CMAKE_CXX_COMPILER}
    -DC=${CMAKE_C_COMPILER}
    -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
    -DSANITIZE=${WEIR_SANITIZE}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/install_consumer/run.cmake)
set_tests_properties(install_consumer PROPERTIES LABELS install TIMEOUT 300)
