#!/usr/bin/env bash
# End-to-end checks of programs built with the iosig Clang plugin (see CMakeLists.txt here).
#
#   run-e2e.sh PROGRAM_MODE     e.g. c_no_runtime, cxx_recording_preload, c64_lab_linked
#
# PROGRAM is c, c64 (same source, -D_FILE_OFFSET_BITS=64 -D_FORTIFY_SOURCE=2 -O2) or cxx; MODE:
#   no_runtime          plugin build, no runtime: stdout, stderr (descriptor numbers), files and
#                       modes identical to the build without the plugin
#   recording_preload   plugin build + LD_PRELOAD of the recording runtime double
#   recording_linked    plugin build linked to the recording double: stdout and files identical,
#                       and the runtime saw exactly expected/PROGRAM.record
#   lab_preload         plugin build + LD_PRELOAD=libiosig.so on the device lab
#   lab_linked          plugin build linked to libiosig.so on the lab: stdout and contents identical
#                       to the plain build; each annotated new file is where `iosig explain` puts its
#                       signature (expected/PROGRAM.placement), unannotated ones stay
#   lab_run_keep        plugin build under `iosig run --keep`: as lab_linked (files stay redirected)
#   lab_run             plugin build under `iosig run` (finalized at the end): stdout identical to
#                       the plain build; every file back at its path as a regular file with the plain
#                       build's contents and mode, except `temp` ones, which finalize deletes
#   lab_unannotated     (c only) the plain build under LD_PRELOAD=libiosig.so: nothing redirected
# Environment (set by ctest): E2E_BIN_DIR, E2E_SOURCE_DIR, E2E_RECORDING_LIB, E2E_PRELOAD_LIB, E2E_IOSIG_BIN,
# IOSIG_LAB_DIR, IOSIG_LAB. Exit 77 = skipped (lab modes without root).
set -euo pipefail

case_name=${1:?usage: run-e2e.sh PROGRAM_MODE}
program=${case_name%%_*}
mode=${case_name#*_}
bin=${E2E_BIN_DIR:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/iosig-plugin-e2e.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# run VARIANT DIR [ENV...]: runs e2e_PROGRAM_VARIANT in DIR with output directory DIR/out.
run() {
    local variant=$1 dir=$2
    shift 2
    mkdir -p "$dir/out"
    (cd "$dir" && env "$@" "$bin/e2e_${program}_${variant}" out >stdout 2>stderr) ||
        fail "e2e_${program}_${variant} exited with $? ($(cat "$dir/stderr"))"
}

same_file() {
    cmp -s "$1" "$2" || { diff -u "$1" "$2" | head -40 >&2; fail "$1 and $2 differ"; }
}

# Same names, same contents (through symlinks), same modes.
same_tree() {
    local a=$1 b=$2
    diff <(cd "$a" && find . -mindepth 1 | sort) <(cd "$b" && find . -mindepth 1 | sort) >&2 ||
        fail "$a and $b hold different files"
    diff -r "$a" "$b" >&2 || fail "$a and $b differ in content"
    local name
    while IFS= read -r name; do
        [[ $(stat -L -c %a "$a/$name") == $(stat -L -c %a "$b/$name") ]] ||
            fail "$name: mode $(stat -L -c %a "$a/$name") vs $(stat -L -c %a "$b/$name")"
    done < <(cd "$a" && find . -mindepth 1 -type f -o -type l)
}

no_symlinks() {
    local links
    links=$(find "$1" -type l)
    [[ -z $links ]] || fail "redirected without a runtime: $links"
}

# The mount `iosig explain` chooses on the lab for a signature (empty: none qualifies).
chosen_mount() {
    "${E2E_IOSIG_BIN:?}" explain --config "$lab_dir/lab.yaml" --sig "$1" --json 2>/dev/null |
        python3 -c 'import json, sys; c = json.load(sys.stdin)["choice"]; print(c["mount"] if c else "")' ||
        true
}

expected_record() {
    sed -e '/^#/d' "$E2E_SOURCE_DIR/expected/$program.record"
}

case $mode in
no_runtime)
    run plain "$work/plain"
    run plugin "$work/plugin"
    same_file "$work/plain/stdout" "$work/plugin/stdout"
    same_file "$work/plain/stderr" "$work/plugin/stderr"
    same_tree "$work/plain/out" "$work/plugin/out"
    no_symlinks "$work/plugin/out"
    ;;
recording_preload | recording_linked)
    run plain "$work/plain"
    if [[ $mode == recording_preload ]]; then
        run plugin "$work/plugin" LD_PRELOAD="${E2E_RECORDING_LIB:?}" IOSIG_TEST_RECORD="$work/record"
    else
        run recording "$work/plugin" IOSIG_TEST_RECORD="$work/record"
    fi
    same_file "$work/plain/stdout" "$work/plugin/stdout"
    same_tree "$work/plain/out" "$work/plugin/out"
    [[ -s $work/record ]] || fail "the runtime double saw no call"
    expected_record >"$work/expected.record"
    same_file "$work/expected.record" "$work/record"
    ;;
