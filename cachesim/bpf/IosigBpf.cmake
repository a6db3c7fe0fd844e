# Builds the CO-RE eBPF programs of cachesim/bpf/ into libbpf skeleton headers at build time:
#   vmlinux.h    <- bpftool btf dump file /sys/kernel/btf/vmlinux format c
#   X.bpf.o      <- clang-19 -target bpf (CO-RE relocations against vmlinux.h)
#   X.skel.h     <- bpftool gen skeleton X.bpf.o
# Without BTF, bpftool, clang-19 or libbpf the library is built without eBPF and its collectors poll
# /proc/vmstat instead (the configure step says so).

option(IOSIG_CACHESIM_BPF "Build cachesim's eBPF probes (needs BTF, clang-19, bpftool, libbpf)" ON)
set(IOSIG_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH "Kernel BTF that vmlinux.h is generated from")

function(iosig_cachesim_add_bpf target)
    set(reason "")
    if(NOT IOSIG_CACHESIM_BPF)
        set(reason "IOSIG_CACHESIM_BPF=OFF")
    elseif(NOT EXISTS ${IOSIG_VMLINUX_BTF})
        set(reason "${IOSIG_VMLINUX_BTF} is absent (kernel without BTF)")
    endif()
    if(NOT reason)
        find_program(IOSIG_BPFTOOL bpftool PATHS /usr/sbin /sbin)
        find_program(IOSIG_BPF_CLANG NAMES clang-19 clang)
        pkg_check_modules(IOSIG_LIBBPF QUIET libbpf>=0.8)
        if(NOT IOSIG_BPFTOOL)
            set(reason "bpftool not found")
        elseif(NOT IOSIG_BPF_CLANG)
            set(reason "clang-19 not found")
        elseif(NOT IOSIG_LIBBPF_FOUND)
            set(reason "libbpf (pkg-config libbpf) not found")
        endif()
    endif()
    if(reason)
        message(WARNING "cachesim: building WITHOUT eBPF: ${reason}. The collectors will poll "
                        "/proc/vmstat and /proc/sys/vm instead.")
        target_compile_definitions(${target} PUBLIC IOSIG_CACHESIM_HAVE_BPF=0)
        return()
    endif()

    set(out ${CMAKE_CURRENT_BINARY_DIR}/bpf)
    set(src ${CMAKE_CURRENT_SOURCE_DIR}/bpf)
    file(MAKE_DIRECTORY ${out})
    add_custom_command(OUTPUT ${out}/vmlinux.h
        COMMAND ${IOSIG_BPFTOOL} btf dump file ${IOSIG_VMLINUX_BTF} format c > ${out}/vmlinux.h.tmp
        COMMAND ${CMAKE_COMMAND} -E rename ${out}/vmlinux.h.tmp ${out}/vmlinux.h
        COMMENT "Generating vmlinux.h from ${IOSIG_VMLINUX_BTF}"
        VERBATIM)
    set(skeletons "")
    foreach(program dirty_probes)
        add_custom_command(OUTPUT ${out}/${program}.bpf.o
            COMMAND ${IOSIG_BPF_CLANG} -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_x86
                    -I${out} -I${src} -idirafter /usr/include/x86_64-linux-gnu
                    -c ${src}/${program}.bpf.c -o ${out}/${program}.bpf.o
            DEPENDS ${src}/${program}.bpf.c ${src}/dirty_events.h ${out}/vmlinux.h
            COMMENT "Compiling eBPF program ${program}.bpf.c"
            VERBATIM)
        add_custom_command(OUTPUT ${out}/${program}.skel.h
            COMMAND ${IOSIG_BPFTOOL} gen skeleton ${out}/${program}.bpf.o name ${program}
                    > ${out}/${program}.skel.h.tmp
            COMMAND ${CMAKE_COMMAND} -E rename ${out}/${program}.skel.h.tmp ${out}/${program}.skel.h
            DEPENDS ${out}/${program}.bpf.o
            COMMENT "Generating libbpf skeleton ${program}.skel.h"
            VERBATIM)
        list(APPEND skeletons ${out}/${program}.skel.h)
    endforeach()
    add_custom_target(${target}_bpf_skeletons DEPENDS ${skeletons})
    add_dependencies(${target} ${target}_bpf_skeletons)
    target_sources(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/bpf_collector.cpp)
    target_include_directories(${target} PRIVATE ${out} ${src} ${IOSIG_LIBBPF_INCLUDE_DIRS})
    target_compile_definitions(${target} PUBLIC IOSIG_CACHESIM_HAVE_BPF=1)
    # By name, so that the exported static library stays relocatable.
    target_link_libraries(${target} PRIVATE bpf elf z)
    message(STATUS "cachesim: eBPF probes enabled (BTF ${IOSIG_VMLINUX_BTF}, ${IOSIG_BPFTOOL}, ${IOSIG_BPF_CLANG})")
endfunction()
