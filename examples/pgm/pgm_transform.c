// pgm-transform: the three transformations of the IOSIG paper's evaluation (Fig. 8), each writing
// its output chunk by chunk with fsync after every chunk:
//   posterize  chunkwise sequential: chunk i goes to offset i (and its pixels are posterized)
//   divide     strided: chunk 2k to the upper half at k, chunk 2k+1 to the lower half at half + k
//   shuffle    random: the chunks in a seeded random order, each to its new place
// The output is opened by one of the annotated opens of pgm_outputs.c (--sig).
//
//   pgm-transform OPERATION [--chunk SIZE] [--sig none|seq|ps|ps1..ps4] [--levels N] [--seed S]
//                 [--no-fsync] [--no-checksum] INPUT OUTPUT
//
// Prints one line: operation, chunk, signature, bytes, seconds (open to close of the output), the
// output's FNV-1a (equal for equal outputs) and where the output really is (after a redirection).
#include "pgm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum operation { POSTERIZE, DIVIDE, SHUFFLE };

struct options {
    enum operation operation;
    uint64_t chunk;
    int annotation; // enum pgm_annotation, or -1 for the operation's default
    unsigned levels;
    uint64_t seed;
    int fsync_each_chunk;
    int checksum;
    const char* input;
    const char* output;
};

static int usage(const char* program) {
    fprintf(
        stderr,
        "usage: %s posterize|divide|shuffle [--chunk SIZE] [--sig none|seq|ps|ps1|ps2|ps3|ps4]\n"
        "       [--levels N] [--seed S] [--no-fsync] [--no-checksum] INPUT OUTPUT\n",
        program);
    return 2;
}

static int parse(int argc, char** argv, struct options* o) {
    if (argc < 2) return -1;
    if (strcmp(argv[1], "posterize") == 0)
        o->operation = POSTERIZE;
    else if (strcmp(argv[1], "divide") == 0)
        o->operation = DIVIDE;
    else if (strcmp(argv[1], "shuffle") == 0)
        o->operation = SHUFFLE;
    else
        return -1;
    for (int i = 2; i < argc; ++i) {
        const char* value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--chunk") == 0 && value) {
            if ((o->chunk = pgm_parse_size(value)) == 0 || o->chunk > (1ull << 30)) {
                fprintf(stderr, "--chunk: '%s' is not a size between 1 and 1G\n", value);
                return -1;
            }
            ++i;
        } else if (strcmp(argv[i], "--sig") == 0 && value) {
            if ((o->annotation = pgm_parse_annotation(value)) < 0) {
                fprintf(stderr, "--sig: '%s' is none of none, seq, ps, ps1, ps2, ps3, ps4\n",
                        value);
                return -1;
            }
            ++i;
        } else if (strcmp(argv[i], "--levels") == 0 && value) {
            o->levels = (unsigned)strtoul(value, NULL, 10), ++i;
            if (o->levels < 2 || o->levels > 256) return -1;
        } else if (strcmp(argv[i], "--seed") == 0 && value) {
            o->seed = strtoull(value, NULL, 10), ++i;
        } else if (strcmp(argv[i], "--no-fsync") == 0) {
            o->fsync_each_chunk = 0;
        } else if (strcmp(argv[i], "--no-checksum") == 0) {
            o->checksum = 0;
        } else if (argv[i][0] != '-' && !o->input) {
            o->input = argv[i];
        } else if (argv[i][0] != '-' && !o->output) {
            o->output = argv[i];
        } else {
            return -1;
        }
    }
    if (!o->input || !o->output) return -1;
    if (o->annotation < 0)
        o->annotation = o->operation == POSTERIZE ? PGM_SEQUENTIAL : pgm_parse_annotation("ps");
    return 0;
}

