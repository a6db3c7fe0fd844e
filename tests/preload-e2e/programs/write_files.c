/* Writes a file through one of libc's APIs, with deterministic contents, for the end-to-end tests.
 * Built three times: plain, -O2 -D_FORTIFY_SOURCE=2 (calls __open_2, __fprintf_chk, ...) and
 * -D_FILE_OFFSET_BITS=64 (calls open64, fopen64, pwrite64, ...).
 *
 *   write_files API PATH BYTES [CHUNK]
 *   API: open creat openat fopen fprintf pwrite random writev mkstemp append reopen fseek
 *   (random: pwrite of CHUNK-sized blocks in a scrambled order; fseek: fwrite of CHUNK-sized blocks
 *   that, half way, seeks back to rewrite the first block, then seeks back to where it was)
 * Byte i of the file is (i * 131 + 7) % 251, whatever the API. */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static unsigned char byte_at(unsigned long i) {
    return (unsigned char)((i * 131 + 7) % 251);
}

static void fill(unsigned char* buffer, unsigned long offset, size_t n) {
    for (size_t i = 0; i < n; ++i)
        buffer[i] = byte_at(offset + i);
}

static int fail(const char* what) {
    perror(what);
    return 1;
}

static int write_fd(int fd, unsigned long total, size_t chunk, int use_pwrite, int use_writev) {
    unsigned char* buffer = malloc(chunk);
    const unsigned long blocks = (total + chunk - 1) / chunk;
    for (unsigned long k = 0; k < blocks; ++k) {
        /* use_pwrite == 2: block k goes to (k * 7919) mod blocks, a permutation when blocks is not
         * a multiple of 7919 */
        const unsigned long offset = (use_pwrite == 2 ? (k * 7919) % blocks : k) * chunk;
        const size_t n = total - offset < chunk ? total - offset : chunk;
        fill(buffer, offset, n);
        ssize_t w;
        if (use_pwrite) {
            w = pwrite(fd, buffer, n, (off_t)offset);
        } else if (use_writev) {
            struct iovec iov[2] = {{buffer, n / 2}, {buffer + n / 2, n - n / 2}};
            w = writev(fd, iov, 2);
        } else {
            w = write(fd, buffer, n);
        }
        if (w != (ssize_t)n) {
            free(buffer);
            return fail("write");
        }
    }
    free(buffer);
    if (fsync(fd) != 0) return fail("fsync");
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s API PATH BYTES [CHUNK]\n", argv[0]);
        return 2;
    }
    const char* api = argv[1];
    const char* path = argv[2];
    const unsigned long total = strtoul(argv[3], 0, 10);
    const size_t chunk = argc > 4 ? strtoul(argv[4], 0, 10) : 4096;
    int fd = -1;
    if (strcmp(api, "open") == 0 || strcmp(api, "pwrite") == 0 || strcmp(api, "random") == 0 ||
        strcmp(api, "writev") == 0) {
        fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    } else if (strcmp(api, "creat") == 0) {
        fd = creat(path, 0644);
    } else if (strcmp(api, "openat") == 0) {
        char copy[4096];
        snprintf(copy, sizeof copy, "%s", path);
        const int dir = open(dirname(copy), O_RDONLY | O_DIRECTORY);
        snprintf(copy, sizeof copy, "%s", path);
        fd = openat(dir, basename(copy), O_CREAT | O_EXCL | O_RDWR, 0640);
        close(dir);
    } else if (strcmp(api, "append") == 0) {
        /* Creates the file, then reopens it for appending with a two-argument open (fortified:
         * __open_2) and appends in two halves. */
        fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0) return fail("open");
        close(fd);
        int flags = O_WRONLY;
        if (argc > 5) flags |= atoi(argv[5]);
        fd = open(path, flags | O_APPEND);
    } else if (strcmp(api, "mkstemp") == 0) {
        char name[4096];
        snprintf(name, sizeof name, "%sXXXXXX", path);
        fd = mkstemp(name);
        if (fd >= 0) {
            const int status = write_fd(fd, total, chunk, 0, 0);
            close(fd);
            if (status != 0) return status;
            if (rename(name, path) != 0) return fail("rename");
            return 0;
        }
    } else if (strcmp(api, "fseek") == 0) {
        FILE* stream = fopen(path, "w");
        if (!stream) return fail("fopen");
        unsigned char* buffer = malloc(chunk);
        const unsigned long chunks = (total + chunk - 1) / chunk;
        for (unsigned long index = 0; index < chunks; ++index) {
            const unsigned long offset = index * chunk;
            if (index == chunks / 2) {
                const size_t first = total < chunk ? total : chunk;
                fill(buffer, 0, first);
                if (fseek(stream, 0, SEEK_SET) != 0 || fwrite(buffer, 1, first, stream) != first ||
                    fseek(stream, (long)offset, SEEK_SET) != 0)
                    return fail("rewrite");
            }
            const size_t n = total - offset < chunk ? total - offset : chunk;
            fill(buffer, offset, n);
            if (fwrite(buffer, 1, n, stream) != n) return fail("fwrite");
        }
        free(buffer);
        return fclose(stream) == 0 ? 0 : fail("fclose");
    } else if (strcmp(api, "fopen") == 0 || strcmp(api, "fprintf") == 0 ||
               strcmp(api, "reopen") == 0) {
        FILE* stream = strcmp(api, "reopen") == 0 ? freopen(path, "w", stdout) : fopen(path, "w");
        if (!stream) return fail("fopen");
        unsigned char* buffer = malloc(chunk);
        for (unsigned long offset = 0; offset < total; offset += chunk) {
            const size_t n = total - offset < chunk ? total - offset : chunk;
            fill(buffer, offset, n);
            if (strcmp(api, "fprintf") == 0) {
                for (size_t i = 0; i < n; ++i)
                    if (fprintf(stream, "%c", buffer[i]) != 1) return fail("fprintf");
            } else if (fwrite(buffer, 1, n, stream) != n) {
                return fail("fwrite");
            }
        }
        free(buffer);
        if (fflush(stream) != 0 || fsync(fileno(stream)) != 0) return fail("flush");
        return fclose(stream) == 0 ? 0 : fail("fclose");
    } else {
        fprintf(stderr, "unknown API %s\n", api);
        return 2;
    }
    if (fd < 0) return fail("open");
    const int pwrite_mode = strcmp(api, "pwrite") == 0 ? 1 : strcmp(api, "random") == 0 ? 2 : 0;
    const int status = write_fd(fd, total, chunk, pwrite_mode, strcmp(api, "writev") == 0);
    if (close(fd) != 0) return fail("close");
    return status;
}
