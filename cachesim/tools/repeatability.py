#!/usr/bin/env python3
"""How well the real runs repeat themselves, next to the model's error.

Give it two or more output directories of `iosig-cawl-validate` made with the same node YAML and
scenarios, one after the other (each is a batch: one warm-up run, then the measured runs). For each
scenario it prints:

- repeatability: the mean relative error (the harness's MRE) of the per-write medians of each batch
  when the medians of the other batches (their per-write median) are used as the prediction, averaged
  over the batches (leave one out). This is what a predictor that knew the other batches exactly
  would score: the floor under any model's MRE on this machine.
- the model's MRE against each batch (the same model: same YAML, same workload).

Usage: repeatability.py [--target PERCENT] DIR1 DIR2 [DIR3 ...]
Exit status 2 when a directory cannot be read or the directories do not hold the same scenarios
and writes.
"""
import argparse
import csv
import os
import statistics
import sys


def load_batch(directory):
    """{scenario: (measured medians, model predictions)} from one harness output directory."""
    batch = {}
    for scenario in sorted(os.listdir(directory)):
        path = os.path.join(directory, scenario, "writes.csv")
        if not os.path.isfile(path):
            continue
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        try:
            measured = [float(r["measured_median_s"]) for r in rows]
            model = [float(r["model_typical_s"]) for r in rows]
        except (KeyError, ValueError) as e:
            raise ValueError(f"{path}: not a writes.csv of iosig-cawl-validate ({e})") from e
        batch[scenario] = (measured, model)
    return batch


def mre(predicted, measured):
    return statistics.mean(abs(p - m) / m for p, m in zip(predicted, measured) if m > 0)


def leave_one_out(batches):
    """Mean over the batches of the MRE of the other batches' per-write median against it."""
    errors = []
    for i, own in enumerate(batches):
        others = [b for j, b in enumerate(batches) if j != i]
        prediction = [statistics.median(values) for values in zip(*others)]
        errors.append(mre(prediction, own))
    return statistics.mean(errors)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=float, default=8.0, help="MRE target in percent")
    parser.add_argument("dirs", nargs="+", help="iosig-cawl-validate output directories")
    args = parser.parse_args(argv)
    if len(args.dirs) < 2:
        print("repeatability.py: give at least two output directories", file=sys.stderr)
        return 2
    try:
        batches = [load_batch(d) for d in args.dirs]
    except (OSError, ValueError) as e:
        print(f"repeatability.py: {e}", file=sys.stderr)
        return 2
    scenarios = sorted(set.intersection(*(set(b) for b in batches)))
    if not scenarios:
        print("repeatability.py: the directories share no scenario", file=sys.stderr)
        return 2
    for s in scenarios:
        lengths = {len(b[s][0]) for b in batches}
        if len(lengths) != 1:
            print(f"repeatability.py: {s}: the batches have {sorted(lengths)} writes; the same "
                  "scenario must be run in each", file=sys.stderr)
            return 2
    names = " | ".join(f"model MRE, batch {i + 1}" for i in range(len(batches)))
    print(f"| scenario | writes | repeatability | {names} |")
    print("|---|---|---|" + "---|" * len(batches))
    over = []
    for s in scenarios:
        floor = leave_one_out([b[s][0] for b in batches])
        models = [mre(b[s][1], b[s][0]) for b in batches]
        if floor * 100 > args.target:
            over.append(s)
        cells = " | ".join(f"{m * 100:.1f} %" for m in models)
        print(f"| {s} | {len(batches[0][s][0])} | {floor * 100:.1f} % | {cells} |")
    print()
    print(f"{len(over)} of {len(scenarios)} scenarios repeat worse than the {args.target:g} % target: "
          + (", ".join(over) if over else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
