/* stdio output. glibc's stdio reaches the kernel through internal calls that no preload can see, so
 * the stream functions are wrapped themselves and counted at the API: bytes handed to stdio. The
 * printf family is re-expressed through the real v*printf functions, exactly as glibc defines it.
 */
/* No extern-inline or macro versions of the unlocked functions: this file defines them. */
#ifndef __NO_INLINE__
#define __NO_INLINE__ 1
#endif
#include "real.h"
#include "shim.h"

#include <string.h>

#define IOSIG_COUNT_STDIO(file, bytes, started) iosig_count_stdio(file, (uint64_t)(bytes), started)

/* fwrite and fwrite_unlocked: wrap_fwrite.cpp (their counting is inline there). */

#define IOSIG_STRING_OUT(name, params, call, stream, text, extra)                                  \
    IOSIG_EXPORT int name params {                                                                 \
        struct iosig_file* file = iosig_tracked_stream(stream);                                    \
        if (IOSIG_LIKELY(file == 0)) return IOSIG_REAL(name) call;                                 \
        const uint64_t started = iosig_stdio_clock_sample();                                       \
        const int result = IOSIG_REAL(name) call;                                                  \
        if (result >= 0) IOSIG_COUNT_STDIO(file, strlen(text) + (extra), started);                 \
        return result;                                                                             \
    }
IOSIG_STRING_OUT(fputs, (const char* text, FILE* stream), (text, stream), stream, text, 0)
IOSIG_STRING_OUT(fputs_unlocked, (const char* text, FILE* stream), (text, stream), stream, text, 0)
IOSIG_STRING_OUT(puts, (const char* text), (text), stdout, text, 1)

#define IOSIG_CHAR_OUT(name, params, call, stream)                                                 \
    IOSIG_EXPORT int name params {                                                                 \
        struct iosig_file* file = iosig_tracked_stream(stream);                                    \
        if (IOSIG_LIKELY(file == 0)) return IOSIG_REAL(name) call;                                 \
        const uint64_t started = iosig_stdio_clock_sample();                                       \
        const int result = IOSIG_REAL(name) call;                                                  \
        if (result != EOF) IOSIG_COUNT_STDIO(file, 1, started);                                    \
        return result;                                                                             \
    }
IOSIG_CHAR_OUT(fputc, (int c, FILE* stream), (c, stream), stream)
IOSIG_CHAR_OUT(fputc_unlocked, (int c, FILE* stream), (c, stream), stream)
IOSIG_CHAR_OUT(putc, (int c, FILE* stream), (c, stream), stream)
IOSIG_CHAR_OUT(putc_unlocked, (int c, FILE* stream), (c, stream), stream)
IOSIG_CHAR_OUT(_IO_putc, (int c, FILE* stream), (c, stream), stream)
IOSIG_CHAR_OUT(putchar, (int c), (c), stdout)
IOSIG_CHAR_OUT(putchar_unlocked, (int c), (c), stdout)

/* v*printf: `file` may be 0; the count is of the bytes the call reports. */
#define IOSIG_VPRINTF_BODY(file, real_call)                                                        \
    if (IOSIG_LIKELY(file == 0)) return real_call;                                                 \
    const uint64_t started = iosig_stdio_clock_sample();                                           \
    const int result = real_call;                                                                  \
    if (result >= 0) IOSIG_COUNT_STDIO(file, result, started);                                     \
    return result;

#define IOSIG_VPRINTF(name, params, call, stream_file)                                             \
    static int do_##name params {                                                                  \
        struct iosig_file* file = stream_file;                                                     \
        IOSIG_VPRINTF_BODY(file, IOSIG_REAL(name) call)                                            \
    }                                                                                              \
    IOSIG_EXPORT int name params {                                                                 \
        return do_##name call;                                                                     \
    }
IOSIG_VPRINTF(vfprintf, (FILE * stream, const char* format, va_list args), (stream, format, args),
              iosig_tracked_stream(stream))
IOSIG_VPRINTF(__vfprintf_chk, (FILE * stream, int flag, const char* format, va_list args),
              (stream, flag, format, args), iosig_tracked_stream(stream))
