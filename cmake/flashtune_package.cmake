# Installs what a consumer needs to find libflashtune: flashtune.pc (pkg-config) and the CMake
# package (find_package(flashtune): targets flashtune::flashtune, the shared library, and
# flashtune::flashtune_static). Both are relocatable: paths are relative to where they lie.
# Included from runtime/CMakeLists.txt, after install(TARGETS ... EXPORT flashtuneTargets).
include(CMakePackageConfigHelpers)

# The static library's own dependencies (the shared one records them as NEEDED entries).
set(FT_STATIC_LIBS "-lsqlite3 -ldl -lpthread -lm")
file(RELATIVE_PATH FT_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${PROJECT_SOURCE_DIR}/cmake/flashtune.pc.in ${PROJECT_BINARY_DIR}/flashtune.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/flashtune.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(FT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/flashtune)
install(EXPORT flashtuneTargets NAMESPACE flashtune:: DESTINATION ${FT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/flashtuneConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/flashtuneConfig.cmake
                              INSTALL_DESTINATION ${FT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/flashtuneConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/flashtuneConfig.cmake ${PROJECT_BINARY_DIR}/flashtuneConfigVersion.cmake
        DESTINATION ${FT_CMAKE_DIR})
