// Every form of annotated open the plugin rewrites in C, the way a program would write them. Built
// with and without the plugin, with and without the iosig runtime, it must print the same lines and
// leave files with the same contents and modes (tests/plugin-e2e/run-e2e.sh).
//
// usage: annotated OUTDIR   (OUTDIR exists and is empty)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// clang-format off: it would respace size-per-IO
#pragma sigdef scratch random temp size-per-IO(4K)
#pragma sigdef results sequential persist size-per-IO(64K)
// clang-format on

static const char* out_dir;
static int evaluations;

// Each call is one evaluation of a path expression, printed in order, so that the output shows how
// often and in which order the plugin's rewrite evaluates the arguments.
static const char* path_of(const char* name) {
    static char slots[8][512];
    static unsigned next;
    char* path = slots[next++ % 8];
    snprintf(path, sizeof slots[0], "%s/%s", out_dir, name);
    printf("evaluate %d %s\n", ++evaluations, name);
    return path;
}

static int flags_of(int flags) {
    printf("evaluate %d flags\n", ++evaluations);
    return flags;
}

static void fill(int fd, const char* name, size_t size) {
    unsigned char block[4096];
    uint32_t state = 2166136261u;
    for (const char* c = name; *c; ++c)
        state = (state ^ (unsigned char)*c) * 16777619u;
    for (size_t done = 0; done < size; done += sizeof block) {
        for (size_t i = 0; i < sizeof block; ++i)
            block[i] = (unsigned char)((state = state * 1103515245u + 12345u) >> 16);
        size_t chunk = size - done < sizeof block ? size - done : sizeof block;
        if (write(fd, block, chunk) != (ssize_t)chunk) {
            perror("write");
            exit(1);
        }
    }
}

static void report(const char* what, int result) {
    // Descriptor numbers are the same with or without the runtime only when it opens nothing of its
    // own; print whether the call succeeded and errno, the number goes to stderr.
    printf("%s: %s", what, result >= 0 ? "ok" : "failed");
    if (result < 0) printf(" (%s)", strerror(errno));
    printf("\n");
    fprintf(stderr, "%s: fd %d\n", what, result);
}

#define OPEN_FOR_WRITING(path) open((path), O_WRONLY | O_CREAT | O_TRUNC, 0600)
#define IOSIG_STR(x) #x
#define IOSIG_PRAGMA(x) _Pragma(IOSIG_STR(x))
#define SIG(params) IOSIG_PRAGMA(sig params)
#define BLOCK 16K

static void in_declaration(void) {
#pragma sig scratch
    int fd = open(path_of("declaration.dat"), flags_of(O_WRONLY | O_CREAT | O_TRUNC), 0644);
    report("declaration", fd);
    fill(fd, "declaration", 40000);
    close(fd);
}

static void in_condition(void) {
    int fd;
#pragma sig results totalsize(1M)
    if ((fd = open(path_of("condition.dat"), O_WRONLY | O_CREAT | O_TRUNC, 0640)) < 0) {
        report("condition", fd);
        return;
    }
    report("condition", fd);
    fill(fd, "condition", 100000);
    close(fd);
}

static void in_assignment_and_macros(void) {
    int fd = -1;
#pragma sig global random
    fd = creat(path_of("creat.dat"), 0600);
    report("creat", fd);
    fill(fd, "creat", 5000);
    close(fd);

#pragma sig random MTTDL(20y)
    fd = OPEN_FOR_WRITING(path_of("macro.dat"));
    report("macro", fd);
    fill(fd, "macro", 7000);
    close(fd);

    // clang-format off
    SIG(random temp size-per-IO(BLOCK))
    // clang-format on
    fd = open(path_of("pragma-macro.dat"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    report("pragma in a macro", fd);
    fill(fd, "pragma-macro", 3000);
    close(fd);
}

static void at_and_large_file(void) {
    int dir = open(out_dir, O_RDONLY | O_DIRECTORY);
#pragma sig temp
    int fd = openat(dir, (printf("evaluate %d openat-name\n", ++evaluations), "openat.dat"),
                    O_WRONLY | O_CREAT | O_EXCL, 0644);
    report("openat", fd);
    fill(fd, "openat", 12345);
    close(fd);
#pragma sig temp random
    fd = openat64(dir, "openat64.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    report("openat64", fd);
    fill(fd, "openat64", 2222);
    close(fd);
    close(dir);
#pragma sig persist
    fd = open64(path_of("open64.dat"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    report("open64", fd);
    fill(fd, "open64", 4444);
    close(fd);
#pragma sig persist
    fd = creat64(path_of("creat64.dat"), 0644);
    report("creat64", fd);
    fill(fd, "creat64", 1111);
    close(fd);
}

static void streams(void) {
#pragma sig results
    FILE* text = fopen(path_of("fopen.txt"), "w");
    report("fopen", text ? 0 : -1);
    for (int i = 0; i < 1000; ++i)
        fprintf(text, "line %d\n", i);
    FILE* first = fopen(path_of("before-freopen.txt"), "w");
    fputs("before\n", first);
#pragma sig scratch
    first = freopen(path_of("freopen.txt"), "w", first);
    report("freopen", first ? 0 : -1);
    fputs("after freopen\n", first);
    fclose(first);
    fclose(text);
#pragma sig results
    FILE* large = fopen64(path_of("fopen64.txt"), "w");
    fputs("fopen64\n", large);
#pragma sig results
    large = freopen64(path_of("freopen64.txt"), "w", large);
    fputs("freopen64\n", large);
    fclose(large);
}

static void failures_keep_errno(void) {
    errno = 0;
#pragma sig scratch
    int fd = open(path_of("missing-dir/never.dat"), O_RDONLY);
    report("open of a missing file", fd);
    errno = 0;
#pragma sig scratch
    FILE* f = fopen(path_of("missing-dir/never.txt"), "r");
    report("fopen of a missing file", f ? 0 : -1);
    // An existing file opened for reading: nothing to redirect.
#pragma sig random
    fd = open(path_of("condition.dat"), O_RDONLY);
    report("read an existing file", fd);
    char head[16];
    printf("read %zd bytes\n", read(fd, head, sizeof head));
    close(fd);
}

static void unannotated(void) {
    int fd = open(path_of("unannotated.dat"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    report("unannotated", fd);
    fill(fd, "unannotated", 999);
    close(fd);
}

static const char* names[] = {
    "declaration.dat",    "condition.dat", "creat.dat",   "macro.dat",     "pragma-macro.dat",
    "openat.dat",         "openat64.dat",  "open64.dat",  "creat64.dat",   "fopen.txt",
    "before-freopen.txt", "freopen.txt",   "fopen64.txt", "freopen64.txt", "unannotated.dat"};

static void summary(void) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", out_dir, names[i]);
        struct stat info;
        if (stat(path, &info) != 0) {
            printf("%s: missing\n", names[i]);
            continue;
        }
        FILE* in = fopen(path, "rb");
        uint32_t hash = 2166136261u;
        for (int c; (c = fgetc(in)) != EOF;)
            hash = (hash ^ (uint32_t)c) * 16777619u;
        fclose(in);
        printf("%s: %lld bytes, mode %o, fnv1a %08x\n", names[i], (long long)info.st_size,
               (unsigned)(info.st_mode & 07777), hash);
    }
    printf("%d evaluations\n", evaluations);
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    umask(022);
    in_declaration();
    in_condition();
    in_assignment_and_macros();
    at_and_large_file();
    streams();
    failures_keep_errno();
    unannotated();
    summary();
    return 0;
}
