#!/usr/bin/env bash
# Tests of the PGM workload (examples/pgm).
#   run-pgm-tests.sh transformations   each operation writes what its definition says (verify_pgm.py),
#                                      with a last partial chunk for posterize and divide
#   run-pgm-tests.sh identical         the plugin build writes byte for byte what the plain build
#                                      writes, for every operation and signature, with no runtime
#   run-pgm-tests.sh lab               with LD_PRELOAD=libiosig.so on the device lab, each signature's
#                                      output lands on the mount `iosig explain` chooses for it
#   run-pgm-tests.sh demo              examples/pgm/run-lab-demo.sh (the README demo) on the lab, with
#                                      and without libiosig.so: a line per run, the unannotated and
#                                      runtime-less outputs on the hdd, nothing left behind
# Environment (set by ctest): PGM_BIN_DIR, PGM_SOURCE_DIR, PGM_PRELOAD_LIB, PGM_IOSIG_BIN, IOSIG_LAB_DIR.
set -euo pipefail

mode=${1:?usage: run-pgm-tests.sh transformations|identical|lab|demo}
bin=${PGM_BIN_DIR:?}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/iosig-pgm-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

case $mode in
transformations)
    # 1000 x 301 pixels: 73 chunks of 4 KiB and a partial one.
    "$bin/pgm-gen" --width 1000 --height 301 "$work/in.pgm" >/dev/null
    for operation in posterize divide; do
        "$bin/pgm-transform" "$operation" --chunk 4K --sig none "$work/in.pgm" "$work/$operation.pgm" >/dev/null
        python3 "$here/verify_pgm.py" "$operation" 4096 "$work/in.pgm" "$work/$operation.pgm"
    done
    "$bin/pgm-gen" --width 1024 --height 256 "$work/even.pgm" >/dev/null
    "$bin/pgm-transform" shuffle --chunk 4K --sig none "$work/even.pgm" "$work/shuffle.pgm" >/dev/null
    python3 "$here/verify_pgm.py" shuffle 4096 "$work/even.pgm" "$work/shuffle.pgm"
    ;;
identical)
    "$bin/pgm-gen" --width 1000 --height 301 "$work/in.pgm" >/dev/null
    for operation in posterize divide shuffle; do
        for sig in none seq ps1 ps2 ps3 ps4; do
            plain=$("$bin/pgm-transform" "$operation" --chunk 16K --sig "$sig" "$work/in.pgm" "$work/plain.pgm")
            annotated=$("$bin/pgm-transform-iosig" "$operation" --chunk 16K --sig "$sig" "$work/in.pgm" "$work/iosig.pgm")
            cmp "$work/plain.pgm" "$work/iosig.pgm" || fail "$operation --sig $sig: the outputs differ"
            [[ ! -L $work/iosig.pgm ]] || fail "$operation --sig $sig: redirected without a runtime"
            [[ $(field fnv1a "$plain") == $(field fnv1a "$annotated") ]] || fail "$operation $sig: checksums"
        done
        echo "$operation: identical for none seq ps1 ps2 ps3 ps4"
    done
    ;;
