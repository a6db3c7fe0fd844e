# `cmake --install`: libraries, public headers, tools, iosigConfig.cmake and iosig.pc.
include(CMakePackageConfigHelpers)

set(IOSIG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/iosig)
install(EXPORT iosigTargets NAMESPACE iosig:: DESTINATION ${IOSIG_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/iosigConfig.cmake.in
    ${PROJECT_BINARY_DIR}/iosigConfig.cmake INSTALL_DESTINATION ${IOSIG_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/iosigConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/iosigConfig.cmake ${PROJECT_BINARY_DIR}/iosigConfigVersion.cmake
    DESTINATION ${IOSIG_CMAKE_DIR})

configure_file(${PROJECT_SOURCE_DIR}/cmake/iosig.pc.in ${PROJECT_BINARY_DIR}/iosig.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/iosig.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/iosig/configs)
