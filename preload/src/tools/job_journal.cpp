#include "job_journal.hpp"

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace iosig::preload {

Redirection* JobJournal::find(std::string_view staged) {
    for (auto it = redirections.rbegin(); it != redirections.rend(); ++it)
        if (it->staged == staged) return &*it;
    return nullptr;
}

JobJournal interpret_journal(const JournalContents& contents) {
    JobJournal journal;
    journal.exists = true;
    journal.damaged_lines = contents.damaged_lines;
    for (const JournalRecord& record : contents.records) {
        switch (record.type) {
        case RecordType::redirect: {
            Redirection r;
            r.staged = record.at(0);
            r.original = r.current = record.at(1);
            r.mount = record.at(2);
            r.persistence = record.at(3);
            r.global = record.at(4) == "1";
            r.keep_global = record.at(5) == "1";
            r.source = record.at(6);
            r.signature = record.at(7);
            r.why = record.at(8);
            r.rule = record.at(9);
            r.rule_where = record.at(10);
            r.run = record.run;
            r.pid = record.pid;
            r.time_ns = record.time_ns;
            journal.redirections.push_back(std::move(r));
            break;
        }
        case RecordType::moved:
            if (auto* r = journal.find(record.at(0))) r->current = record.at(1);
            break;
        case RecordType::deleted:
            if (auto* r = journal.find(record.at(0))) r->deleted = true;
            break;
        case RecordType::abandoned:
            if (auto* r = journal.find(record.at(0))) r->abandoned = true;
            break;
        case RecordType::migrated:
            if (auto* r = journal.find(record.at(0))) {
                r->migrated = true;
                r->current = record.at(1);
            }
            break;
        case RecordType::finalized:
            if (auto* r = journal.find(record.at(0))) r->finalized = record.at(1);
            break;
        case RecordType::run_begin: {
            RunRecord run;
            run.run = record.run;
            run.begin_ns = record.time_ns;
            run.command = record.at(0);
            journal.runs.push_back(std::move(run));
            break;
        }
        case RecordType::run_end:
            for (auto& run : journal.runs)
                if (run.run == record.run) {
                    run.end_ns = record.time_ns;
                    try {
                        run.exit_status = std::stoi(record.at(0));
                    } catch (...) {
                    }
                }
            break;
        }
    }
    return journal;
}

JobJournal read_job_journal(const std::filesystem::path& journal) {
    std::ifstream in(journal, std::ios::binary);
    if (!in) return {};
    std::ostringstream text;
    text << in.rdbuf();
    return interpret_journal(parse_journal(text.str()));
}

bool append_journal_record(const std::filesystem::path& journal, RecordType type,
                           const std::string& run, const std::vector<std::string>& fields) {
    std::size_t capacity = 256 + run.size() * 3;
    for (const auto& f : fields)
        capacity += f.size() * 3 + 1;
    std::string buffer(capacity, '\0');
    RecordWriter writer(buffer.data(), buffer.size());
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    writer.begin(type, now, getpid(), run);
    for (const auto& f : fields)
        writer.field(f);
    if (!writer.finish()) {
        errno = ENAMETOOLONG;
        return false;
    }
    const int fd =
        open(journal.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return false;
    const auto text = writer.text();
    std::size_t done = 0;
    bool ok = true;
    while (done < text.size()) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ok = false;
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    ok = ok && fdatasync(fd) == 0;
    const int saved = errno;
    close(fd);
    errno = saved;
    return ok;
}

} // namespace iosig::preload
