#include "journal.hpp"

#include "io_util.hpp"
#include "log.hpp"
#include "real.h"
#include "stats.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace iosig::shim {

bool journal_append(Process& p, preload::RecordType type,
                    std::initializer_list<std::string_view> fields) {
    std::size_t capacity = 256 + p.run.size() * 3;
    for (auto f : fields)
        capacity += f.size() * 3 + 1;
    std::string buffer(capacity, '\0');
    preload::RecordWriter writer(buffer.data(), buffer.size());
    writer.begin(type, realtime_ns(), getpid(), p.run);
    for (auto f : fields)
        writer.field(f);
    if (!writer.finish()) return false;

    if (!make_directories(p.layout.job_dir.c_str(), 0700)) {
        warn(Cause::journal, "cannot create the state directory %s (%s): not redirecting",
             p.layout.job_dir.c_str(), std::strerror(errno));
        return false;
    }
    bool created = true;
    int fd = internal_open(p.layout.journal.c_str(),
                           O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd < 0 && errno == EEXIST) {
        created = false;
        fd = internal_open(p.layout.journal.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW);
    }
    if (fd < 0) {
        warn(Cause::journal, "cannot open the journal %s (%s): not redirecting",
             p.layout.journal.c_str(), std::strerror(errno));
        return false;
    }
    const std::string_view text = writer.text();
    bool ok = write_all(fd, text.data(), text.size()) && IOSIG_REAL(fdatasync)(fd) == 0;
    const int saved = errno;
    internal_close(fd);
    if (ok && created) {
        // The journal's own directory entry must survive a crash too.
        const int dir = internal_open(p.layout.job_dir.c_str(), O_RDONLY | O_DIRECTORY);
        if (dir >= 0) {
            IOSIG_REAL(fsync)(dir);
            internal_close(dir);
        }
    }
    if (!ok)
        warn(Cause::journal, "cannot write the journal %s (%s): not redirecting",
             p.layout.journal.c_str(), std::strerror(saved));
    return ok;
}

} // namespace iosig::shim
