// Helpers shared by pgm-gen and pgm-transform.
#include "pgm.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int pgm_read_header(int fd, const char* path, struct pgm_image* image) {
    char header[128];
    const ssize_t got = pread(fd, header, sizeof header - 1, 0);
    if (got < 0) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return -1;
    }
    header[got] = '\0';
    unsigned long long width = 0, height = 0, maxval = 0;
    int consumed = 0;
    if (sscanf(header, "P5 %llu %llu %llu%n", &width, &height, &maxval, &consumed) != 3 ||
        consumed >= got || !isspace((unsigned char)header[consumed]) || maxval != 255 ||
        width == 0 || height == 0) {
        fprintf(stderr, "%s: not an 8-bit binary PGM (P5) image\n", path);
        return -1;
    }
    image->width = width;
    image->height = height;
    image->data_offset = (uint64_t)consumed + 1;
    return 0;
}

int64_t pgm_write_header(int fd, const char* path, uint64_t width, uint64_t height) {
    char header[96];
    const int length = snprintf(header, sizeof header, "P5\n%llu %llu\n255\n",
                                (unsigned long long)width, (unsigned long long)height);
    if (pwrite(fd, header, (size_t)length, 0) != length) {
        fprintf(stderr, "%s: cannot write the header: %s\n", path, strerror(errno));
        return -1;
    }
    return length;
}

uint64_t pgm_parse_size(const char* text) {
    char* end = NULL;
    errno = 0;
    const unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || end == text || value == 0) return 0;
    unsigned shift = 0;
    switch (*end) {
    case '\0':
        break;
    case 'K':
    case 'k':
        shift = 10;
        ++end;
        break;
    case 'M':
    case 'm':
        shift = 20;
        ++end;
        break;
    case 'G':
    case 'g':
        shift = 30;
        ++end;
        break;
    default:
        return 0;
    }
    if (*end != '\0' || value > (UINT64_MAX >> shift)) return 0;
    return (uint64_t)value << shift;
}

uint32_t pgm_file_fnv1a(const char* path) {
    FILE* in = fopen(path, "rb");
    if (!in) return 0;
    uint32_t hash = 2166136261u;
    unsigned char buffer[1 << 16];
    size_t got;
    while ((got = fread(buffer, 1, sizeof buffer, in)) > 0)
        for (size_t i = 0; i < got; ++i)
            hash = (hash ^ buffer[i]) * 16777619u;
    fclose(in);
    return hash;
}

double pgm_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}
