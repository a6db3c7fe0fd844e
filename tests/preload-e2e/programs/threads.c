/* 8 threads, each creating FILES files DIR/t<thread>-<n>.dat and writing BYTES to each,
 * concurrently. threads DIR FILES BYTES */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { THREADS = 8 };
static const char* directory;
static int files;
static size_t bytes;

static void* work(void* arg) {
    const long thread = (long)arg;
    char* buffer = malloc(bytes);
    for (int n = 0; n < files; ++n) {
        char path[4096];
        snprintf(path, sizeof path, "%s/t%ld-%d.dat", directory, thread, n);
        for (size_t i = 0; i < bytes; ++i)
            buffer[i] = (char)('a' + (thread * 7 + n + i) % 26);
        const int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0) {
            perror(path);
            exit(1);
        }
        for (size_t done = 0; done < bytes;) {
            const size_t n_write = bytes - done < 1000 ? bytes - done : 1000;
            const ssize_t w = write(fd, buffer + done, n_write);
            if (w <= 0) {
                perror("write");
                exit(1);
            }
            done += (size_t)w;
        }
        close(fd);
    }
    free(buffer);
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 4) return 2;
    directory = argv[1];
    files = atoi(argv[2]);
    bytes = strtoul(argv[3], 0, 10);
    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; ++t)
        pthread_create(&threads[t], 0, work, (void*)t);
    for (int t = 0; t < THREADS; ++t)
        pthread_join(threads[t], 0);
    return 0;
}
