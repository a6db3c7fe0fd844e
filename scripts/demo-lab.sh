#!/usr/bin/env bash
# Demo part 2 (root only): bring up the device lab, ask iosig where typical streams should go on it,
# and take the lab down again. Usage: scripts/demo-lab.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?build dir}" && pwd)
iosig=$build/bin/iosig
export IOSIG_LAB_DIR=${IOSIG_LAB_DIR:-/var/tmp/iosig-demo-lab}
lab=$root/tests/lab/lab
trap '"$lab" down >/dev/null 2>&1 || true' EXIT
"$lab" up
for sig in "temp random size-per-IO(4K) totalsize(64M)" \
           "random persist MTTDL(20y) size-per-IO(64K) totalsize(1G)" \
           "persist random size-per-IO(4K) totalsize(1G)" \
           "global sequential persist size-per-IO(1M) totalsize(2G)"; do
    printf '\n$ iosig explain --config %s --sig "%s"\n' "$IOSIG_LAB_DIR/lab.yaml" "$sig"
    "$iosig" explain --config "$IOSIG_LAB_DIR/lab.yaml" --sig "$sig" || true
done

# An unmodified program under `iosig run`: rules give a checkpoint and a scratch file their signatures;
# the shim sends each to the mount the selector picks, the report says what happened, finalize brings
# the checkpoint home and deletes the scratch file.
if [[ -x $iosig && -e $build/lib/libiosig.so ]]; then
    work=$IOSIG_LAB_DIR/mnt/hdd/iosig-demo
    rm -rf "$work" && mkdir -p "$work/out"
    cat >"$work/rules.yaml" <<'RULES'
rules:
  - match: "**/out/ckpt-*.bin"
    sig: "sequential persist MTTDL(20y) size-per-IO(1M) totalsize(64M)"
  - match: "**/*.tmp"
    sig: "temp random size-per-IO(4K) totalsize(16M)"
RULES
    printf '\n$ iosig run --config lab.yaml --rules rules.yaml --keep -- sh -c "dd ... of=out/ckpt-1.bin; dd ... of=scratch.tmp"\n'
    (cd "$work" && "$iosig" run --config "$IOSIG_LAB_DIR/lab.yaml" --rules rules.yaml --keep --job demo \
        --state "$work/state" -- sh -c \
        'dd if=/dev/urandom of=out/ckpt-1.bin bs=1M count=16 status=none && dd if=/dev/zero of=scratch.tmp bs=4k count=512 status=none')
    printf '\n$ ls -l out/ckpt-1.bin scratch.tmp   (redirected: symlinks into staging directories)\n'
    (cd "$work" && ls -l out/ckpt-1.bin scratch.tmp)
    printf '\n$ iosig report --job demo\n'
    "$iosig" report --job demo --state "$work/state" || true
    printf '\n$ iosig finalize --job demo\n'
    "$iosig" finalize --job demo --state "$work/state"
    (cd "$work" && ls -l out/ && { [[ -e scratch.tmp ]] || echo "scratch.tmp (temp) deleted"; })
    rm -rf "$work"
fi

# The two-tier engine, cache on the ramdisk and home on the throttled hdd, the queueing model's time
# beside the measured one (docs/tier.md): random reads over a working set the cache holds, then the
# first requests of the shared block trace (small writes, most of them to part of a 4 KiB line: the
# tier reads each missing line before writing it, so direct IO wins there, as the model predicts).
shared=$(sed -n 's/^IOSIG_SHARED_DIR:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null)
trace=${shared:-$root/../shared}/data/traces/cloudPhysicsIO.csv
if [[ -x $build/bin/iosig-tierbench ]]; then
    tierbench() {
        "$lab" exec -- "$build/bin/iosig-tierbench" --cache-dir "$IOSIG_LAB_DIR/mnt/ramdisk" \
            --home-dir "$IOSIG_LAB_DIR/mnt/hdd" --node "$IOSIG_LAB_DIR/lab.yaml" "$@" || true
    }
    printf '\n$ lab exec -- iosig-tierbench --working-set 1M --requests 2560 --pattern random\n'
    tierbench --working-set 1M --requests 2560 --pattern random
    if [[ -f $trace ]]; then
        printf '\n$ lab exec -- iosig-tierbench --trace cloudPhysicsIO.csv --requests 1000 --cache-size 25%%\n'
        tierbench --trace "$trace" --requests 1000 --cache-size 25%
    fi
fi

# The paper's PGM workload built with the Clang plugin, run on the lab (examples/pgm/README.md).
if [[ -x $root/examples/pgm/run-lab-demo.sh ]]; then
    printf '\n$ examples/pgm/run-lab-demo.sh %s\n' "$build"
    "$root/examples/pgm/run-lab-demo.sh" "$build"
fi
