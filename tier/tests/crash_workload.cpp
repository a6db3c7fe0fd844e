#include "crash_workload.hpp"

#include <fcntl.h>
#include <random>

namespace iosig::tier::test_support {
namespace {

// Version v of byte `offset`: injective in v (< 251) for a fixed offset; never 0 (= never written).
unsigned char value_of(unsigned v, std::size_t offset) {
    return static_cast<unsigned char>((v * 131 + offset * 7) % 251 + 1);
}

// One home file's two handles and the version each of its bytes holds now.
struct OpenFile {
    int handle = -1;
    int second = -1; // open throughout, also while `handle` is closed and reopened (or `handle`)
    std::vector<std::optional<unsigned>> latest =
        std::vector<std::optional<unsigned>>(crash_file_bytes);
};

} // namespace

unsigned char Outcome::value(unsigned v, std::size_t offset) const {
    return cuts.contains(v) ? 0 : value_of(v, offset);
}

std::vector<std::filesystem::path> crash_home_files(const std::filesystem::path& dir,
                                                    std::size_t count) {
    if (count == 1) return {dir / "home.dat"};
    std::vector<std::filesystem::path> homes;
    for (std::size_t f = 0; f < count; ++f)
        homes.push_back(dir / ("home-" + std::to_string(f) + ".dat"));
    return homes;
}

Outcome run_crash_workload(TierCache& tier, const std::vector<std::filesystem::path>& homes,
                           std::uint64_t seed, bool crash_before_close, Handles handles) {
    const bool reopen = handles == Handles::one_reopened_after_each_fsync;
    Outcome out(homes.size());
    std::mt19937_64 rng(seed);
    // The file of each operation comes from a generator of its own, so that one file's workload
    // is the same as before files were picked.
    std::mt19937_64 file_picker(seed ^ 0x9e3779b97f4a7c15ull);
    std::vector<OpenFile> open(homes.size());
    for (std::size_t f = 0; f < homes.size(); ++f) {
        open[f].handle = tier.open_file(homes[f], O_RDWR | O_CREAT);
        open[f].second =
            open[f].handle < 0 || reopen ? open[f].handle : tier.open_file(homes[f], O_RDWR);
        if (open[f].handle < 0 || open[f].second < 0) {
            out.any_failure = true;
            return out;
        }
    }
    // With a crash to come, the last fsync (op 160) is left out, so that the last seven writes are
    // not yet home.
    const unsigned last_op = crash_before_close ? 159 : 160;
    for (unsigned op = 1; op <= last_op; ++op) {
        if (op % 8 == 4) {
            if (tier.commit() < 0) out.any_failure = true;
            continue;
        }
        const std::size_t f = homes.size() == 1 ? 0 : file_picker() % homes.size();
        OpenFile& file = open[f];
        FileOutcome& written = out.files[f];
        if (op % 8 == 0) {
            const int e = tier.fsync(file.handle);
            if (e == 0) written.acked = file.latest;
            if (e < 0) out.any_failure = true;
            if (reopen) {
                if (tier.close(file.handle) < 0) out.any_failure = true;
                file.handle = file.second = tier.open_file(homes[f], O_RDWR);
                if (file.handle < 0) return out;
            }
            continue;
        }
        if (op % 19 == 0) {
            const std::size_t length = rng() % crash_file_bytes;
            out.cuts.insert(op);
            ++out.truncates;
            for (std::size_t b = length; b < crash_file_bytes; ++b)
                written.versions[b].push_back(op);
            if (tier.ftruncate(file.handle, static_cast<off_t>(length)) == 0) {
                for (std::size_t b = length; b < crash_file_bytes; ++b)
                    file.latest[b] = op;
            } else {
                out.any_failure = true;
            }
            continue;
        }
        if (op == 77) {
            if (tier.close(file.handle) < 0) out.any_failure = true;
            file.handle = tier.open_file(homes[f], O_RDWR);
            if (reopen) file.second = file.handle;
            if (file.handle < 0) return out;
            continue;
        }
        const unsigned v = op; // < 251
        const std::size_t len = 1 + rng() % 6000;
        std::size_t off = rng() % (crash_file_bytes - len);
        // Every 13th write is an append (TierCache::append, at the engine's end of the file),
        // where the file leaves room for it.
        const bool append = op % 13 == 0;
        if (append) {
            const off_t end = tier.file_size(file.handle);
            if (end < 0 || static_cast<std::size_t>(end) + len > crash_file_bytes) continue;
            off = static_cast<std::size_t>(end);
            ++out.appends;
        }
        std::vector<unsigned char> data(len);
        for (std::size_t i = 0; i < len; ++i)
            data[i] = value_of(v, off + i);
        for (std::size_t i = 0; i < len; ++i)
            written.versions[off + i].push_back(v);
        const int through = op % 3 == 0 ? file.second : file.handle;
        const ssize_t n = append ? tier.append(through, data.data(), len)
                                 : tier.pwrite(through, data.data(), len, static_cast<off_t>(off));
        if (n == static_cast<ssize_t>(len)) {
            for (std::size_t i = 0; i < len; ++i)
                file.latest[off + i] = v;
        } else {
            out.any_failure = true;
        }
    }
    if (!crash_before_close) {
        for (const OpenFile& file : open) {
            tier.close(file.handle);
            if (file.second != file.handle) tier.close(file.second);
        }
    }
    return out;
}

std::string check_crash_outcome(const std::vector<char>& content, const Outcome& outcome,
                                std::size_t file) {
    const FileOutcome& written = outcome.files[file];
    for (std::size_t b = 0; b < crash_file_bytes; ++b) {
        const auto got = b < content.size() ? static_cast<unsigned char>(content[b]) : 0;
        const std::optional<unsigned> acked = written.acked[b];
        bool allowed = got == 0 && !acked; // never written, or nothing durable yet
        for (const unsigned v : written.versions[b])
            if (outcome.value(v, b) == got && (!acked || v >= *acked)) allowed = true;
        if (allowed) continue;
        if (got == 0)
            return "byte " + std::to_string(b) + ": acknowledged version " +
                   std::to_string(*acked) + " lost";
        return "byte " + std::to_string(b) + ": value " + std::to_string(got) +
               " is stale or was never written there" +
               (acked ? " (acknowledged version " + std::to_string(*acked) + ")" : "");
    }
    return "";
}

} // namespace iosig::tier::test_support
