// The annotated output opens, as in the IOSIG paper's Figs. 7, 9 and 10. One function per
// signature, so that a single binary can run every experiment (`pgm-transform --sig ps2 ...`).
//
// size-per-IO is the chunk size the experiment writes with and totalsize the output's size; both
// are compile-time parameters here (a pragma is written once, like the paper's): rebuild with e.g.
// -DPGM_CHUNK=4M -DPGM_TOTALSIZE=256M to match other runs. They reach the pragma through _Pragma
// and two macro levels, which expand the arguments before stringising them.
#include "pgm.h"

#include <fcntl.h>
#include <string.h>

#ifndef PGM_CHUNK
#define PGM_CHUNK 512K // Fig. 11b's example chunk
#endif
#ifndef PGM_TOTALSIZE
#define PGM_TOTALSIZE 1G // the strided and random experiments' image
#endif
#ifndef PGM_SEQUENTIAL_CHUNK
#define PGM_SEQUENTIAL_CHUNK 16M // Fig. 9
#endif
#ifndef PGM_SEQUENTIAL_TOTALSIZE
#define PGM_SEQUENTIAL_TOTALSIZE 6G // Fig. 9: the 6 GB posterize input
#endif
// -DIOSIG_PS=N picks the parameter set `--sig` defaults to for divide and shuffle.
#ifndef IOSIG_PS
#define IOSIG_PS 4
#endif

#define PGM_STRING(x) #x
#define PGM_EXPANDED_STRING(x) PGM_STRING(x)
#define PGM_PRAGMA(text) _Pragma(PGM_STRING(text))
#define PGM_SIG(params) PGM_PRAGMA(sig params)

#define PGM_OUTPUT_FLAGS (O_WRONLY | O_CREAT | O_TRUNC)

// clang-format off: it would respace the signatures (size - per - IO parses, but reads badly)
static int open_sequential(const char* path) {
    // Fig. 9: #pragma sig sequential persist size-per-IO(16M) totalsize(6G)
    PGM_SIG(sequential persist size-per-IO(PGM_SEQUENTIAL_CHUNK) totalsize(PGM_SEQUENTIAL_TOTALSIZE))
    int fd = open(path, PGM_OUTPUT_FLAGS, 0644);
    return fd;
}

static int open_ps1(const char* path) {
    // Fig. 10, ps1: only a global (shared) device qualifies.
    PGM_SIG(global random size-per-IO(PGM_CHUNK) totalsize(PGM_TOTALSIZE))
    int fd = open(path, PGM_OUTPUT_FLAGS, 0644);
    return fd;
}

static int open_ps2(const char* path) {
    // Fig. 10, ps2: at least 20 years MTTDL for the file (a RAID 1 qualifies).
    PGM_SIG(random MTTDL(20y) size-per-IO(PGM_CHUNK) totalsize(PGM_TOTALSIZE))
    int fd = open(path, PGM_OUTPUT_FLAGS, 0644);
    return fd;
}

static int open_ps3(const char* path) {
    // Fig. 10, ps3: persistent, no reliability demand (the fastest non-volatile device).
    PGM_SIG(random persist size-per-IO(PGM_CHUNK) totalsize(PGM_TOTALSIZE))
    int fd = open(path, PGM_OUTPUT_FLAGS, 0644);
    return fd;
}

static int open_ps4(const char* path) {
    // Fig. 10, ps4: no demand beyond the pattern (the ramdisk when it fits).
    PGM_SIG(random size-per-IO(PGM_CHUNK) totalsize(PGM_TOTALSIZE))
    int fd = open(path, PGM_OUTPUT_FLAGS, 0644);
    return fd;
}

// clang-format on

int pgm_open_output(const char* path, enum pgm_annotation annotation) {
    switch (annotation) {
    case PGM_SEQUENTIAL:
        return open_sequential(path);
    case PGM_PS1:
        return open_ps1(path);
    case PGM_PS2:
        return open_ps2(path);
    case PGM_PS3:
        return open_ps3(path);
    case PGM_PS4:
        return open_ps4(path);
    case PGM_NONE:
        break;
    }
    return open(path, PGM_OUTPUT_FLAGS, 0644);
}

int pgm_parse_annotation(const char* text) {
    static const char* const names[] = {"none", "seq", "ps1", "ps2", "ps3", "ps4"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); ++i)
        if (strcmp(text, names[i]) == 0) return i;
    if (strcmp(text, "ps") == 0) return PGM_PS1 + IOSIG_PS - 1;
    return -1;
}

const char* pgm_annotation_signature(enum pgm_annotation annotation) {
    switch (annotation) {
    case PGM_SEQUENTIAL:
        return "sequential persist size-per-IO(" PGM_EXPANDED_STRING(
            PGM_SEQUENTIAL_CHUNK) ") totalsize(" PGM_EXPANDED_STRING(PGM_SEQUENTIAL_TOTALSIZE) ")";
    case PGM_PS1:
        return "global random size-per-IO(" PGM_EXPANDED_STRING(
            PGM_CHUNK) ") totalsize(" PGM_EXPANDED_STRING(PGM_TOTALSIZE) ")";
    case PGM_PS2:
        return "random MTTDL(20y) size-per-IO(" PGM_EXPANDED_STRING(
            PGM_CHUNK) ") totalsize(" PGM_EXPANDED_STRING(PGM_TOTALSIZE) ")";
    case PGM_PS3:
        return "random persist size-per-IO(" PGM_EXPANDED_STRING(
            PGM_CHUNK) ") totalsize(" PGM_EXPANDED_STRING(PGM_TOTALSIZE) ")";
    case PGM_PS4:
        return "random size-per-IO(" PGM_EXPANDED_STRING(
            PGM_CHUNK) ") totalsize(" PGM_EXPANDED_STRING(PGM_TOTALSIZE) ")";
    case PGM_NONE:
        break;
    }
    return "";
}
