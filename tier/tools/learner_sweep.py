#!/usr/bin/env python3
# The learner against the better of LRU and LFU on the paper's synthetic traffic (docs/tier.md, "The
# learner"): Poisson, IRM-Zipf and regime-switching traces, seeds 1-10 and 42, 4 KiB and 8 KiB lines,
# 64..4096 lines. Prints every case where ws is more than 1 % worse than min(lru, lfu), or does not
# beat both on switching traffic, then a summary.
# --holdout runs parameters the learner was not tuned on instead: seeds 11, 17, 23, 99, 1234; 4 KiB and
# 16 KiB lines; 128..8192 lines; traces of the default length, 100,000 and 400,000 requests (360 cases).
# Usage: learner_sweep.py [path/to/iosig-tiersim] [--holdout] [extra iosig-tiersim options]
import json, subprocess, sys
args = sys.argv[1:]
holdout = '--holdout' in args
args = [a for a in args if a != '--holdout']
B = args[0] if args else "build/bin/iosig-tiersim"
extra = args[1:]
if holdout:
    pages, seeds, lines, lengths = [4096, 16384], [11, 17, 23, 99, 1234], [128, 512, 2048, 8192], [0, 100000, 400000]
else:
    pages, seeds, lines, lengths = [4096, 8192], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 42], [64, 256, 1024, 4096], [0]
bad = 0; total = 0; worst = 0
for kind in ['poisson', 'irm', 'switching']:
    for page in pages:
        for length in lengths:
            for seed in seeds:
                sizes = ','.join(str(n * page) for n in lines)
                cmd = [B, '--synthetic', kind, '--line-size', str(page), '--policy', 'lru,lfu,ws',
                       '--cache-size', sizes, '--seed', str(seed), '--json']
                if length: cmd += ['--requests', str(length)]
                out = subprocess.run(cmd + extra, capture_output=True, text=True, check=True).stdout
                by = {}
                for r in json.loads(out)['results']:
                    by.setdefault(r['capacity'], {})[r['policy']] = r['misses']
                for cap, m in sorted(by.items()):
                    best = min(m['lru'], m['lfu'])
                    rel = m['ws'] / best - 1
                    total += 1
                    worst = max(worst, rel) if kind != 'switching' else worst
                    flag = ''
                    if kind == 'switching' and m['ws'] >= best: flag = 'NOT-BEAT'; bad += 1
                    if kind != 'switching' and rel > 0.01: flag = 'OVER1%'; bad += 1
                    if flag: print(kind, page, length or 'default', seed, cap, m, f'{rel*100:+.2f}%', flag)
print('bad', bad, 'of', total, 'worst non-switching', f'{worst*100:.2f}%')
