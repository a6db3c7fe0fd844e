#!/usr/bin/env python3
"""Fuzzes the plugin's pragma front end through the real compiler.

Generates files full of random and mutated `#pragma sig` / `#pragma sigdef` lines, each `sig` in front
of a statement that opens a file, compiles them to LLVM IR with the plugin (remarks on), and checks:
  - the compiler never crashes (exit status 0 or 1, no stack dump, no internal error);
  - every error or warning points at a pragma line;
  - every `#pragma sig` line either has an error on its line, or its statement's open was rewritten
    (a remark on the next line) - never both, never neither;
  - misspelt and recased directive names (`#pragma sgi ...`, `#pragma SIG ...`) as well.

usage: fuzz_pragmas.py --clang CLANG --plugin PLUGIN [--seed N] [--files N] [--lines N] [--workdir DIR]
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

WORDS = ['global', 'local', 'random', 'sequential', 'persist', 'temp', 'archive', 'tamperproof',
         'size-per-IO', 'totalsize', 'MTTDL', 'availability', 'sig', 'sigdef', 'ckpt', 'scratch',
         'Random', 'SEQUENTIAL', 'size_per_io', 'sizeperio', 'mttdl', 'radnom', 'presist', 'tmp']
VALUES = ['16M', '4K', '512K', '1G', '6G', '0', '1', '16', '16Q', '1.5G', '-1', '1e3', '20y', '5min',
          '10d', '0.001', '0.5', '2', '1e-6', 'abc', '', '99999999999999999999999T', '0x10', '1_000']
PUNCT = ['(', ')', '((', '))', ',', ';', '-', '--', '=', '@', '$', '"', "'", '#', '\\', '?', '{', '}',
         '[', ']', '<', '>', '+', '*', '/', '%', '&', '|', '^', '~', '!', '.', ':']
UNICODE = ['\u2010', '\u2013', '\u2014', '\u2212', '\u00a0', '\u201c', '\u201d', '\uff08', '\uff09',
           '\u00e9', '\U0001f600', '\u0000'.replace('\u0000', '')]
VALID = ['random temp size-per-IO(4K)', 'sequential persist size-per-IO(16M) totalsize(6G)',
         'global random size-per-IO(512K) totalsize(1G)', 'random MTTDL(20y) size-per-IO(512K)',
         'random persist', 'archive tamperproof persist', 'local temp availability(0.001)', 'ckpt temp',
         'scratch size-per-IO(64K)', '']


def random_param(rng):
    word = rng.choice(WORDS)
    if rng.random() < 0.4:
        return f'{word}({rng.choice(VALUES)})'
    return word


def random_tokens(rng):
    parts = []
    for _ in range(rng.randint(0, 12)):
        roll = rng.random()
        if roll < 0.5:
            parts.append(random_param(rng))
        elif roll < 0.7:
            parts.append(rng.choice(VALUES))
        elif roll < 0.9:
            parts.append(rng.choice(PUNCT))
        else:
            parts.append(rng.choice(UNICODE))
    sep = rng.choice([' ', '  ', '\t', ' \t ', ''])
    return sep.join(parts)


def mutate(rng, text):
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        pos = rng.randint(0, len(chars))
        if op < 0.3 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op < 0.6:
            chars.insert(pos, rng.choice(list('abcdefghijklmnopqrstuvwxyz()-_0123456789KMGy .,@"') +
                                         UNICODE))
        elif op < 0.8 and len(chars) > 1:
            i = min(pos, len(chars) - 2)
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        elif chars:
            chars[min(pos, len(chars) - 1)] = rng.choice(list('()-x9M ') + UNICODE)
    return ''.join(chars)


def random_printable(rng):
    return ''.join(chr(rng.randint(0x20, 0x7e)) for _ in range(rng.randint(0, 60)))


def pragma_body(rng):
    roll = rng.random()
    if roll < 0.35:
        return mutate(rng, rng.choice(VALID))
    if roll < 0.65:
        return random_tokens(rng)
    if roll < 0.75:
        return rng.choice(VALID)
    if roll < 0.9:
        return random_printable(rng)
    if roll < 0.95:
        return 'random ' * rng.randint(50, 400)  # long lines
    return 'size-per-IO' + '(' * rng.randint(1, 300) + '4K' + ')' * rng.randint(0, 300)


def sanitize(body):
    # Keep the file's line structure: no block comments, no line continuations, no raw string
    # literals (R"x( may legally run over many lines, pragma or not: Clang lexes it so with or
    # without the plugin).
    body = body.replace('/*', '/ *').replace('*/', '* /').replace('\r', ' ').replace('\n', ' ')
    body = body.replace('R"', 'R "')
    return body.rstrip('\\')


def generate(rng, lines):
    """Returns (source text, {line number: 'sig'|'sigdef'})."""
    out = ['extern int open(const char *path, int flags, ...);', 'int fuzz(const char *p) {',
           '    int fd = 0;']
    kinds = {}
    for _ in range(lines):
        roll = rng.random()
        kind = 'sigdef' if roll < 0.2 else 'name' if roll < 0.3 else 'sig'
        if kind == 'name':
            # A misspelt or recased directive keyword: a typo error, a case variant, or not ours.
            name = mutate(rng, rng.choice(['sig', 'sigdef'])) if rng.random() < 0.7 else rng.choice(
                ['SIG', 'Sig', 'SIGDEF', 'SigDef', 'sgi', 'sigdeff', 'sig_def'])
            name = re.sub(r'[^A-Za-z0-9_]', '', name) or 'x'
            out.append(f'#pragma {name} {sanitize(pragma_body(rng))}')
            kinds[len(out)] = kind
            out.append('    fd += open(p, 0);')
        elif kind == 'sigdef':
            # sigdefs at function scope are allowed (the preprocessor knows no scopes).
            name = rng.choice(['ckpt', 'scratch', 'log', 'x', mutate(rng, 'ckpt'), ''])
            out.append(f'#pragma sigdef {sanitize(name + " " + pragma_body(rng))}')
            kinds[len(out)] = kind
        else:
            out.append(f'#pragma sig {sanitize(pragma_body(rng))}')
            kinds[len(out)] = kind
            out.append('    fd += open(p, 0);')
    out += ['    return fd;', '}', '']
    return '\n'.join(out), kinds


DIAG = re.compile(r'^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<kind>error|warning|remark|note): ')
CRASH = ['PLEASE submit a bug report', 'Stack dump', 'internal error', 'LLVM ERROR', 'Assertion',
         'Segmentation fault', 'clang frontend command failed']


def check(path, kinds, result):
    problems = []
    if result.returncode not in (0, 1):
        problems.append(f'exit status {result.returncode}')
    for marker in CRASH:
        if marker in result.stderr:
            problems.append(f'crash marker {marker!r}')
    errors, remarks = set(), set()  # lines with an error / with a rewrite
    for line in result.stderr.splitlines():
        match = DIAG.match(line)
        if not match or os.path.basename(match['file']) != os.path.basename(path):
            continue
        number, kind = int(match['line']), match['kind']
        if kind in ('error', 'warning'):
            if number not in kinds:
                problems.append(f'{kind} on line {number}, not a pragma line: {line}')
            if kind == 'error':
                errors.add(number)
        elif kind == 'remark':
            remarks.add(number)
    for number, kind in kinds.items():
        if kind != 'sig':  # 'name' lines may be ours or not; they must only not crash
            continue
        rewritten = number + 1 in remarks
        if (number in errors) == rewritten:
            state = 'both an error and a rewrite' if rewritten else 'neither an error nor a rewrite'
            problems.append(f'line {number}: {state}')
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--clang', required=True)
    parser.add_argument('--plugin', required=True)
    parser.add_argument('--seed', type=int, default=20240611)
    parser.add_argument('--files', type=int, default=40)
    parser.add_argument('--lines', type=int, default=50)
    parser.add_argument('--workdir')
    args = parser.parse_args()

    rng = random.Random(args.seed)
    workdir = args.workdir or tempfile.mkdtemp(prefix='iosig-pragma-fuzz-')
    os.makedirs(workdir, exist_ok=True)
    failures = 0
    pragmas = 0
    for index in range(args.files):
        source, kinds = generate(rng, args.lines)
        pragmas += len(kinds)
        path = os.path.join(workdir, f'fuzz{index:03d}.c')
        with open(path, 'w', encoding='utf-8', errors='surrogatepass') as out:
            out.write(source)
        result = subprocess.run(
            [args.clang, f'-fplugin={args.plugin}', '-fplugin-arg-iosig-remarks', '-ferror-limit=0',
             '-fno-color-diagnostics', '-fno-caret-diagnostics', '-S', '-emit-llvm', '-o', os.devnull, path],
            capture_output=True, text=True, errors='replace', timeout=120)
        problems = check(path, kinds, result)
        if problems:
            failures += 1
            print(f'FAIL {path} (seed {args.seed}, file {index}):')
            for problem in problems[:20]:
                print(f'  {problem}')
    print(f'{args.files} files, {pragmas} pragma lines, seed {args.seed}: '
          f'{"all diagnosed cleanly" if not failures else f"{failures} files with problems"}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
