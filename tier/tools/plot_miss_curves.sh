#!/usr/bin/env bash
# Miss-ratio curves of every policy on the shared cloudPhysics trace (object mode, libCacheSim's
# semantics), on the paper's synthetic traffic models, and of the learner on 8 copies of the shared
# trace with fresh ids (LFU pollution, with and without the shadow switch), as PNGs for
# docs/tier.md.
#   tier/tools/plot_miss_curves.sh BUILD_DIR OUTPUT_DIR
set -euo pipefail
build=${1:?usage: plot_miss_curves.sh BUILD_DIR OUTPUT_DIR}
out=${2:?usage: plot_miss_curves.sh BUILD_DIR OUTPUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
shared=${IOSIG_SHARED_DIR:-$here/../../../shared}
sim=$build/bin/iosig-tiersim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# policy columns of a gnuplot data file: size_mib then one miss ratio (%) per policy
table() { # JSON on stdin -> data file; $1 = policies
    python3 -c '
import json, sys
policies = sys.argv[1].split(",")
rows = {}
for r in json.load(sys.stdin)["results"]:
    rows.setdefault(r["cache_size"], {})[r["policy"]] = 100 * r["miss_ratio"]
print("size_mib " + " ".join(policies))  # gnuplot reads it with columnhead()
for size in sorted(rows):
    print(size / 2**20, " ".join(str(rows[size][p]) for p in policies))
' "$1"
}

policies=lru,lfu,random,arc,lecar,ws,belady
sizes=$(seq -s, 64 64 1024 | sed 's/\([0-9]*\)/\1M/g')
"$sim" --trace "$shared/data/traces/cloudPhysicsIO.oracleGeneral.bin" --policy $policies --cache-size "$sizes" --json |
    table $policies > "$work/cloudphysics.dat"
for kind in poisson irm switching; do
    "$sim" --synthetic $kind --line-size 8K --policy lru,lfu,ws --cache-size 512K,1M,2M,4M,8M,16M,32M --json |
        table lru,lfu,ws > "$work/$kind.dat"
done

# 8 copies of the shared trace, ids of copy k offset by k x 2^40 (docs/tier-learner-evidence.md, "LFU pollution")
python3 - "$shared/data/traces/cloudPhysicsIO.oracleGeneral.bin" "$work/cat8.oracleGeneral.bin" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
records = [struct.unpack_from("<IQIq", data, i * 24) for i in range(len(data) // 24)]
with open(sys.argv[2], "wb") as out:
    for k in range(8):
        out.write(b"".join(struct.pack("<IQIq", t, i + (k << 40), s, -1) for t, i, s, _ in records))
PY
pollution_sizes=$(seq -s, 128 128 2048 | sed 's/\([0-9]*\)/\1M/g')
"$sim" --trace "$work/cat8.oracleGeneral.bin" --policy lru,lfu,ws --cache-size "$pollution_sizes" --json |
    table lru,lfu,ws > "$work/cat8.dat"
"$sim" --trace "$work/cat8.oracleGeneral.bin" --policy ws --shadow-switch-refills 0 \
    --cache-size "$pollution_sizes" --json | table ws | cut -d' ' -f2 |
    sed '1s/.*/ws_without_shadow_switch/' > "$work/cat8-no-shadow.dat"
paste -d' ' "$work/cat8.dat" "$work/cat8-no-shadow.dat" > "$work/pollution.dat"

gnuplot <<GNUPLOT
set terminal pngcairo size 900,560 font "sans,11"
set grid
set key outside right
set ylabel "miss ratio (%)"
set output "$out/cloudphysics-miss-ratio.png"
set title "cloudPhysics trace (113,872 requests), object mode"
set xlabel "cache size (MiB)"
plot for [i=2:8] "$work/cloudphysics.dat" using 1:i with linespoints title columnhead(i)
set logscale x 2
set xlabel "cache size (MiB, 8 KiB lines)"
set output "$out/synthetic-learner.png"
set multiplot layout 1,3 title "The learner (ws) against its experts on the paper's traffic models"
set key inside top right
set title "Poisson temporal locality"
plot for [i=2:4] "$work/poisson.dat" using 1:i with linespoints title columnhead(i)
set title "IRM, Zipf popularity"
plot for [i=2:4] "$work/irm.dat" using 1:i with linespoints title columnhead(i)
set title "switching between the two"
plot for [i=2:4] "$work/switching.dat" using 1:i with linespoints title columnhead(i)
unset multiplot
unset logscale x
set key outside right noenhanced
set xlabel "cache size (MiB)"
set output "$out/lfu-pollution.png"
set title "8 copies of the cloudPhysics trace with fresh ids (911 k requests): LFU pollution"
plot for [i=2:5] "$work/pollution.dat" using 1:i with linespoints title columnhead(i)
GNUPLOT
echo "wrote $out/cloudphysics-miss-ratio.png $out/synthetic-learner.png $out/lfu-pollution.png"
