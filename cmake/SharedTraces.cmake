# The shared traces the tests read (tests/data/traces/README.md): ../shared beside the clone when
# its files are there and intact, else the copy in tests/data/traces unpacked into the build tree.
# Sets the cache variable IOSIG_SHARED_DIR (a folder holding data/traces/) unless it was given.

set(IOSIG_TRACE_FILES cloudPhysicsIO.csv cloudPhysicsIO.oracleGeneral.bin)
set(IOSIG_TRACE_SHA256
    987ff2213050e47d24e8ba6e010d4b3127e51aafef6a76a8a6d43d13b9156fa1
    65438dd7b2d3dec7ffe8a5c9348045da92de3311f339b7b59c9a0a44e6050dea)

# Whether every trace is in <dir>/data/traces with its checksum.
function(iosig_traces_intact dir result)
    set(intact TRUE)
    foreach(file expected IN ZIP_LISTS IOSIG_TRACE_FILES IOSIG_TRACE_SHA256)
        set(path ${dir}/data/traces/${file})
        if(NOT EXISTS ${path})
            set(intact FALSE)
            break()
        endif()
        file(SHA256 ${path} actual)
        if(NOT actual STREQUAL expected)
            set(intact FALSE)
            break()
        endif()
    endforeach()
    set(${result} ${intact} PARENT_SCOPE)
endfunction()

if(NOT IOSIG_SHARED_DIR)
    get_filename_component(beside ${PROJECT_SOURCE_DIR}/../shared ABSOLUTE)
    iosig_traces_intact(${beside} beside_intact)
    if(beside_intact)
        set(shared ${beside})
    else()
        set(shared ${PROJECT_BINARY_DIR}/shared)
        iosig_traces_intact(${shared} unpacked_intact)
        if(NOT unpacked_intact)
            file(ARCHIVE_EXTRACT INPUT ${PROJECT_SOURCE_DIR}/tests/data/traces/cloudPhysicsIO.tar.xz
                 DESTINATION ${shared}/data/traces)
            iosig_traces_intact(${shared} unpacked_intact)
            if(NOT unpacked_intact)
                message(FATAL_ERROR "tests/data/traces/cloudPhysicsIO.tar.xz: unpacked into "
                                    "${shared}/data/traces, but a file is missing or its sha256 "
                                    "differs from tests/data/traces/README.md")
            endif()
        endif()
    endif()
    set(IOSIG_SHARED_DIR ${shared} CACHE PATH
        "A folder holding data/traces/ with the shared CloudPhysics trace (tests/data/traces/README.md)")
endif()
message(STATUS "iosig: shared traces in ${IOSIG_SHARED_DIR}/data/traces")
