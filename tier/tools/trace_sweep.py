#!/usr/bin/env python3
# The learner against the better of LRU and LFU on any traces (docs/tier-learner-evidence.md, "Real
# traces it was never tuned on"): each trace at cache sizes of 1 .. 80 % of its working set. Prints, per trace,
# the sizes where ws is more than 1 % worse than min(lru, lfu), then a summary (cases over 1 %,
# worst, mean of ws / min(lru, lfu) - 1).
# Usage: trace_sweep.py path/to/iosig-tiersim TRACE... [-- extra iosig-tiersim options]
# e.g. trace_sweep.py build/bin/iosig-tiersim P3.csv P6.csv -- --csv-columns offset=1,size=2
import json, subprocess, sys

SHARES = [1, 2, 3, 5, 7, 10, 15, 20, 25, 30, 40, 50, 60, 80]


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: trace_sweep.py IOSIG_TIERSIM TRACE... [-- IOSIG_TIERSIM_OPTIONS]")
    extra = argv[argv.index('--') + 1:] if '--' in argv else []
    args = argv[:argv.index('--')] if '--' in argv else argv
    tiersim, traces = args[0], args[1:]
    cases = over = 0
    worst = total = 0.0
    for trace in traces:
        cmd = [tiersim, '--trace', trace, '--policy', 'lru,lfu,ws', '--json',
               '--cache-size', ','.join(f'{s}%' for s in SHARES)] + extra
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        # Results come per policy in the order of --cache-size; two shares of a tiny trace may
        # give the same capacity, so they are matched by position, not by capacity.
        misses = {}
        for r in json.loads(out)['results']:
            misses.setdefault(r['policy'], []).append(r['misses'])
        bad = []
        for share, lru, lfu, ws in zip(SHARES, misses['lru'], misses['lfu'], misses['ws']):
            rel = ws / min(lru, lfu) - 1
            cases += 1
            total += rel
            worst = max(worst, rel)
            if rel > 0.01:
                bad.append(f'{share}%: {rel * 100:+.1f}%')
        over += len(bad)
        print(f'{trace}: {len(bad)} of {len(SHARES)} over 1 %', ', '.join(bad), flush=True)
    print(f'over 1 %: {over} of {cases}; worst {worst * 100:+.1f}%; mean {total / max(cases, 1) * 100:+.2f}%')


if __name__ == '__main__':
    main(sys.argv[1:])
