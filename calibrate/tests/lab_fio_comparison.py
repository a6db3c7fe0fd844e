"""The `fio` case of lab_calibrate_test.py: iosig-calibrate's own measurement code against fio on
every lab device, shape by shape, in pairs run back to back (fio_comparison says how they are
judged)."""
import json
import os
import subprocess

from lab_checks import LAB, MiB, RERUN_MOUNTS, by_path, check, finish, load, mnt

PROBE = os.environ.get("IOSIG_MEASURE_PROBE", "")
FIO_ROUNDS = 5
# The CPUs the rounds take in turn (pair_cpu). On this VM, where a QD32 stream runs decides its
# rate on the host's virtual disk: fio's 4 KiB random writes on the ssd ran at 201-217 k IOPS on
# CPU 0 and 110-123 k on CPU 1, which takes the disk's interrupts (virtio1-req.0); its 1 MiB QD4
# reads there 1.38x and the raid1's 4 KiB random reads 1.39x apart. Unpinned, five new fio
# processes landed where the scheduler put them, so fio's spread, and whether a shape was judged,
# was luck: the CI run at 386a375 saw fio at 181-203 k in all five runs against the calibrator's
# 146-157 k and failed. Pinned in turn, fio's spread shows what placement alone does.
PAIR_CPUS = sorted(os.sched_getaffinity(0))
# Attempts of FIO_ROUNDS pairs a shape gets until it is ok. Two were not always enough: in the
# fresh-clone check of 883a110 the ssd's 1 MiB QD4 writes were not judged in the first (fio's runs
# spread 27 %, median ratio 1.009), and in the second fio ran at 5570-6107 MiB/s in all five runs
# against the calibrator's 6700-7332 (1.142, over the 10 %), while every other shape agreed.
ATTEMPTS = 3
# A shape judged off once and never ok gets attempts beyond ATTEMPTS, up to this many in all, until
# a second judged attempt confirms or clears it: a systematic error is off in every judged attempt.
# In session 37's fresh-clone check the raid1's 1 MiB QD4 writes were not judged twice (our runs
# spread 33 % and 20 %) and judged once, off (ours 527-629 MiB/s against fio's 514-541, median
# ratio 1.156), with ratios of 1.055 and 1.034 in the attempts not judged.
CONFIRMING_ATTEMPTS = 5
# The tolerance of IOPS shapes on a tmpfs mount (the lab's ramdisk). A tmpfs IO is a memcpy of a
# microsecond or two, so the rate is the submitting loop's CPU time per IO, and the two tools'
# loops differ by a few tenths of a microsecond: with both tools' runs within 7 % of each other,
# the median ratio ours / fio was 0.90, 1.15 and 1.17 in session 5-6 runs and 1.19 in the
# fresh-clone check of fc29584 (session 24: ours 583-630 k, fio 503-512 k, five pairs), while by
# hand minutes later both ran at 450-480 k. The other shapes keep 10 % and 15 %.
RAMDISK_IOPS_TOLERANCE = 0.25


def pair_cpu(round_number):
    """The CPU both tools of a round's pairs run on."""
    return PAIR_CPUS[round_number % len(PAIR_CPUS)]


