#!/usr/bin/env python3
# The learner against the better of LRU and LFU on the paper's synthetic traffic (docs/tier.md, "The
# learner"): Poisson, IRM-Zipf and regime-switching traces, seeds 1-10 and 42, 4 KiB and 8 KiB lines,
# 64..4096 lines. Prints every case where ws is more than 1 % worse than min(lru, lfu), or does not
# beat both on switching traffic, then a summary. Usage: learner_sweep.py [path/to/iosig-tiersim]
import json, subprocess, sys, itertools
B = sys.argv[1] if len(sys.argv) > 1 else "build/bin/iosig-tiersim"
extra = sys.argv[2:]
bad = 0; total = 0; worst = 0
for kind in ['poisson', 'irm', 'switching']:
    for page in [4096, 8192]:
        for seed in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 42]:
            sizes = ','.join(str(n * page) for n in [64, 256, 1024, 4096])
            out = subprocess.run([B, '--synthetic', kind, '--line-size', str(page), '--policy', 'lru,lfu,ws',
                                  '--cache-size', sizes, '--seed', str(seed), '--json'] + extra,
                                 capture_output=True, text=True, check=True).stdout
            res = json.loads(out)['results']
            by = {}
            for r in res:
                by.setdefault(r['capacity'], {})[r['policy']] = r['misses']
            for cap, m in sorted(by.items()):
                best = min(m['lru'], m['lfu'])
                rel = m['ws'] / best - 1
                total += 1
                worst = max(worst, rel) if kind != 'switching' else worst
                flag = ''
                if kind == 'switching' and m['ws'] >= best: flag = 'NOT-BEAT'; bad += 1
                if kind != 'switching' and rel > 0.01: flag = 'OVER1%'; bad += 1
                if flag: print(kind, page, seed, cap, m, f'{rel*100:+.2f}%', flag)
print('bad', bad, 'of', total, 'worst non-switching', f'{worst*100:.2f}%')
