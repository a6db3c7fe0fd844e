#!/usr/bin/env python3
"""Checks a pgm-transform output against its input, from the definitions in the IOSIG paper (Fig. 8):
posterize maps each pixel to the middle of its level; divide puts chunk 2k at k in the upper part and
chunk 2k+1 at k in the lower part; shuffle writes every chunk exactly once, somewhere else.

usage: verify_pgm.py posterize|divide|shuffle CHUNK INPUT OUTPUT [LEVELS]
"""
import sys


def read_pgm(path):
    data = open(path, 'rb').read()
    fields, at = [], 0
    while len(fields) < 4:
        while data[at:at + 1].isspace():
            at += 1
        start = at
        while not data[at:at + 1].isspace():
            at += 1
        fields.append(data[start:at])
    assert fields[0] == b'P5' and fields[3] == b'255', f'{path}: not a P5 image'
    return int(fields[1]), int(fields[2]), data[at + 1:]


def main():
    operation, chunk, input_path, output_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    levels = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    width, height, pixels = read_pgm(input_path)
    out_width, out_height, out = read_pgm(output_path)
    assert (out_width, out_height) == (width, height), 'the output has other dimensions'
    assert len(out) == len(pixels) == width * height, 'pixel data of the wrong size'
    chunks = [pixels[i:i + chunk] for i in range(0, len(pixels), chunk)]
    if operation == 'posterize':
        step = 256 // levels
        expected = bytes((p // step) * step + step // 2 for p in pixels)
    elif operation == 'divide':
        expected = b''.join(chunks[0::2]) + b''.join(chunks[1::2])
    elif operation == 'shuffle':
        assert len(pixels) % chunk == 0, 'use a size that is a multiple of the chunk for shuffle'
        got = [out[i:i + chunk] for i in range(0, len(out), chunk)]
        assert sorted(got) == sorted(chunks), 'the output is not a permutation of the input chunks'
        moved = sum(1 for a, b in zip(got, chunks) if a != b)
        assert moved > len(chunks) // 2, f'only {moved} of {len(chunks)} chunks moved'
        print(f'shuffle: {len(chunks)} chunks, {moved} moved')
        return 0
    else:
        raise SystemExit(f'unknown operation {operation}')
    if out != expected:
        first = next(i for i in range(len(out)) if out[i] != expected[i])
        raise SystemExit(f'{operation}: output differs from the definition at pixel byte {first}')
    print(f'{operation}: {len(chunks)} chunks as defined')
    return 0


if __name__ == '__main__':
    sys.exit(main())
