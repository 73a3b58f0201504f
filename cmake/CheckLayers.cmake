# Fails when an include runs against the layers: server -> engine -> db -> tuner, worker -> tuner,
# client on its own; harness -> client, tuner; bench over them all but server. Of tests/, only
# tests/bench (the benchmark code's own tests) may include bench/. Run as a test: cmake -DKT_SOURCE_DIR=<repo> -P cmake/CheckLayers.cmake
# Only quoted includes that name a layer folder ("engine/...") are checked; system and library
# headers are not layers.
cmake_minimum_required(VERSION 3.22)
set(allowed_tuner tuner)
set(allowed_db db tuner)
set(allowed_engine engine db tuner)
set(allowed_worker worker tuner)
set(allowed_server server engine db tuner)
set(allowed_client client)
set(allowed_harness harness client tuner)
set(allowed_bench bench harness client engine db worker tuner)
set(layers tuner db engine worker server client harness bench)

if(NOT KT_SOURCE_DIR)
  message(FATAL_ERROR "CheckLayers: pass -DKT_SOURCE_DIR=<repository root>")
endif()
list(JOIN layers "|" layer_pattern)
set(violations "")
foreach(layer IN LISTS layers)
  file(GLOB_RECURSE sources RELATIVE ${KT_SOURCE_DIR}
    ${KT_SOURCE_DIR}/${layer}/*.cpp ${KT_SOURCE_DIR}/${layer}/*.hpp)
  foreach(source IN LISTS sources)
    file(STRINGS ${KT_SOURCE_DIR}/${source} includes
      REGEX "^[ \t]*#[ \t]*include[ \t]+\"(${layer_pattern})/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([a-z]+)/.*$" "\\1" target "${line}")
      if(NOT target IN_LIST allowed_${layer})
        string(STRIP "${line}" line)
        list(APPEND violations "${source}: ${line} (${layer}/ may include ${allowed_${layer}})")
      endif()
    endforeach()
  endforeach()
endforeach()

# tests/ is no layer (it may include any), but the benchmark code is for tests/bench alone: the
# daemon-level tests use harness/, so that only one test binary links kt_bench.
file(GLOB_RECURSE test_sources RELATIVE ${KT_SOURCE_DIR}
  ${KT_SOURCE_DIR}/tests/*.cpp ${KT_SOURCE_DIR}/tests/*.hpp)
list(FILTER test_sources EXCLUDE REGEX "^tests/bench/")
foreach(source IN LISTS test_sources)
  file(STRINGS ${KT_SOURCE_DIR}/${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"bench/")
  foreach(line IN LISTS includes)
    string(STRIP "${line}" line)
    list(APPEND violations "${source}: ${line} (only tests/bench may include bench/)")
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "includes against the layers:\n  ${text}")
endif()
message(STATUS "includes run one way: server -> engine -> db -> tuner, worker -> tuner, "
               "bench -> harness -> client")
