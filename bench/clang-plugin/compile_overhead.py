#!/usr/bin/env python3
"""Compile-time cost of the iosig Clang plugin: the same translation units compiled with and without
-fplugin, median of several runs each.

  compile_overhead.py --plugin PLUGIN [--clang CLANG] [--runs N] [--pragmas N]

Units: (1) C++ with the standard library headers and no pragma (the cost of loading the plugin and
of its consumer looking at every declaration); (2) C with N functions, each an annotated open (the cost
per pragma: parsing, matching, rewriting).
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time


def median_seconds(command, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--plugin', required=True)
    parser.add_argument('--clang', default='/usr/lib/llvm-19/bin/clang')
    parser.add_argument('--runs', type=int, default=7)
    parser.add_argument('--pragmas', type=int, default=1000)
    args = parser.parse_args()
    clangxx = os.path.join(os.path.dirname(args.clang), 'clang++')
    work = tempfile.mkdtemp(prefix='iosig-compile-overhead-')

    headers = os.path.join(work, 'headers.cpp')
    with open(headers, 'w') as out:
        out.write('#include <bits/stdc++.h>\n#include <fcntl.h>\nint main() { return 0; }\n')
    many = os.path.join(work, 'pragmas.c')
    with open(many, 'w') as out:
        out.write('#include <fcntl.h>\n#include <stdio.h>\n')
        for i in range(args.pragmas):
            out.write(f'int open_{i}(const char *p) {{\n#pragma sig random temp size-per-IO({4 << (i % 8)}K)\n'
                      f'    return open(p, O_RDONLY);\n}}\n')

    units = [('C++, <bits/stdc++.h>, no pragma, -fsyntax-only', [clangxx, '-std=c++20', '-fsyntax-only', headers]),
             ('C++, <bits/stdc++.h>, no pragma, -O2 -c', [clangxx, '-std=c++20', '-O2', '-c', '-o', os.devnull, headers]),
             (f'C, {args.pragmas} annotated opens, -O0 -c', [args.clang, '-O0', '-c', '-o', os.devnull, many]),
             (f'C, {args.pragmas} annotated opens, -O2 -c', [args.clang, '-O2', '-c', '-o', os.devnull, many])]
    print(f'{"unit":<48} {"without":>9} {"with":>9} {"overhead":>9}')
    for name, command in units:
        plain = median_seconds(command + ['-Wno-unknown-pragmas'], args.runs)
        plugged = median_seconds(command + [f'-fplugin={args.plugin}'], args.runs)
        print(f'{name:<48} {plain:8.3f}s {plugged:8.3f}s {100 * (plugged - plain) / plain:8.1f}%')


if __name__ == '__main__':
    main()
