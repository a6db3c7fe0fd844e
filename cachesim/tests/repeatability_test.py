#!/usr/bin/env python3
"""cachesim/tools/repeatability.py on hand-made harness output directories."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "tools", "repeatability.py")


def write_batch(root, name, scenarios):
    """scenarios: {scenario: [(measured median, model prediction), ...]} as iosig-cawl-validate
    writes them (writes.csv with its other columns too)."""
    batch = os.path.join(root, name)
    for scenario, writes in scenarios.items():
        os.makedirs(os.path.join(batch, scenario))
        with open(os.path.join(batch, scenario, "writes.csv"), "w") as f:
            f.write("index,offset,size,delay_s,measured_median_s,run1_s,model_s,model_typical_s\n")
            for i, (measured, model) in enumerate(writes):
                f.write(f"{i},{i * 4096},4096,0,{measured},{measured},{model},{model}\n")
    with open(os.path.join(batch, "summary.md"), "w") as f:
        f.write("# not a scenario\n")
    return batch


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class Repeatability(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_batches_that_differ_by_half_give_the_leave_one_out_error(self):
        # Batch 2 measured every write twice as slow as batch 1. Predicting batch 1 from batch 2 is
        # 100 % off, batch 2 from batch 1 50 % off: 75 % on average. The model, equal to batch 1,
        # is 0 % off there and 50 % off against batch 2.
        a = write_batch(self.root, "a", {"direct-4K": [(1e-3, 1e-3), (2e-3, 2e-3)]})
        b = write_batch(self.root, "b", {"direct-4K": [(2e-3, 1e-3), (4e-3, 2e-3)]})
        out = run(a, b)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| direct-4K | 2 | 75.0 % | 0.0 % | 50.0 % |", out.stdout)
        self.assertIn("1 of 1 scenarios repeat worse than the 8 % target: direct-4K", out.stdout)

    def test_identical_batches_repeat_exactly(self):
        writes = {"sync-4K": [(3e-3, 2.9e-3), (3e-3, 3.3e-3)]}
        a = write_batch(self.root, "a", writes)
        b = write_batch(self.root, "b", writes)
        c = write_batch(self.root, "c", writes)
        out = run("--target", "5", a, b, c)
        self.assertEqual(out.returncode, 0, out.stderr)
        # Model: |2.9-3|/3 and |3.3-3|/3, 6.7 % on average, in every batch.
        self.assertIn("| sync-4K | 2 | 0.0 % | 6.7 % | 6.7 % | 6.7 % |", out.stdout)
        self.assertIn("0 of 1 scenarios repeat worse than the 5 % target: none", out.stdout)

    def test_the_median_of_the_other_batches_is_the_prediction(self):
        # Leaving batch 1 out, batches 2 and 3 (1.0 and 1.2 ms) predict 1.1 ms: 10 % off 1.0 ms.
        # Leaving batch 2 out: 1.1 ms against 1.0 ms, 10 %; batch 3: 1.0 ms against 1.2 ms, 16.7 %.
        a = write_batch(self.root, "a", {"s": [(1.0e-3, 1e-3)]})
        b = write_batch(self.root, "b", {"s": [(1.0e-3, 1e-3)]})
        c = write_batch(self.root, "c", {"s": [(1.2e-3, 1e-3)]})
        out = run(a, b, c)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| s | 1 | 12.2 % | 0.0 % | 0.0 % | 16.7 % |", out.stdout)

    def test_batches_of_different_workloads_are_refused(self):
        a = write_batch(self.root, "a", {"rewrite-A": [(1e-3, 1e-3)] * 3})
        b = write_batch(self.root, "b", {"rewrite-A": [(1e-3, 1e-3)] * 4})
        out = run(a, b)
        self.assertEqual(out.returncode, 2)
        self.assertIn("rewrite-A: the batches have [3, 4] writes", out.stderr)

    def test_directories_without_common_scenarios_are_refused(self):
        a = write_batch(self.root, "a", {"x": [(1e-3, 1e-3)]})
        b = write_batch(self.root, "b", {"y": [(1e-3, 1e-3)]})
        self.assertEqual(run(a, b).returncode, 2)
        self.assertEqual(run(a).returncode, 2)
        self.assertEqual(run(a, os.path.join(self.root, "missing")).returncode, 2)

    def test_a_foreign_csv_names_the_file(self):
        a = write_batch(self.root, "a", {"x": [(1e-3, 1e-3)]})
        bad = os.path.join(self.root, "bad", "x")
        os.makedirs(bad)
        with open(os.path.join(bad, "writes.csv"), "w") as f:
            f.write("offset,size\n0,4096\n")
        out = run(a, os.path.dirname(bad))
        self.assertEqual(out.returncode, 2)
        self.assertIn(os.path.join(bad, "writes.csv"), out.stderr)


if __name__ == "__main__":
    unittest.main()