class Probe:
    """calibrate_measure_probe on one mount, inside the lab's cgroup: iosig-calibrate's own
    measurement code (MountIo), one phase per request, on one scratch file kept for the session."""

    def __init__(self, mount, file_size):
        self.process = subprocess.Popen([LAB, "exec", "--", PROBE, mnt(mount), str(file_size)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.contiguity = []  # the IO buffer's physically contiguous share after each phase
        self.file = None  # the scratch file, laid out by the first seq_write; fio works on it too

    def measure(self, phase, block, depth, seconds, cpu):
        os.sched_setaffinity(self.process.pid, {cpu})  # `lab exec` execs the probe: same pid
        self.process.stdin.write(f"{phase} {block} {depth} {seconds}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"calibrate_measure_probe stopped during {phase} (exit {self.process.wait()})")
        result = json.loads(line)
        self.contiguity.append(result.get("buffer_contiguous", -1))
        self.file = result["file"]
        return result["rate"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


FIO_MEMORY = []  # fio's --iomem option while huge pages are reserved for it (huge_pages_for_fio)


def fio(path, args, cpu):
    """One fio job on `path` (laid out by the first job, reused by the next ones) on `cpu`; its
    result, or None."""
    command = ([LAB, "exec", "--", "taskset", "--cpu-list", str(cpu), "fio", "--name=cmp", f"--filename={path}", "--direct=1", "--output-format=json"]
               + FIO_MEMORY + args)
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if done.returncode != 0:
        print(done.stderr)
        return None
    return json.loads(done.stdout)["jobs"][0]


def fio_shapes(m):
    """(phase, fio rw, engine, queue depth, block, seconds, fio key, unit, tolerance) of a mount's
    calibrated JSON entry: the shapes iosig-calibrate measured, as it measured them."""
    def engine(phase):
        return "io_uring" if m[phase].get("engine") == "io_uring" else "psync"
    shapes = []
    for phase, rw, key, unit, tolerance in [("seq_write", "write", "bw_bytes", "MiB/s", 0.10),
                                            ("seq_read", "read", "bw_bytes", "MiB/s", 0.10),
                                            ("random_read", "randread", "iops", "IOPS", 0.15),
                                            ("random_write", "randwrite", "iops", "IOPS", 0.15)]:
        ours = m[phase]
        if m["fs_type"] == "tmpfs" and unit == "IOPS":
            tolerance = RAMDISK_IOPS_TOLERANCE
        shapes.append((phase, rw, engine(phase), ours.get("queue_depth", 1), ours["block"],
                       max(ours["seconds"], 1.0), key, unit, tolerance))
    return shapes


def fio_comparison(mount, m):
    """[(phase, verdict, message)]: iosig-calibrate's measurement of each shape against fio's, each
    pair run back to back on one CPU, FIO_ROUNDS rounds taking the CPUs in turn (PAIR_CPUS). Agreement: the median of the pairs' ratios is within
    the tolerance of 1, or the median of ours is within the tolerance of the range fio's runs span
    (on the btrfs raid1 each process reads from the mirror its pid's parity picks, the kernel's
    default read policy, and fio is a new process every run).

    Pairs seconds apart cancel what moves on this VM between a calibration and a fio run made a
    minute later (the ssd and raid1 sit on the host's virtual disk, whose speed changes within
    seconds). A shape is not judged when either tool's runs spread by more than twice the
    tolerance: the rate then moves faster than the claim can resolve (on the ramdisk a QD32 run
    measured 404 k, 553 k, 608 k IOPS in three rounds on an idle machine), or depends on the CPU
    by that much (the ssd's 4 KiB random writes, PAIR_CPUS): the calibrator's own tight loop ran at
    ~158 k IOPS there on either CPU, between fio's two rates; on CPU 0 a test loop waiting 0.5-1 us
    before each submission, about what fio spends per IO, went from ~155 k to ~187 k, so the
    host's disk, not the count, makes the difference. The throttled hdd is
    always judged, and at least half of all shapes must be (case_fio). A shape that is off or not
    judged gets another attempt of FIO_ROUNDS new pairs, up to ATTEMPTS in all (the policy of the
    other performance cases: a systematic error fails every attempt, a moment of noise does not); ok
    in any attempt is ok, off in one and ok in none is off. A shape off in exactly one judged attempt
    after ATTEMPTS gets more, up to CONFIRMING_ATTEMPTS, until a second judged one confirms or
    clears it."""
    size = m["scratch_file_size"]
    fallocate = "none" if m["fs_type"] == "btrfs" else "native"
    shapes = fio_shapes(m)
    probe = Probe(mount, m["scratch_file_size"])
    verdicts = {}
    try:
        pending = shapes
        offs = {shape[0]: 0 for shape in shapes}  # judged attempts that were off
        for attempt in range(1, CONFIRMING_ATTEMPTS + 1):
            ours, theirs = measure_pairs(probe, pending, size, fallocate)
            for shape in pending:
                verdict, described = judge_pairs(mount, shape, ours[shape[0]], theirs[shape[0]])
                offs[shape[0]] += verdict == "off"
                previous = verdicts.get(shape[0])
                if previous:
                    print(f"  {mount} {shape[0]}, attempt {attempt - 1} {previous[0]}: {previous[1]}", flush=True)
                    if previous[0] == "off" and verdict == "not judged":
                        verdict = "off"
                verdicts[shape[0]] = (verdict, described if attempt == 1 else f"{described} (attempt {attempt})")
            pending = [shape for shape in shapes if verdicts[shape[0]][0] != "ok"
                       and (attempt < ATTEMPTS or offs[shape[0]] == 1)]
            if not pending:
                break
    finally:
        probe.close()  # removes the scratch file
    readable = [share for share in probe.contiguity if share >= 0]  # -1: page frames not readable
    buffer = f"; our IO buffer {min(readable):.0%} physically contiguous" if readable else ""
    return [(shape[0], verdicts[shape[0]][0], verdicts[shape[0]][1] + buffer) for shape in shapes]


def measure_pairs(probe, shapes, size, fallocate):
    """FIO_ROUNDS rounds of (ours, fio) per shape, back to back: ({phase: [rate]}, {phase: [rate or None]}).

    fio reads and writes the probe's own scratch file. Two files of the same size on the same
    mount are not the same device here: on the ramdisk, fio read one tmpfs file at 9.9-10.3 GB/s
    and another, written the same way a second later, at 8.5-8.8 GB/s, run after run (the guest
    pages each file landed on are backed differently by the host), and a file of fio's own against
    the calibrator's showed the calibrator 0.73-0.89 of fio. On the same file the two agreed
    (median ratio 1.03 over six pairs)."""
    ours = {s[0]: [] for s in shapes}
    theirs = {s[0]: [] for s in shapes}
    for round_number in range(FIO_ROUNDS):
        cpu = pair_cpu(round_number)
        for phase, rw, engine, depth, block, seconds, key, _, _ in shapes:
            def run_fio():
                job = fio(probe.file, [f"--rw={rw}", f"--bs={block}", f"--ioengine={engine}", f"--iodepth={depth}",
                                     f"--size={size}", f"--fallocate={fallocate}",
                                     f"--runtime={int(seconds * 1000)}ms", "--time_based"], cpu)
                theirs[phase].append(job["write" if "write" in rw else "read"][key] if job else None)
            # Who goes first alternates: a write leaves work behind (btrfs finishes its ordered
            # extents and metadata in the background), and the run after it pays for it.
            if round_number % 2:
                run_fio()
            ours[phase].append(probe.measure(phase, block, depth, seconds, cpu))
            if not round_number % 2:
                run_fio()
    return ours, theirs


def judge_pairs(mount, shape, ours, theirs):
    """(verdict, description) of one shape's pairs: "ok", "off" or "not judged"."""
    phase, _, engine, depth, block, _, _, unit, tolerance = shape
    scale = MiB if unit == "MiB/s" else 1
    pairs = [(a, b) for a, b in zip(ours, theirs) if b]
    described = (f"{mount} {phase} ({engine}, QD{depth}, {block} B): ours "
                 + ", ".join(f"{a / scale:.0f}" for a in ours) + " vs fio "
                 + ", ".join(f"{b / scale:.0f}" if b else "failed" for b in theirs) + f" {unit} (CPUs "
                 + ",".join(str(pair_cpu(r)) for r in range(len(ours))) + ")")
    if len(pairs) < FIO_ROUNDS:
        return "off", f"{described}: fio failed"
    ratios = sorted(a / b for a, b in pairs)
    median = ratios[len(ratios) // 2]
    fio_runs = [b for _, b in pairs]
    fio_spread = max(fio_runs) / min(fio_runs) - 1
    our_spread = max(ours) / min(ours) - 1
    described += (f"; median ratio {median:.3f} (within {tolerance:.0%}), spread of fio's runs {fio_spread:.0%}, "
                  f"of ours {our_spread:.0%}")
    if mount != "hdd" and max(fio_spread, our_spread) > 2 * tolerance:
        return "not judged", described
    ours_median = sorted(ours)[len(ours) // 2]
    agrees = (abs(median - 1) <= tolerance
              or min(fio_runs) * (1 - tolerance) <= ours_median <= max(fio_runs) * (1 + tolerance))
    return ("ok" if agrees else "off"), described


class huge_pages_for_fio:
    """Reserves 2 MiB huge pages for fio's IO buffers (`--iomem=shmhuge`) and restores
    vm.nr_hugepages afterwards. The calibrator's device buffer is on transparent huge pages
    (calibrate/src/io_buffer.hpp): a 1 MiB transfer into scattered 4 KiB pages is split into two
    requests by the loop and virtio devices (at most 128 / 254 segments), and whether fio's fresh
    malloc'd pages happen to be contiguous changed its 1 MiB QD4 reads on the raid1 between ~1.0
    and ~2.1 GB/s from run to run. With huge pages on both sides the comparison measures the
    measurement code, not the page allocator."""
    PATH = "/proc/sys/vm/nr_hugepages"
    PAGES = 32  # fio's largest buffer here: 4 x 1 MiB (+ alignment), one job at a time

    def __enter__(self):
        with open(self.PATH) as f:
            self.saved = f.read().strip()
        with open(self.PATH, "w") as f:
            f.write(str(int(self.saved) + self.PAGES))
        with open(self.PATH) as f:
            granted = int(f.read()) - int(self.saved)
        if granted >= 4:
            FIO_MEMORY[:] = ["--iomem=shmhuge"]
        else:
            print(f"  note: only {granted} huge pages could be reserved: fio uses malloc'd buffers", flush=True)
        return self

    def __exit__(self, *exc):
        FIO_MEMORY.clear()
        with open(self.PATH, "w") as f:
            f.write(self.saved)


def case_fio():
    with huge_pages_for_fio():
        compare_with_fio()


def compare_with_fio():
    second = by_path(load("lab-rerun.json"))
    judged_count = shape_count = 0
    for mount in RERUN_MOUNTS:
        entry = second.get(mnt(mount))
        if entry is None:
            check(False, f"{mount}: the second run measured it")
            continue
        for _, verdict, message in fio_comparison(mount, entry):
            shape_count += 1
            if verdict == "not judged":
                print(f"  not judged: {message}", flush=True)
            else:
                judged_count += 1
                check(verdict == "ok", message)
    check(judged_count * 2 >= shape_count, f"{judged_count} of {shape_count} comparisons judged (at least half)")
    finish()