// Where chunk i of the input goes in the output's pixel data.
static uint64_t* destinations(const struct options* o, uint64_t bytes, uint64_t count) {
    uint64_t* dest = malloc(count * sizeof *dest);
    const uint64_t chunk = o->chunk;
    if (o->operation == POSTERIZE) {
        for (uint64_t i = 0; i < count; ++i)
            dest[i] = i * chunk;
    } else if (o->operation == DIVIDE) {
        // Even chunks fill the upper part in order, odd chunks the lower part.
        uint64_t even_bytes = 0;
        for (uint64_t i = 0; i < count; i += 2)
            even_bytes += (i + 1 == count) ? bytes - i * chunk : chunk;
        for (uint64_t i = 0; i < count; ++i)
            dest[i] = (i % 2 == 0) ? (i / 2) * chunk : even_bytes + (i / 2) * chunk;
    } else {
        // A seeded Fisher-Yates permutation gives each chunk its rank in the output.
        uint64_t* order = malloc(count * sizeof *order);
        for (uint64_t i = 0; i < count; ++i)
            order[i] = i;
        uint64_t state = o->seed * 6364136223846793005ull + 1442695040888963407ull;
        for (uint64_t i = count; i > 1; --i) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            const uint64_t j = (state >> 33) % i;
            const uint64_t swap = order[i - 1];
            order[i - 1] = order[j];
            order[j] = swap;
        }
        uint64_t at = 0;
        for (uint64_t rank = 0; rank < count; ++rank) {
            const uint64_t i = order[rank];
            dest[i] = at;
            at += (i + 1 == count) ? bytes - i * chunk : chunk;
        }
        free(order);
    }
    return dest;
}

static int fail(const char* path, const char* what) {
    fprintf(stderr, "%s: %s: %s\n", path, what, strerror(errno));
    return 1;
}

int main(int argc, char** argv) {
    struct options o = {POSTERIZE, 512 * 1024, -1, 4, 1, 1, 1, NULL, NULL};
    if (parse(argc, argv, &o) != 0) return usage(argv[0]);

    const int in = open(o.input, O_RDONLY);
    if (in < 0) return fail(o.input, "cannot open");
    struct pgm_image image;
    if (pgm_read_header(in, o.input, &image) != 0) return 1;
    const uint64_t bytes = image.width * image.height;
    const uint64_t count = (bytes + o.chunk - 1) / o.chunk;
    uint64_t* dest = destinations(&o, bytes, count);
    unsigned char* buffer = malloc(o.chunk);
    if (!buffer || !dest) return fail(o.input, "out of memory");

    const double start = pgm_now();
    const int out = pgm_open_output(o.output, (enum pgm_annotation)o.annotation);
    if (out < 0) return fail(o.output, "cannot open");
    const int64_t header = pgm_write_header(out, o.output, image.width, image.height);
    if (header < 0) return 1;
    if (o.operation == POSTERIZE && lseek(out, header, SEEK_SET) != header)
        return fail(o.output, "cannot seek");
    const unsigned step = 256 / o.levels;
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t length = (i + 1 == count) ? bytes - i * o.chunk : o.chunk;
        if (pread(in, buffer, length, (off_t)(image.data_offset + i * o.chunk)) != (ssize_t)length)
            return fail(o.input, "short read");
        ssize_t written;
        if (o.operation == POSTERIZE) {
            for (uint64_t j = 0; j < length; ++j)
                buffer[j] = (unsigned char)((buffer[j] / step) * step + step / 2);
            written = write(out, buffer, length);
        } else {
            written = pwrite(out, buffer, length, (off_t)((uint64_t)header + dest[i]));
        }
        if (written != (ssize_t)length) return fail(o.output, "cannot write");
        if (o.fsync_each_chunk && fsync(out) != 0) return fail(o.output, "cannot fsync");
    }
    if (close(out) != 0) return fail(o.output, "cannot close");
    const double seconds = pgm_now() - start;
    close(in);

    char where[PATH_MAX];
    if (!realpath(o.output, where)) snprintf(where, sizeof where, "%s", o.output);
    static const char* const names[] = {"posterize", "divide", "shuffle"};
    printf("%s chunk=%llu sig=\"%s\" bytes=%llu seconds=%.3f", names[o.operation],
           (unsigned long long)o.chunk, pgm_annotation_signature((enum pgm_annotation)o.annotation),
           (unsigned long long)bytes, seconds);
    if (o.checksum) printf(" fnv1a=%08x", pgm_file_fnv1a(o.output));
    printf(" output=%s\n", where);
    free(buffer);
    free(dest);
    return 0;
}
