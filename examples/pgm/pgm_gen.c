// pgm-gen: writes a deterministic test image (a gradient with noise) of the requested size.
//
//   pgm-gen [--width W] [--height H | --size BYTES] [--seed S] OUTPUT
//
// --size picks the height for about BYTES of pixels (e.g. --size 1G for the paper's strided and
// random experiments, --size 6G for posterize).
#include "pgm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int usage(const char* program) {
    fprintf(stderr, "usage: %s [--width W] [--height H | --size BYTES] [--seed S] OUTPUT\n",
            program);
    return 2;
}

int main(int argc, char** argv) {
    uint64_t width = 4096, height = 1024, seed = 1;
    const char* output = NULL;
    for (int i = 1; i < argc; ++i) {
        const char* value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--width") == 0 && value) {
            width = pgm_parse_size(value), ++i;
        } else if (strcmp(argv[i], "--height") == 0 && value) {
            height = pgm_parse_size(value), ++i;
        } else if (strcmp(argv[i], "--size") == 0 && value) {
            const uint64_t bytes = pgm_parse_size(value);
            height = width ? (bytes + width - 1) / width : 0, ++i;
        } else if (strcmp(argv[i], "--seed") == 0 && value) {
            seed = strtoull(value, NULL, 10), ++i;
        } else if (argv[i][0] != '-' && !output) {
            output = argv[i];
        } else {
            return usage(argv[0]);
        }
    }
    if (!output || width == 0 || height == 0) return usage(argv[0]);

    const int fd = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "%s: %s\n", output, strerror(errno));
        return 1;
    }
    const int64_t header = pgm_write_header(fd, output, width, height);
    if (header < 0) return 1;
    unsigned char* row = malloc(width);
    uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (uint64_t y = 0; y < height; ++y) {
        for (uint64_t x = 0; x < width; ++x) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            const unsigned gradient = (unsigned)((x * 255) / width + (y * 255) / height) / 2;
            row[x] = (unsigned char)(gradient + ((state >> 59) & 15));
        }
        const off_t at = (off_t)header + (off_t)(y * width);
        if (pwrite(fd, row, width, at) != (ssize_t)width) {
            fprintf(stderr, "%s: %s\n", output, strerror(errno));
            return 1;
        }
    }
    free(row);
    if (close(fd) != 0) {
        fprintf(stderr, "%s: %s\n", output, strerror(errno));
        return 1;
    }
    printf("%s: %llux%llu, %llu bytes of pixels\n", output, (unsigned long long)width,
           (unsigned long long)height, (unsigned long long)(width * height));
    return 0;
}
