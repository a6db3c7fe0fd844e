#!/usr/bin/env python3
"""iosig-calibrate on the device lab (tests/lab), one ctest test per case:

  run        calibrate the lab's 5 mounts with --quick inside the lab's cgroup (fixture setup
             "calibrated_lab"): exit 0 within 60 s, no scratch file left, YAML + JSON + plots kept
  yaml       the core accepts the YAML unchanged (`iosig explain` loads it without error or warning)
  fit        Eq. 3 fitted to each mount's chunk sweep: median relative error <= 15 %
  truth      the throttled hdd is 20 MiB/s and 200 IOPS: measured within 10 % / 15 %; its throttle
             limits reads and writes separately: both at once get >= 1.5x one direction's rate,
             and the YAML says independent_read_write: !measured true; the lab's cgroup limit is
             detected on the hdd's device alone (throttle_slice: !detected, 100 ms on a rotational
             loop device), and its queue's readahead is recorded (read_ahead: !detected)
  explain    choices on the calibrated node: ramdisk for a small temp random stream, raid1 for
             MTTDL beyond one disk, never the hdd for small random persistent writes; the hdd's
             predicted random rate within 15 % of the throttle's at 4 KiB, at least half of it at 64 KiB
  plots      one Eq. 3 PNG and one latency PNG per measured file system
  rerun      a second, shorter run on the hdd, ramdisk, ssd and raid1 (fixture setup "calibrated_again")
  repeat     the second run's values are within 10 % of the first's on the hdd (spread printed
             for every mount measured twice)
  fio        fio agrees with iosig-calibrate's measurement on hdd, ramdisk, ssd and raid1: sequential
             bandwidth within 10 %, 4 KiB IOPS within 15 %. Each shape of the second run (block size,
             queue depth, engine, file size, duration) is measured five times by the calibrator's
             own code (calibrate_measure_probe) and by fio, each pair back to back on one CPU (who
             goes first alternates, and so does the CPU from round to round; fio works on the
             probe's own scratch file, with its buffers on huge pages, like the calibrator's); judged: the median of the pairs' ratios, or of ours against
             the range of fio's runs. Not judged: a shape whose runs (fio's or ours) spread by more
             than twice the tolerance (never on the throttled hdd; at least half of all shapes must
             be judged). A shape off or not judged gets up to two more attempts
  interrupt  Ctrl-C (SIGINT) in the middle of a run removes every scratch file, exit 130

Performance assertions on a shared machine: `fit`, `truth`, `repeat` and `fio` judge the fixture's run
first; when a value is off they measure that mount again (alone, a short run) up to twice and pass if
an attempt is within the tolerance. Every attempt is printed. A systematic error fails every attempt;
a neighbour's compile job during one phase does not fail the suite.

Environment: IOSIG_LAB_DIR, IOSIG_LAB (lab script), IOSIG_CALIBRATE (the executable), IOSIG_BIN
(`iosig`), IOSIG_MEASURE_PROBE (calibrate_measure_probe), IOSIG_CALIBRATE_OUT (directory for the
run's outputs). Exit 77: skipped (not root).
"""
import json
import os
import signal
import subprocess
import sys
import time

from lab_checks import LAB, OUT, MiB, RERUN_MOUNTS, by_path, check, finish, load, mnt, within
from lab_fio_comparison import case_fio  # noqa: F401 (a case: CASES finds it)

CALIBRATE = os.environ.get("IOSIG_CALIBRATE", "")
IOSIG = os.environ.get("IOSIG_BIN", "")
MOUNTS = ["ramdisk", "ssd", "hdd", "raid1", "shared"]


def scratch_files():
    left = []
    for name in MOUNTS:
        for entry in os.listdir(mnt(name)):
            if entry.startswith(".iosig-calibrate-"):
                left.append(os.path.join(mnt(name), entry))
    return left


def calibrate(mounts, extra, json_name, yaml_name, timeout):
    command = [LAB, "exec", "--", CALIBRATE, "--quick", "--json", "-o", os.path.join(OUT, yaml_name)]
    for m in mounts:
        command += ["--mount", mnt(m)]
    command += extra
    print("$ " + " ".join(command), flush=True)
    start = time.monotonic()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    elapsed = time.monotonic() - start
    sys.stdout.write(done.stderr)
    with open(os.path.join(OUT, json_name), "w") as f:
        f.write(done.stdout)
    return done.returncode, elapsed


