#!/usr/bin/env python3
"""The queueing model against the engine on the device lab: runs iosig-tierbench inside the lab's
blkio cgroup (cache on the ramdisk, home on the throttled hdd) for each workload of docs/performance.md
("Real devices", session 13) -- eleven synthetic patterns, then block traces: the start of the shared
cloudPhysics trace and two traces iosig-tiersim generates (a Markov walk, and IRM traffic with the
csv lines whose line number ends in 0, 1 or 2 turned into writes) -- and prints a markdown row per
workload: the tier's measured time, the model's (the later of Eqs. 1-4 and the flusher's replay, both shown), the error, and the engine's and
the model's write-back counts.

    sudo tests/lab/lab up      # or IOSIG_LAB_DIR=... for another lab directory
    sudo python3 tier/tools/lab_model_check.py build-all/bin/iosig-tierbench [--node NODE.yaml]

--node defaults to the lab's own lab.yaml (pass another to compare rates). Exit 2 on bad usage or when
the lab is not up; a failing run of iosig-tierbench is reported with its output and exit 1.
"""
import argparse
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

WORKLOADS = [
    "--working-set 1M --requests 2560 --pattern random --policy ws",
    "--working-set 4M --cache-size 1M --pattern zipf --requests 3000",
    "--working-set 4M --cache-size 1M --pattern zipf --write-ratio 0.3 --requests 3000",
    "--working-set 4M --cache-size 1M --pattern zipf --write-ratio 0.7 --requests 3000",
    "--working-set 4M --cache-size 1M --pattern random --write-ratio 0.3 --requests 3000",
    "--working-set 1M --requests 2560 --pattern random --write-ratio 0.5",
    "--working-set 2M --requests 1500 --pattern random --write-ratio 1",
    "--working-set 8M --requests 3000 --pattern random --line-size 64K",
    "--working-set 16M --requests 10000 --line-size 64K --io-size 4K",
    "--working-set 2M --requests 1500 --pattern sequential --policy lru --prefetch stream",
    "--working-set 16M --requests 4096 --pattern sequential --policy lru --prefetch stream",
    "--working-set 2M --requests 1500 --pattern sequential --policy lru",
    "--working-set 16M --requests 3000 --io-size 64K",
    "--working-set 4M --requests 1000 --io-size 64K",
    # The sequential bypass: reads through the page cache's readahead past the cutoff.
    "--working-set 16M --requests 4096 --pattern sequential --policy lru --sequential-cutoff 1M",
    "--working-set 64M --requests 4096 --pattern sequential --io-size 16K --sequential-cutoff 4M",
    "--working-set 32M --requests 512 --pattern sequential --io-size 64K --line-size 64K "
    "--sequential-cutoff 4M",
    # Bypassed writes: into the page cache, home with the flusher's syncs of the home file.
    "--working-set 64M --requests 4096 --pattern sequential --io-size 16K --write-ratio 1 "
    "--sequential-cutoff 4M",
    "--working-set 32M --requests 512 --pattern sequential --io-size 64K --line-size 64K "
    "--write-ratio 1 --sequential-cutoff 4M",
    "--working-set 8M --requests 2048 --pattern sequential --write-ratio 0.5 --policy lru "
    "--sequential-cutoff 1M",
    "--working-set 16M --requests 4096 --pattern sequential --write-ratio 0.1 --policy lru "
    "--sequential-cutoff 1M",
]


def trace_workloads(tierbench: str, scratch: pathlib.Path) -> list:
    """The trace rows: the shared trace when it is there, and two generated ones."""
    rows = []
    shared = pathlib.Path(os.environ.get("IOSIG_SHARED_DIR",
                                         pathlib.Path(__file__).resolve().parents[3] / "shared"))
    cloud = shared / "data/traces/cloudPhysicsIO.csv"
    if cloud.exists():
        rows += [f"--trace {cloud} --requests 3000",
                 f"--trace {cloud} --requests 3000 --cache-size 25%",
                 f"--trace {cloud} --requests 10000 --cache-size 50%"]
    tiersim = str(pathlib.Path(tierbench).with_name("iosig-tiersim"))
    for kind in ("markov", "irm"):
        generated = scratch / f"{kind}.csv"
        subprocess.run([tiersim, "--synthetic", kind, "--requests", "5000", "--cache-size", "1M",
                        "--policy", "lru", "--write-trace", str(generated)],
                       check=True, capture_output=True)
        if kind == "irm":  # 30 % writes: file lines 10k, 10k+1, 10k+2 (the header is line 1)
            lines = generated.read_text().splitlines()
            for n in range(1, len(lines)):
                if (n + 1) % 10 < 3:
                    fields = lines[n].split(",")
                    fields[2] = "2a"
                    lines[n] = ",".join(fields)
            generated.write_text("\n".join(lines) + "\n")
        rows.append(f"--trace {generated} --requests 5000 --cache-size 25%")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tierbench", help="path of iosig-tierbench")
    parser.add_argument("--node", help="node YAML for the model (default: the lab's lab.yaml)")
    args = parser.parse_args()
    lab = pathlib.Path(os.environ.get("IOSIG_LAB_DIR", "/var/tmp/iosig-lab"))
    if not (lab / "lab.yaml").exists():
        print(f"lab_model_check: no lab at {lab} (run tests/lab/lab up as root)", file=sys.stderr)
        return 2
    lab_script = pathlib.Path(__file__).resolve().parents[2] / "tests/lab/lab"
    node = args.node or str(lab / "lab.yaml")
    print("| workload | tier | model | error | Eqs. 1-4 / replay | write-backs (engine / model) "
          "| fills + prefetch hits |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="iosig-lab-model-"))
    for workload in WORKLOADS + trace_workloads(args.tierbench, scratch):
        command = [str(lab_script), "exec", "--", args.tierbench, "--json", "--mode", "tier",
                   "--cache-dir", str(lab / "mnt/ramdisk"), "--home-dir", str(lab / "mnt/hdd"),
                   "--node", node] + shlex.split(workload)
        run = subprocess.run(command, capture_output=True, text=True,
                             env={**os.environ, "IOSIG_LAB_DIR": str(lab)})
        if run.returncode != 0:
            print(f"lab_model_check: {workload}: exit {run.returncode}\n{run.stdout}{run.stderr}",
                  file=sys.stderr)
            return 1
        result = json.loads(run.stdout)
        measured, model = result["measured"], result["model"]
        stats = measured["stats"]
        tier, predicted = measured["tier_seconds"], model["tier_seconds"]
        error = 100 * (predicted - tier) / tier
        shown = workload.replace(str(scratch) + "/", "")
        print(f"| `{shown}` | {tier:.3f} s | {predicted:.3f} s | {error:+.1f} % "
              f"| {model['queueing_seconds']:.2f} / {model['flusher_seconds']:.2f} s "
              f"| {stats['writebacks']} / {model.get('writebacks', 0)} "
              f"| {stats['fills']} + {stats['prefetch_hits']} |", flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
