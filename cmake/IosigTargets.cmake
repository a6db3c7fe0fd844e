# Helpers every component uses, so that warnings, sanitizers and test registration are uniform.

# Our own code: strict warnings, C++20, optional sanitizers.
function(iosig_target_defaults target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
    if(IOSIG_SANITIZE)
        target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                 -fno-sanitize-recover=undefined)
        target_link_options(${target} PRIVATE -fsanitize=address,undefined)
    endif()
    if(IOSIG_TSAN)
        target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
        target_link_options(${target} PRIVATE -fsanitize=thread)
    endif()
endfunction()

# A GoogleTest executable made of SOURCES, linked to LIBS, registered with ctest.
# LABELS are attached to every discovered test (e.g. "root", "lab", "evaluation").
function(iosig_add_gtest name)
    cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS;PROPERTIES" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    iosig_target_defaults(${name})
    target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
    target_compile_definitions(${name} PRIVATE
        IOSIG_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
        IOSIG_BINARY_DIR="${PROJECT_BINARY_DIR}"
        IOSIG_SHARED_DIR="${IOSIG_SHARED_DIR}")
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 300)
    endif()
    set(labels ${ARG_LABELS})
    if(IOSIG_SANITIZE OR IOSIG_TSAN)
        list(APPEND labels sanitize)
        # A sanitizer makes a test several times slower, and more where page faults are slow: on
        # 2026-11-29 the ASan run took 2.4x its usual time and a policy test ran into its 120 s limit.
        math(EXPR ARG_TIMEOUT "${ARG_TIMEOUT} * 3")
    endif()
    gtest_discover_tests(${name}
        DISCOVERY_TIMEOUT 60
        PROPERTIES TIMEOUT ${ARG_TIMEOUT} ${ARG_PROPERTIES})
    # Labels are set by a script ctest includes after the discovered tests: a list value ("preload;root")
    # passed through gtest_discover_tests' PROPERTIES loses all but its first element.
    set(labels_script ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
    file(WRITE ${labels_script}
        "if(DEFINED ${name}_TESTS)\n"
        "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${labels}\")\n"
        "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_script})
endfunction()

# Announce that library TARGET (which must be named iosig_cli_<name>) contributes `iosig` subcommands.
function(iosig_add_cli_module name)
    set_property(GLOBAL APPEND PROPERTY IOSIG_CLI_MODULES ${name})
endfunction()

# A Catch2 v2 benchmark executable (bench/<component>/), output in ${PROJECT_BINARY_DIR}/bench.
function(iosig_add_benchmark name)
    cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    iosig_target_defaults(${name})
    target_compile_definitions(${name} PRIVATE CATCH_CONFIG_ENABLE_BENCHMARKING
        IOSIG_SOURCE_DIR="${PROJECT_SOURCE_DIR}" IOSIG_SHARED_DIR="${IOSIG_SHARED_DIR}")
    target_link_libraries(${name} PRIVATE ${ARG_LIBS} Catch2::Catch2)
    set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
endfunction()
