#!/usr/bin/env bash
# The IOSIG paper's PGM experiments (Sect. 7.3, Fig. 11) on the device lab, with the plugin-built
# pgm-transform-iosig and the iosig runtime: the output is opened on the (throttled) hdd, and each
# parameter set moves it where the node's devices serve it best.
#
#   sudo examples/pgm/run-lab-demo.sh BUILD_DIR [SIZE] [CHUNK]     (defaults: 64M, 512K)
#
# Prints one line per run: operation, --sig, seconds, where the output went. Uses the lab at
# ${IOSIG_LAB_DIR:-/var/tmp/iosig-lab} (brought up if needed); removes its files afterwards.
set -euo pipefail

build=$(cd "${1:?usage: run-lab-demo.sh BUILD_DIR [SIZE] [CHUNK]}" && pwd)
size=${2:-64M}
chunk=${3:-512K}
root=$(cd "$(dirname "$0")/../.." && pwd)
lab=$root/tests/lab/lab
lab_dir=${IOSIG_LAB_DIR:-/var/tmp/iosig-lab}
export IOSIG_LAB_DIR=$lab_dir

[[ $(id -u) -eq 0 ]] || { echo "run-lab-demo.sh: needs root (the device lab)" >&2; exit 1; }
for tool in "$build/bin/pgm-gen" "$build/bin/pgm-transform-iosig" "$build/lib/libiosig.so"; do
    [[ -e $tool ]] || { echo "run-lab-demo.sh: $tool is not built" >&2; exit 1; }
done
"$lab" up >/dev/null

job=pgm-demo-$$
work=$(mktemp -d "$lab_dir/mnt/ssd/pgm-demo.XXXXXX")
out=$(mktemp -d "$lab_dir/mnt/hdd/pgm-demo.XXXXXX")
trap 'rm -rf "$work" "$out" "$lab_dir"/mnt/*/.iosig-*/"$job"' EXIT

"$build/bin/pgm-gen" --width 4096 --size "$size" "$work/input.pgm"
echo "chunk $chunk; output directory on the throttled hdd ($out); each run inside the lab's cgroup"
printf '%-10s %-5s %9s  %s\n' operation sig seconds output
for run in "posterize none" "posterize seq" "divide none" "divide ps1" "divide ps2" "divide ps3" \
           "divide ps4" "shuffle none" "shuffle ps1" "shuffle ps2" "shuffle ps3" "shuffle ps4"; do
    read -r operation sig <<<"$run"
    line=$("$lab" exec -- env LD_PRELOAD="$build/lib/libiosig.so" IOSIG_CONFIG="$lab_dir/lab.yaml" \
        IOSIG_STATE="$work/state" IOSIG_JOB="$job" \
        "$build/bin/pgm-transform-iosig" "$operation" --chunk "$chunk" --sig "$sig" --no-checksum \
        "$work/input.pgm" "$out/$operation-$sig.pgm")
    seconds=$(sed -n 's/.* seconds=\([^ ]*\).*/\1/p' <<<"$line")
    where=$(sed -n 's/.* output=\([^ ]*\).*/\1/p' <<<"$line")
    where=${where#"$lab_dir"/mnt/}
    printf '%-10s %-5s %9s  %s\n' "$operation" "$sig" "$seconds" "${where%%/*}"
    rm -f "$(readlink -f "$out/$operation-$sig.pgm")" "$out/$operation-$sig.pgm"
done
