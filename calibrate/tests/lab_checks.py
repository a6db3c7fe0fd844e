"""What every case of the calibrator's lab tests shares: where the lab and the fixture's outputs
are, and how a case records a check and ends (lab_calibrate_test.py, lab_fio_comparison.py)."""
import json
import os
import sys

LAB_DIR = os.path.realpath(os.environ.get("IOSIG_LAB_DIR", "/var/tmp/iosig-lab"))
LAB = os.environ.get("IOSIG_LAB", "")
OUT = os.environ.get("IOSIG_CALIBRATE_OUT", "/tmp/iosig-calibrate-lab-test")
MiB = 1024 * 1024

failures = []


def mnt(name):
    return os.path.join(LAB_DIR, "mnt", name)


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures.append(what)


def finish():
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


def within(value, target, tolerance):
    return target > 0 and abs(value - target) / target <= tolerance


def load(name):
    path = os.path.join(OUT, name)
    if not os.path.exists(path):
        print(f"FAIL: {path} missing (did the fixture run fail?)")
        sys.exit(1)
    with open(path) as f:
        return json.load(f)


def by_path(summary):
    return {m["path"]: m for m in summary["mounts"]}


RERUN_MOUNTS = ["hdd", "ramdisk", "ssd", "raid1"]  # every lab device (shared is the ssd's device again)