lab_preload | lab_linked | lab_run_keep | lab_run | lab_unannotated)
    [[ $(id -u) -eq 0 ]] || { echo "skipped: the device lab needs root"; exit 77; }
    : "${E2E_PRELOAD_LIB:?the real runtime (libiosig.so) is not built}"
    lab_dir=${IOSIG_LAB_DIR:-/var/tmp/iosig-lab}
    [[ -f $lab_dir/lab.yaml ]] || fail "no lab at $lab_dir (run: tests/lab/lab up)"
    mounts=$lab_dir/mnt
    # The program's own directory is on the slow disk; the runtime may move annotated files away.
    place=$(mktemp -d "$mounts/hdd/plugin-e2e.XXXXXX")
    job=plugin-e2e-$$
    # The runtime stages redirected files under MOUNT/.iosig-*/JOB: remove them with the test's files.
    trap 'rm -rf "$work" "$place" "$mounts"/*/.iosig-*/"$job"' EXIT
    runtime_env=(IOSIG_CONFIG="$lab_dir/lab.yaml" IOSIG_STATE="$work/state" IOSIG_JOB="$job")
    run plain "$place/plain"
    case $mode in
    lab_preload) run plugin "$place/runtime" LD_PRELOAD="$E2E_PRELOAD_LIB" "${runtime_env[@]}" ;;
    lab_linked) run linked "$place/runtime" "${runtime_env[@]}" ;;
    lab_unannotated) run plain "$place/runtime" LD_PRELOAD="$E2E_PRELOAD_LIB" "${runtime_env[@]}" ;;
    lab_run_keep | lab_run)
        keep=()
        [[ $mode == lab_run_keep ]] && keep=(--keep)
        mkdir -p "$place/runtime/out"
        (cd "$place/runtime" && "${E2E_IOSIG_BIN:?}" run "${keep[@]}" --quiet --config "$lab_dir/lab.yaml" \
            --state "$work/state" --job "$job" -- "$bin/e2e_${program}_plugin" out >stdout 2>stderr) ||
            fail "iosig run ${keep[*]} e2e_${program}_plugin exited with $? ($(cat "$place/runtime/stderr"))"
        ;;
    esac
    same_file "$place/plain/stdout" "$place/runtime/stdout"
    if [[ $mode == lab_run ]]; then
        no_symlinks "$place/runtime/out"
        # What finalize must leave: the plain build's files minus the annotated `temp` ones.
        while IFS='|' read -r name signature; do
            [[ -z $name || $name == \#* ]] && continue
            [[ " $signature " == *" temp "* ]] && rm "$place/plain/out/$name"
        done <"$E2E_SOURCE_DIR/expected/$program.placement"
        same_tree "$place/plain/out" "$place/runtime/out"
        exit 0
    fi
    same_tree "$place/plain/out" "$place/runtime/out"
    if [[ $mode == lab_unannotated ]]; then
        no_symlinks "$place/runtime/out"
        exit 0
    fi
    # expected/PROGRAM.placement: "file|signature" ('-': not annotated). Where the runtime put each
    # file must be where the selector puts its signature on this node.
    here=$(df --output=target "$place" | tail -1)
    while IFS='|' read -r name signature; do
        [[ -z $name || $name == \#* ]] && continue
        path=$place/runtime/out/$name
        [[ -e $path ]] || fail "$name is missing"
        expected=$here
        if [[ $signature != - ]]; then
            expected=$(chosen_mount "$signature")
            [[ -n $expected ]] || expected=$here
        fi
        target=$(readlink -f "$path")
        if [[ $expected == "$here" ]]; then
            [[ ! -L $path ]] || fail "$name ($signature) was redirected to $target; it must stay"
        else
            [[ -L $path ]] || fail "$name ($signature) was not redirected (the selector chooses $expected)"
            [[ $target == "$expected"/* ]] || fail "$name ($signature) is on $target, expected under $expected"
            echo "$name -> $target"
        fi
    done <"$E2E_SOURCE_DIR/expected/$program.placement"
    ;;
*)
    fail "unknown mode '$mode' in '$case_name'"
    ;;
esac
echo "ok: $case_name"