lab)
    [[ $(id -u) -eq 0 ]] || { echo "skipped: the device lab needs root"; exit 77; }
    lab_dir=${IOSIG_LAB_DIR:-/var/tmp/iosig-lab}
    [[ -f $lab_dir/lab.yaml ]] || fail "no lab at $lab_dir"
    : "${PGM_PRELOAD_LIB:?} ${PGM_IOSIG_BIN:?}"
    place=$(mktemp -d "$lab_dir/mnt/hdd/pgm-test.XXXXXX")
    job=pgm-test-$$
    # The runtime stages redirected files under MOUNT/.iosig-*/JOB: remove them with the test's files.
    trap 'rm -rf "$work" "$place" "$lab_dir"/mnt/*/.iosig-*/"$job"' EXIT
    "$bin/pgm-gen" --width 4096 --size 8M "$work/in.pgm" >/dev/null
    hdd=$(df --output=target "$place" | tail -1)
    for run in "posterize seq" "divide ps1" "divide ps2" "shuffle ps3" "shuffle ps4" "divide none"; do
        read -r operation sig <<<"$run"
        reference=$("$bin/pgm-transform" "$operation" --sig "$sig" "$work/in.pgm" "$work/reference.pgm")
        line=$(env LD_PRELOAD="$PGM_PRELOAD_LIB" IOSIG_CONFIG="$lab_dir/lab.yaml" IOSIG_STATE="$work/state" \
            IOSIG_JOB="$job" "$bin/pgm-transform-iosig" "$operation" --sig "$sig" "$work/in.pgm" \
            "$place/$operation-$sig.pgm")
        echo "$line"
        [[ $(field fnv1a "$line") == $(field fnv1a "$reference") ]] || fail "$operation $sig: output differs"
        signature=$(sed -n 's/.* sig="\([^"]*\)".*/\1/p' <<<"$line")
        expected=$hdd
        if [[ -n $signature ]]; then
            expected=$("$PGM_IOSIG_BIN" explain --config "$lab_dir/lab.yaml" --sig "$signature" --json |
                python3 -c 'import json, sys; c = json.load(sys.stdin)["choice"]; print(c["mount"] if c else "")')
            [[ -n $expected ]] || expected=$hdd
        fi
        output=$(field output "$line")
        [[ $output == "$expected"/* ]] || fail "$operation --sig $sig: output on $output, expected under $expected"
    done
    ;;
demo)
    [[ $(id -u) -eq 0 ]] || { echo "skipped: the device lab needs root"; exit 77; }
    lab_dir=${IOSIG_LAB_DIR:-/var/tmp/iosig-lab}
    [[ -f $lab_dir/lab.yaml ]] || fail "no lab at $lab_dir"
    build=$(cd "$bin/.." && pwd)
    # The same build without the runtime: its programs, no lib/.
    mkdir -p "$work/no-runtime/bin"
    ln -s "$build"/bin/pgm-* "$work/no-runtime/bin/"
    files_on_lab() { find "$lab_dir/mnt" -mindepth 1 -maxdepth 3 ! -path '*/lost+found*' | sort; }
    files_on_lab >"$work/before"
    for variant in runtime no-runtime; do
        dir=$build
        [[ $variant == no-runtime ]] && dir=$work/no-runtime
        "$PGM_SOURCE_DIR/run-lab-demo.sh" "$dir" 4M 256K >"$work/$variant.out" 2>"$work/$variant.err" ||
            fail "run-lab-demo.sh ($variant) exited with $? ($(cat "$work/$variant.err"))"
        cat "$work/$variant.out"
        [[ $(grep -cE '^(posterize|divide|shuffle) ' "$work/$variant.out") -eq 12 ]] ||
            fail "run-lab-demo.sh ($variant) did not print 12 runs"
        grep -E '^[a-z]+ +none ' "$work/$variant.out" | grep -qv ' hdd$' &&
            fail "run-lab-demo.sh ($variant): an unannotated output left the hdd"
        files_on_lab >"$work/after"
        diff "$work/before" "$work/after" >&2 || fail "run-lab-demo.sh ($variant) left files on the lab"
        "${IOSIG_LAB:?}" status >/dev/null || fail "run-lab-demo.sh ($variant) took down a lab it did not bring up"
    done
    grep -q 'runtime .*libiosig.so preloaded' "$work/runtime.out" || fail "the demo did not use the runtime"
    grep -q 'WITHOUT the iosig runtime' "$work/no-runtime.out" || fail "the demo did not say it ran without the runtime"
    grep -E '^(posterize|divide|shuffle) ' "$work/no-runtime.out" | grep -qv ' hdd$' &&
        fail "an output left the hdd without the runtime"
    echo "ok: demo with and without the runtime"
    ;;
*)
    fail "unknown mode $mode"
    ;;
esac
