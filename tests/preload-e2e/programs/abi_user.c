/* Uses the runtime ABI as code rewritten by the Clang plugin does: weak references, with the plain
 * call as the fallback when no runtime is present.
 *   abi_user SIGNATURE PATH BYTES */
#include "iosig/runtime.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma weak iosig_open
#pragma weak iosig_fopen
#pragma weak iosig_runtime_active

int main(int argc, char** argv) {
    if (argc != 4) return 2;
    const size_t bytes = strtoul(argv[3], 0, 10);
    char* buffer = malloc(bytes);
    memset(buffer, 'x', bytes);
    const int active = iosig_runtime_active ? iosig_runtime_active() : 0;
    const int fd = iosig_open ? iosig_open(argv[1], argv[2], O_CREAT | O_WRONLY | O_TRUNC, 0644)
                              : open(argv[2], O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) {
        perror("iosig_open");
        return 1;
    }
    if (write(fd, buffer, bytes) != (ssize_t)bytes) return 1;
    close(fd);
    char second[4096];
    snprintf(second, sizeof second, "%s.stdio", argv[2]);
    FILE* stream = iosig_fopen ? iosig_fopen(argv[1], second, "w") : fopen(second, "w");
    if (!stream) {
        perror("iosig_fopen");
        return 1;
    }
    fwrite(buffer, 1, bytes, stream);
    fclose(stream);
    printf("active=%d\n", active);
    free(buffer);
    return 0;
}
