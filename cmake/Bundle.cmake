# Copies the shared libraries that exist in the distribution only as .so (muparser, spdlog, fmt,
# prometheus-cpp's core) next to the binaries in build/bin; binaries carry RPATH $ORIGIN, so the
# build folder runs on a machine without those packages. CUDA libraries (NVRTC, cuBLAS) are expected on the GPU host.
set(KT_BUNDLED_TARGETS muparser::muparser spdlog::spdlog fmt::fmt prometheus-cpp::core)

function(kt_bundle_runtime_libs target)
  foreach(lib IN LISTS KT_BUNDLED_TARGETS)
    if(TARGET ${lib})
      add_custom_command(TARGET ${target} POST_BUILD
        COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_FILE:${lib}>
                $<TARGET_FILE_DIR:${target}>/$<TARGET_SONAME_FILE_NAME:${lib}>
        VERBATIM)
    endif()
  endforeach()
  # Installed (cmake/Install.cmake), the bundled libraries are in ../lib/kerntune.
  set_target_properties(${target} PROPERTIES
    BUILD_RPATH "$ORIGIN;${CUDAToolkit_LIBRARY_DIR}"
    INSTALL_RPATH "$ORIGIN/../lib/kerntune;$ORIGIN;${CUDAToolkit_LIBRARY_DIR}")
endfunction()