IOSIG_VPRINTF(vprintf, (const char* format, va_list args), (format, args),
              iosig_tracked_stream(stdout))
IOSIG_VPRINTF(__vprintf_chk, (int flag, const char* format, va_list args), (flag, format, args),
              iosig_tracked_stream(stdout))
IOSIG_VPRINTF(vdprintf, (int fd, const char* format, va_list args), (fd, format, args),
              iosig_tracked_fd(fd))
IOSIG_VPRINTF(__vdprintf_chk, (int fd, int flag, const char* format, va_list args),
              (fd, flag, format, args), iosig_tracked_fd(fd))

#define IOSIG_VARIADIC(decl, last, call)                                                           \
    IOSIG_EXPORT int decl {                                                                        \
        va_list args;                                                                              \
        va_start(args, last);                                                                      \
        const int result = call;                                                                   \
        va_end(args);                                                                              \
        return result;                                                                             \
    }
IOSIG_VARIADIC(fprintf(FILE* stream, const char* format, ...), format,
               do_vfprintf(stream, format, args))
IOSIG_VARIADIC(__fprintf_chk(FILE* stream, int flag, const char* format, ...), format,
               do___vfprintf_chk(stream, flag, format, args))
IOSIG_VARIADIC(printf(const char* format, ...), format, do_vprintf(format, args))
IOSIG_VARIADIC(__printf_chk(int flag, const char* format, ...), format,
               do___vprintf_chk(flag, format, args))
IOSIG_VARIADIC(dprintf(int fd, const char* format, ...), format, do_vdprintf(fd, format, args))
IOSIG_VARIADIC(__dprintf_chk(int fd, int flag, const char* format, ...), format,
               do___vdprintf_chk(fd, flag, format, args))

/* Flushing is where a buffered stream's bytes reach the file: its time counts, not its bytes. */
#define IOSIG_FLUSH(name)                                                                          \
    IOSIG_EXPORT int name(FILE* stream) {                                                          \
        struct iosig_file* file = iosig_tracked_stream(stream);                                    \
        if (IOSIG_LIKELY(file == 0)) return IOSIG_REAL(name)(stream);                              \
        const uint64_t started = iosig_clock_now();                                                \
        const int result = IOSIG_REAL(name)(stream);                                               \
        iosig_count_time(file, started);                                                           \
        return result;                                                                             \
    }
IOSIG_FLUSH(fflush)
IOSIG_FLUSH(fflush_unlocked)

/* Repositioning a stream makes its next write non-sequential (if it moved). */
#define IOSIG_STREAM_SEEK(ret, name, params, call, stream)                                         \
    IOSIG_EXPORT ret name params {                                                                 \
        struct iosig_file* file = iosig_tracked_stream(stream);                                    \
        if (IOSIG_LIKELY(file == 0)) return IOSIG_REAL(name) call;                                 \
        const ret result = IOSIG_REAL(name) call;                                                  \
        if (result == 0) iosig_note_stream_seek(file);                                             \
        return result;                                                                             \
    }
IOSIG_STREAM_SEEK(int, fseek, (FILE * stream, long offset, int whence), (stream, offset, whence),
                  stream)
IOSIG_STREAM_SEEK(int, fseeko, (FILE * stream, off_t offset, int whence), (stream, offset, whence),
                  stream)
IOSIG_STREAM_SEEK(int, fseeko64, (FILE * stream, off64_t offset, int whence),
                  (stream, offset, whence), stream)
IOSIG_STREAM_SEEK(int, fsetpos, (FILE * stream, const fpos_t* position), (stream, position), stream)
IOSIG_STREAM_SEEK(int, fsetpos64, (FILE * stream, const fpos64_t* position), (stream, position),
                  stream)

IOSIG_EXPORT void rewind(FILE* stream) {
    struct iosig_file* file = iosig_tracked_stream(stream);
    IOSIG_REAL(rewind)(stream);
    if (file) iosig_note_stream_seek(file);
}
