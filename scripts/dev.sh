#!/usr/bin/env bash
# The README's two set-up commands (run as root on Debian 12):
#   scripts/dev.sh demo   install packages, build, run the demo on the embedded default
#   scripts/dev.sh test   install packages, build (normal + ASan/UBSan trees), run the whole test suite
# Also: `deps`, `build` (no install, no run). Environment: IOSIG_BUILD_DIR, IOSIG_ASAN_BUILD_DIR,
# IOSIG_JOBS (default: number of cores), IOSIG_SKIP_DEPS=1 (packages already installed).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${IOSIG_BUILD_DIR:-$root/build}
asan_dir=${IOSIG_ASAN_BUILD_DIR:-$root/build-asan}
jobs=${IOSIG_JOBS:-$(nproc)}
# clang-19 builds everything: the plugin, the eBPF programs and the libFuzzer targets need it anyway.
compilers=(-DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19)

say() { printf '\n== %s\n' "$*"; }

install_deps() {
    if [[ ${IOSIG_SKIP_DEPS:-0} == 1 ]]; then return; fi
    if [[ $(id -u) -ne 0 ]]; then
        echo "dev.sh: not root; assuming the packages in scripts/debian-packages.txt are installed"
        return
    fi
    say "installing Debian packages (scripts/debian-packages.txt)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # shellcheck disable=SC2046
    apt-get install -y -q --no-install-recommends $(sed 's/#.*//' "$root/scripts/debian-packages.txt")
}

build_main() {
    say "building $build_dir"
    cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${compilers[@]}"
    cmake --build "$build_dir" -j "$jobs"
}

build_sanitized() {
    say "building the ASan/UBSan tree $asan_dir (the core and the shim)"
    cmake -S "$root" -B "$asan_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DIOSIG_SANITIZE=ON "${compilers[@]}" \
        "-DIOSIG_COMPONENTS=selector;preload" -DIOSIG_BUILD_BENCH=OFF -DIOSIG_BUILD_FUZZ=OFF
    cmake --build "$asan_dir" -j "$jobs"
}

run_tests() {
    local status=0
    say "test suite: $build_dir"
    ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" || status=1
    say "test suite under ASan/UBSan: $asan_dir"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --test-dir "$asan_dir" --output-on-failure -j "$jobs" || status=1
    return $status
}

run_demo() {
    local iosig=$build_dir/bin/iosig
    say "iosig explain on the IOSIG paper's evaluation node (configs/paper-node.yaml)"
    for sig in "global random size-per-IO(512K) totalsize(1G)" \
               "random MTTDL(20y) size-per-IO(512K) totalsize(1G)" \
               "random persist size-per-IO(512K) totalsize(1G)" \
               "random size-per-IO(512K) totalsize(1G)" \
               "sequential persist size-per-IO(16M) totalsize(6G)" \
               "sequential persist size-per-IO(1G) totalsize(6G)"; do
        echo "\$ iosig explain --config configs/paper-node.yaml --sig \"$sig\""
        "$iosig" explain --config "$root/configs/paper-node.yaml" --sig "$sig" || true
    done
    local trace=$root/../shared/data/traces/cloudPhysicsIO.oracleGeneral.bin
    if [[ -x $build_dir/bin/iosig-tiersim && -f $trace ]]; then
        say "iosig-tiersim: the two-tier cache's eviction policies on the CloudPhysics trace"
        "$build_dir/bin/iosig-tiersim" --trace "$trace" --policy lru,lfu,arc,ws,belady --cache-size 256M,1G || true
    fi
    if [[ -x $root/scripts/demo-lab.sh && $(id -u) -eq 0 ]]; then
        "$root/scripts/demo-lab.sh" "$build_dir"
    fi
}

case ${1:-} in
    deps) install_deps ;;
    build) build_main ;;
    demo) install_deps; build_main; run_demo ;;
    test) install_deps; build_main; build_sanitized; run_tests ;;
    *) echo "usage: $0 demo|test|deps|build" >&2; exit 2 ;;
esac
