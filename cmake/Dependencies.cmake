# Third-party packages, all from the distribution's archive (scripts/install-deps.sh).
find_package(Threads REQUIRED)
set(Boost_USE_STATIC_LIBS ON)  # Boost.URL statically: the GPU machine has no Boost
find_package(Boost 1.81 REQUIRED COMPONENTS url)  # Asio + Beast are header-only
find_package(nlohmann_json 3.10 REQUIRED)
find_package(SQLiteCpp REQUIRED)
find_package(muparser REQUIRED)
find_package(CLI11 CONFIG QUIET)
find_package(spdlog REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(ZLIB REQUIRED)  # gzip-compressed recorded spaces (tuner/search/recorded_space_file.cpp)
find_package(prometheus-cpp CONFIG REQUIRED)  # GET /metrics: the core library only (registry, text format)
find_package(CUDAToolkit 12.8 REQUIRED)  # NVRTC, the driver API header, cuBLAS

if(NOT TARGET CLI11::CLI11)
  # Debian's libcli11-dev ships the header without a CMake package on some releases.
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()

# SQLite statically: the GPU machine has no Debian libraries.
find_library(SQLITE3_STATIC libsqlite3.a REQUIRED)
set_target_properties(SQLite::SQLite3 PROPERTIES IMPORTED_LOCATION ${SQLITE3_STATIC})
find_library(CRYPTO_STATIC libcrypto.a REQUIRED)

# The driver API is loaded at run time (worker/driver_api.cpp), never linked: a binary
# linked to libcuda.so.1 would not even start on a machine without the NVIDIA driver (CI).
add_library(kt_cuda_headers INTERFACE)
target_include_directories(kt_cuda_headers INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
