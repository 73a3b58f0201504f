# `cmake --install` and `cpack -G DEB`: the daemon, the CLI and the worker in bin/, the shared
# libraries the build bundles (cmake/Bundle.cmake) in lib/kerntune/ (the binaries' install RPATH),
# the families and the history page in share/kerntune/ (where the daemon looks first, relative to
# its executable: tuner/paths.hpp), and the Python client where Debian's python3 imports from.
# NVRTC and the CUDA driver are the host's (the CUDA toolkit's library folder is in the RPATH).
install(TARGETS kerntuned kerntune kerntune-worker RUNTIME DESTINATION bin)
foreach(lib IN LISTS KT_BUNDLED_TARGETS)
  if(TARGET ${lib})
    install(FILES "$<TARGET_FILE_DIR:kerntuned>/$<TARGET_SONAME_FILE_NAME:${lib}>"
            DESTINATION lib/kerntune)
  endif()
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernel_templates/ DESTINATION share/kerntune/kernel_templates)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/web/ DESTINATION share/kerntune/web)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/client/python/kerntune DESTINATION lib/python3/dist-packages
        PATTERN __pycache__ EXCLUDE)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kerntune)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "kerntune developers <kerntune@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "finds the fastest correct variant of a CUDA kernel for a GPU and a shape, and remembers it")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The bundled libraries ship inside; the rest is the C and C++ runtime, and Python for the client.
# NVRTC comes with the CUDA toolkit, which Debian packages under another name than NVIDIA's.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, libgcc-s1, python3")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libpq5")
set(CPACK_STRIP_FILES ON)
include(CPack)
