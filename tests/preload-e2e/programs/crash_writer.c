/* Writes 64 KiB blocks to PATH with fsync after each, then records the count in PROGRESS (fsync'd),
 * forever or until BLOCKS blocks; the test kills it with SIGKILL midway.
 *   crash_writer PATH PROGRESS BLOCKS
 * Block k holds the byte (k % 251) repeated. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc != 4) return 2;
    const long blocks = atol(argv[3]);
    const int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    static char block[65536];
    for (long k = 0; k < blocks; ++k) {
        memset(block, (int)(k % 251), sizeof block);
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block || fsync(fd) != 0) {
            perror("write");
            return 1;
        }
        const int progress = open(argv[2], O_CREAT | O_WRONLY | O_TRUNC, 0644);
        dprintf(progress, "%ld\n", k + 1);
        fsync(progress);
        close(progress);
        usleep(2000);
    }
    pause();
    return 0;
}