def case_run():
    os.makedirs(OUT, exist_ok=True)
    overrides = os.path.join(OUT, "lab-overrides.yaml")
    with open(overrides, "w") as f:
        f.write(f"mounts:\n  - path: {mnt('shared')}\n    global: true\n    labels: [shared]\n"
                f"  - path: {mnt('ramdisk')}\n    labels: [ramdisk, scratch]\n")
    rc, elapsed = calibrate(MOUNTS, ["--overrides", overrides, "--plots", os.path.join(OUT, "plots")],
                            "lab-calibrated.json", "lab-calibrated.yaml", 180)
    check(rc == 0, f"iosig-calibrate --quick exits 0 (got {rc})")
    check(elapsed <= 60, f"--quick on the lab's 5 mounts takes {elapsed:.1f} s <= 60 s")
    check(not scratch_files(), f"no scratch file left in the lab mounts ({scratch_files()})")
    summary = load("lab-calibrated.json")
    measured = [m for m in summary["mounts"] if "sweep" in m]
    check(len(summary["mounts"]) == 5 and len(measured) == 5, "all 5 mounts calibrated (ssd and shared measured once)")
    finish()


def case_yaml():
    yaml = os.path.join(OUT, "lab-calibrated.yaml")
    done = subprocess.run([IOSIG, "explain", "--config", yaml, "--sig", "random size-per-IO(4K)", "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(done.returncode == 0, f"iosig explain loads the calibrated YAML (exit {done.returncode}: {done.stderr.strip()})")
    check("warning" not in done.stderr and "error" not in done.stderr, f"no warning or error from the loader: {done.stderr.strip()!r}")
    text = open(yaml).read()
    for tag in ["!measured", "!derived", "!detected", "!default", "!user"]:
        check(tag in text, f"the YAML carries {tag} values")
    finish()


ATTEMPTS = 2  # extra measurements of one mount when the fixture's value is off


def remeasure(name, attempt):
    """A short run on one lab mount inside the lab's cgroup; its JSON entry, or None."""
    json_name = f"remeasure-{name}-{attempt}.json"
    rc, _ = calibrate([name], ["--time-budget", "24"], json_name, f"remeasure-{name}-{attempt}.yaml", 90)
    if rc != 0:
        return None
    return by_path(load(json_name)).get(mnt(name))


def judged(name, first, passes, describe):
    """True if `first` (a mount's JSON entry) or a re-measurement of it passes; prints every attempt."""
    entry = first
    for attempt in range(ATTEMPTS + 1):
        if entry is not None:
            ok = passes(entry)
            print(f"  attempt {attempt + 1}: {describe(entry)}{'' if ok else '  (off)'}", flush=True)
            if ok:
                return True
        if attempt < ATTEMPTS:
            entry = remeasure(name, attempt + 1)
    return False


def case_fit():
    for m in load("lab-calibrated.json")["mounts"]:
        name = os.path.basename(m["path"])
        if m["measured_in"] != m["path"]:
            check("eq3" in m, f"{m['path']} shares the fit of {m['measured_in']}")
            continue

        def describe(entry):
            e = entry["eq3"]
            return (f"{len(entry['sweep'])} chunk sizes, l = {e['latency_s'] * 1e6:.1f} us, wbw = {e['write_bw'] / MiB:.1f} "
                    f"MiB/s, cs = {e['chunk']} B, median error {e['median_relative_error']:.1%}, max {e['max_relative_error']:.0%}")

        ok = judged(name, m, lambda entry: "eq3" in entry and entry["eq3"]["median_relative_error"] <= 0.15, describe)
        check(ok, f"{m['path']}: Eq. 3 fitted vs measured, median relative error <= 15 %")
    finish()


def case_truth():
    hdd = by_path(load("lab-calibrated.json"))[mnt("hdd")]

    def passes(entry):
        return (within(entry["seq_write"]["bytes_per_s"], 20 * MiB, 0.10) and within(entry["seq_read"]["bytes_per_s"], 20 * MiB, 0.10)
                and within(entry["random_read"]["iops"], 200, 0.15) and within(entry["random_write"]["iops"], 200, 0.15))

    def describe(entry):
        return (f"seq write {entry['seq_write']['bytes_per_s'] / MiB:.2f} MiB/s, seq read {entry['seq_read']['bytes_per_s'] / MiB:.2f} "
                f"MiB/s, QD32 read {entry['random_read']['iops']:.0f} IOPS, write {entry['random_write']['iops']:.0f} IOPS")

    check(judged("hdd", hdd, passes, describe),
          "the throttled hdd measures 20 MiB/s within 10 % (sequential) and 200 IOPS within 15 % (4 KiB, QD32)")

    def separate(entry):
        return "mixed" in entry and entry["mixed"]["utilisation"] >= 1.5

    def describe_mixed(entry):
        m = entry.get("mixed")
        if m is None:
            return "no mixed measurement"
        return (f"reads and writes at once: {m['read_iops']:.0f} + {m['write_iops']:.0f} IOPS, "
                f"{m['utilisation']:.2f}x one direction's rate")

    check(judged("hdd", hdd, separate, describe_mixed),
          "the hdd's throttle limits reads and writes separately: at once they get >= 1.5x one direction's rate")
    with open(os.path.join(OUT, "lab-calibrated.yaml")) as f:
        yaml_text = f.read()
    check("independent_read_write: !measured true" in yaml_text,
          "the calibrated YAML records the hdd's separate read and write limits (independent_read_write: !measured true)")
    check_throttle(load("lab-calibrated.json"), yaml_text)
    finish()


def check_throttle(summary, yaml_text):
    """The lab's blkio cgroup limits the hdd's loop device and nothing else: calibrate, run inside
    it, detects the limit on that device alone, with the kernel's slice for its queue, and records
    the queue's readahead."""
    device = by_path(summary)[mnt("hdd")]["device"]
    throttled = {name: d["throttle"]["slice_s"] for name, d in summary["devices"].items() if "throttle" in d}
    check(list(throttled) == [device], f"only the hdd's device {device} has a blk-throttle limit (got {throttled})")
    slice_s = throttled.get(device, 0)
    try:
        with open(f"/sys/block/{device}/queue/rotational") as f:
            rotational = f.read().strip() == "1"
    except OSError:
        rotational = None
    if rotational:
        check(slice_s == 0.1, f"{device} is rotational: the kernel's 100 ms slice (got {slice_s * 1000:g} ms)")
    else:  # 20 ms or 100 ms, by kernel release (docs/calibrate.md, "Throttled devices")
        check(slice_s in (0.02, 0.1), f"{device}: a slice of 20 or 100 ms (got {slice_s * 1000:g} ms)")
    check(f"throttle_slice: !detected {slice_s * 1000:g}ms" in yaml_text,
          f"the calibrated YAML records the hdd's slice (throttle_slice: !detected {slice_s * 1000:g}ms)")
    # The queue's readahead, for the tier's model of reads through the page cache.
    try:
        with open(f"/sys/block/{device}/queue/read_ahead_kb") as f:
            read_ahead_kb = int(f.read().strip())
    except (OSError, ValueError):
        read_ahead_kb = None
    if read_ahead_kb is not None:
        check(f"read_ahead: !detected {read_ahead_kb}K" in yaml_text,
              f"the calibrated YAML records the hdd's readahead (read_ahead: !detected {read_ahead_kb}K)")


def explain(sig):
    done = subprocess.run([IOSIG, "explain", "--config", os.path.join(OUT, "lab-calibrated.yaml"), "--sig", sig, "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    result = json.loads(done.stdout) if done.stdout.strip() else {}
    choice = (result.get("choice") or {}).get("mount", "")
    print(f"  {sig!r} -> {choice or '(none)'} (exit {done.returncode})")
    return choice, result


def case_explain():
    choice, _ = explain("random temp size-per-IO(4K) totalsize(64M)")
    check(choice == mnt("ramdisk"), "a small temp random stream goes to the ramdisk")
    choice, _ = explain("random persist MTTDL(20y) size-per-IO(64K) totalsize(256M)")
    check(choice == mnt("raid1"), "MTTDL(20y) goes to the raid1, the only redundant device")
    choice, result = explain("random persist size-per-IO(4K) totalsize(64M)")
    check(choice not in ("", mnt("hdd")), "small random persistent writes never go to the throttled hdd")
    rates = {c["mount"]: c["throughput_bytes_per_s"] for c in result.get("candidates", [])}
    check(rates.get(mnt("hdd"), 1e18) < min(v for k, v in rates.items() if k != mnt("hdd")),
          "the hdd is predicted slowest for 4 KiB random IO")
    # The throttle passes 200 random IOs a second of 4 KiB and of 64 KiB alike (bps allows 320 of
    # the latter). Until session 37 the calibrated random bandwidth was 4 KiB x QD32 IOPS, which
    # Eq. 3 charged on top of the latency and the IOPS cap: 510 KiB/s and 0.76 MiB/s.
    check(within(rates.get(mnt("hdd"), 0), 200 * 4096, 0.15),
          f"the hdd's 4 KiB random rate is predicted within 15 % of the throttle's 800 KiB/s "
          f"(got {rates.get(mnt('hdd'), 0) / 1024:.0f} KiB/s)")
    _, result = explain("random persist size-per-IO(64K) totalsize(256M)")
    rates = {c["mount"]: c["throughput_bytes_per_s"] for c in result.get("candidates", [])}
    check(rates.get(mnt("hdd"), 0) >= 0.5 * 200 * 65536,
          f"the hdd's 64 KiB random rate is predicted at least half the throttle's 12.5 MiB/s "
          f"(got {rates.get(mnt('hdd'), 0) / MiB:.2f} MiB/s)")
    choice, _ = explain("global random size-per-IO(64K) totalsize(256M)")
    check(choice == mnt("shared"), "a global stream goes to shared (global by --overrides)")
    finish()


def case_plots():
    summary = load("lab-calibrated.json")
    plots = summary["plots"]
    measured = [m for m in summary["mounts"] if "sweep" in m and m["measured_in"] == m["path"]]
    check(len(plots) == 2 * len(measured), f"{len(plots)} plots for {len(measured)} measured file systems")
    for p in plots:
        with open(p, "rb") as f:
            head = f.read(8)
        check(head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(p) > 5000, f"{p} is a PNG image")
    finish()


def case_rerun():
    rc, _ = calibrate(RERUN_MOUNTS, ["--time-budget", "40"], "lab-rerun.json", "lab-rerun.yaml", 150)
    check(rc == 0, f"second run exits 0 (got {rc})")
    finish()


VALUES = [("seq_write", "bytes_per_s"), ("seq_read", "bytes_per_s"), ("random_read", "iops"), ("random_write", "iops")]


def spread(a, b):
    return {phase: abs(b[phase][key] - a[phase][key]) / a[phase][key] for phase, key in VALUES}


def case_repeat():
    first, second = by_path(load("lab-calibrated.json")), by_path(load("lab-rerun.json"))
    for path, again in second.items():
        if path in first and "seq_write" in again:
            print(f"  {path}: " + ", ".join(f"{k} {v:.1%}" for k, v in spread(first[path], again).items()))
    # Asserted on the hdd, whose rate the lab fixes; the others move with the machine's load.
    runs = [first[mnt("hdd")], second[mnt("hdd")]]
    ok = max(spread(runs[0], runs[1]).values()) <= 0.10
    for attempt in range(ATTEMPTS):
        if ok:
            break
        again = remeasure("hdd", 10 + attempt)
        if again is None:
            continue
        values = spread(runs[-1], again)
        print(f"  hdd again: " + ", ".join(f"{k} {v:.1%}" for k, v in values.items()))
        ok = max(values.values()) <= 0.10
        runs.append(again)
    check(ok, "hdd: two consecutive runs agree within 10 % (sequential bandwidth, QD32 IOPS)")
    finish()


def case_interrupt():
    command = [CALIBRATE, "--quick", "--mount", mnt("ramdisk"), "--mount", mnt("ssd"), "--time-budget", "30", "-o",
               os.path.join(OUT, "interrupted.yaml")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    seen = False
    while time.monotonic() < deadline and not seen:  # wait until it is measuring (a scratch file exists)
        seen = bool(scratch_files())
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    check(seen, "a scratch file existed while measuring")
    check(process.returncode == 130, f"exit status 130 after SIGINT (got {process.returncode}): {err.strip()[-200:]}")
    check(not scratch_files(), f"every scratch file removed ({scratch_files()})")
    check(not os.path.exists(os.path.join(OUT, "interrupted.yaml")), "no half-written output")
    finish()


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        print(f"usage: {sys.argv[0]} {'|'.join(CASES)}", file=sys.stderr)
        sys.exit(2)
    if os.geteuid() != 0:
        print("SKIPPED: the device lab needs root")
        sys.exit(77)
    for name, value in [("IOSIG_LAB", LAB), ("IOSIG_CALIBRATE", CALIBRATE), ("IOSIG_BIN", IOSIG)]:
        if not value:
            print(f"FAIL: {name} is not set")
            sys.exit(1)
    CASES[sys.argv[1]]()
