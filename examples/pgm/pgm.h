// The IOSIG paper's PGM workload (Sect. 7.3): binary PGM ("P5") images as a stand-in for large
// matrices, transformed chunk by chunk with a chosen IO pattern.
#ifndef IOSIG_EXAMPLE_PGM_H
#define IOSIG_EXAMPLE_PGM_H

#include <stdint.h>
#include <stdio.h>

struct pgm_image {
    uint64_t width;
    uint64_t height;
    uint64_t data_offset; // bytes of header before the pixels
};

// Reads the header of the P5 image open on `fd`; 0 on success, -1 with a message on stderr.
int pgm_read_header(int fd, const char* path, struct pgm_image* image);
// Writes "P5\n<width> <height>\n255\n" to `fd`; returns its length, or -1 with a message.
int64_t pgm_write_header(int fd, const char* path, uint64_t width, uint64_t height);

// "512K", "16M", "1G" (base 1024), plain bytes; 0 on a malformed value.
uint64_t pgm_parse_size(const char* text);

// FNV-1a over a whole file (the run's fingerprint, equal for equal outputs).
uint32_t pgm_file_fnv1a(const char* path);

// Seconds on a monotonic clock.
double pgm_now(void);

// The output open of each IO signature of the paper (pgm_outputs.c), and no signature.
enum pgm_annotation {
    PGM_NONE,       // not annotated: the program's own choice of place
    PGM_SEQUENTIAL, // Fig. 9: posterize, chunkwise sequential
    PGM_PS1,        // Fig. 10, ps1 .. ps4: strided and random access
    PGM_PS2,
    PGM_PS3,
    PGM_PS4,
};
int pgm_open_output(const char* path, enum pgm_annotation annotation);
// "none", "seq", "ps1".."ps4"; -1 if unknown.
int pgm_parse_annotation(const char* text);
const char* pgm_annotation_signature(enum pgm_annotation annotation);

#endif
