#!/usr/bin/env bash
# The IOSIG paper's PGM experiments (Sect. 7.3, Fig. 11) on the device lab, with the plugin-built
# pgm-transform-iosig and the iosig runtime: the output is opened on the (throttled) hdd, and each
# parameter set moves it where the node's devices serve it best.
#
#   sudo examples/pgm/run-lab-demo.sh BUILD_DIR [SIZE] [CHUNK]     (defaults: 64M, 512K)
#
# Prints one line per run: operation, --sig, seconds, the mount the output went to. Without
# BUILD_DIR/lib/libiosig.so (preload not built) it runs the same binary without the runtime and says
# so (every output then stays on the hdd); without the plugin build it uses the plain pgm-transform.
# Uses the lab at ${IOSIG_LAB_DIR:-/var/tmp/iosig-lab}: brings it up if needed and takes it down again
# at the end if it was not up before; removes every file it wrote, whatever happens.
set -euo pipefail

build=$(cd "${1:?usage: run-lab-demo.sh BUILD_DIR [SIZE] [CHUNK]}" && pwd)
size=${2:-64M}
chunk=${3:-512K}
root=$(cd "$(dirname "$0")/../.." && pwd)
lab=$root/tests/lab/lab
lab_dir=${IOSIG_LAB_DIR:-/var/tmp/iosig-lab}
export IOSIG_LAB_DIR=$lab_dir

say() { echo "run-lab-demo.sh: $*" >&2; }
[[ $(id -u) -eq 0 ]] || { say "needs root (the device lab: loop devices, mounts, cgroups)"; exit 1; }
[[ -x $build/bin/pgm-gen ]] || { say "$build/bin/pgm-gen is not built"; exit 1; }

transform=$build/bin/pgm-transform-iosig
if [[ ! -x $transform ]]; then
    transform=$build/bin/pgm-transform
    [[ -x $transform ]] || { say "$build/bin/pgm-transform is not built"; exit 1; }
    say "the Clang plugin is not built: using $transform (not annotated)"
fi
runtime=$build/lib/libiosig.so
runtime_env=()
if [[ -e $runtime ]]; then
    runtime_env=(LD_PRELOAD="$runtime")
    runtime_note="runtime $runtime preloaded"
else
    runtime_note="WITHOUT the iosig runtime ($runtime is not built): nothing is redirected"
    say "$runtime is not built: running without the runtime"
fi

shopt -s nullglob
lab_was_up=yes
"$lab" status >/dev/null 2>&1 || lab_was_up=no
job=pgm-demo-$$
work= out=
staging_before=()
cleanup() {
    if [[ -n $work ]]; then rm -rf "$work"; fi
    if [[ -n $out ]]; then rm -rf "$out"; fi
    rm -rf "$lab_dir"/mnt/*/.iosig-*/"$job"
    # The runtime's staging roots this demo caused, if nothing else uses them now.
    local root
    for root in "$lab_dir"/mnt/*/.iosig-*; do
        if [[ " ${staging_before[*]} " != *" $root "* ]]; then rmdir "$root" 2>/dev/null || true; fi
    done
    if [[ $lab_was_up == no ]]; then
        "$lab" down >/dev/null 2>&1 || say "could not take the lab down ($lab down)"
    fi
}
trap cleanup EXIT
"$lab" up >/dev/null
staging_before=("$lab_dir"/mnt/*/.iosig-*)

work=$(mktemp -d "$lab_dir/mnt/ssd/pgm-demo.XXXXXX")
out=$(mktemp -d "$lab_dir/mnt/hdd/pgm-demo.XXXXXX")
"$build/bin/pgm-gen" --width 4096 --size "$size" "$work/input.pgm"
echo "PGM demo: input $size, chunk $chunk, ${transform##*/}, $runtime_note"
echo "output directory on the throttled hdd ($out); each run inside the lab's cgroup"
printf '%-10s %-5s %9s  %s\n' operation sig seconds output
for run in "posterize none" "posterize seq" "divide none" "divide ps1" "divide ps2" "divide ps3" \
           "divide ps4" "shuffle none" "shuffle ps1" "shuffle ps2" "shuffle ps3" "shuffle ps4"; do
    read -r operation sig <<<"$run"
    target=$out/$operation-$sig.pgm
    line=$("$lab" exec -- env "${runtime_env[@]}" IOSIG_CONFIG="$lab_dir/lab.yaml" \
        IOSIG_STATE="$work/state" IOSIG_JOB="$job" \
        "$transform" "$operation" --chunk "$chunk" --sig "$sig" --no-checksum "$work/input.pgm" "$target")
    seconds=$(sed -n 's/.* seconds=\([^ ]*\).*/\1/p' <<<"$line")
    where=$(sed -n 's/.* output=\([^ ]*\).*/\1/p' <<<"$line")
    where=${where#"$lab_dir"/mnt/}
    printf '%-10s %-5s %9s  %s\n' "$operation" "$sig" "$seconds" "${where%%/*}"
    rm -f "$(readlink -f "$target")" "$target"
done
