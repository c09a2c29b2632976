# Driven by tests/install.cmake (cmake -P): install, configure, build, run.
cmake_minimum_required(VERSION 3.25)
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${prefix}" "${build}")

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step(${CMAKE_COMMAND} --install "${WEIR_BUILD_DIR}" --prefix "${prefix}")
foreach(f include/weir/addr.h include/weir/stack.h)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

set(flags "")
if(SANITIZE)
  set(flags "-fsanitize=address,undefined")
endif()
step(${CMAKE_COMMAND} -S "${CONSUMER_SRC}" -B "${build}" -G "${GENERATOR}"
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
     -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${C}
     "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${flags}")
step(${CMAKE_COMMAND} --build "${build}")
step("${build}/weir_consumer")
if(NOT step_output MATCHES "weir consumer ok")
  message(FATAL_ERROR "unexpected consumer output: ${step_output}")
endif()
message(STATUS "${step_output}")
