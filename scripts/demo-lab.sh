#!/usr/bin/env bash
# Demo part 2 (root only): bring up the device lab, ask iosig where typical streams should go on it,
# and take the lab down again. Usage: scripts/demo-lab.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
iosig=${1:?build dir}/bin/iosig
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
