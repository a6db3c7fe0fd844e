// What a home file's reads through the kernel's page cache cost the home device: the model of the
// sequential bypass (TierConfig::sequential_cutoff), whose reads go to the page cache and reach
// the device as the kernel's readahead issues them, not as the program asked.
//
// PageCacheModel follows the on-demand readahead of mm/readahead.c for one open file, in its
// classic form (before large folios aligned the windows):
// - a read of uncached pages right after the previous read, or at the file's start, opens a
//   window: its size rounded up to a power of two, times 4 while that is at most 1/32 of the
//   maximum window, times 2 up to 1/4, else the maximum;
// - elsewhere, a read after uncached pages is read alone ("standalone, small random read");
// - reaching a window's marker (its first page past the request that opened it, and then the first
//   page of every later window) reads the next window ahead: 4 times the last below 1/16 of the
//   maximum, twice it up to 1/2, else the maximum;
// - nothing is read past the end of the file or twice, and every window goes to the device in IOs
//   of at most max_io_bytes (the queue's max_sectors_kb).
// Kernel 6.18 aligns windows to large folios; on the lab's hdd (2,560 KiB windows, 1,280 KiB IOs)
// a 15 MiB scan from an uncached start took 18 reads, this model says 17, and both read exactly the
// scanned bytes (docs/tier.md, "The sequential bypass in the model").
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>

namespace iosig::tier {

struct ReadaheadConfig {
    std::uint64_t window_bytes = 128 << 10;  // read_ahead_kb (the common default)
    std::uint64_t max_io_bytes = 1280 << 10; // max_sectors_kb (the common default)
    std::uint64_t page_bytes = 4096;
};

// The readahead of the block device holding `file` (which must exist), or of `file` itself when
// it is a block device node, from sysfs
// (/sys/dev/block/MAJ:MIN/queue/read_ahead_kb and max_sectors_kb, a partition's from its disk);
// `source` names the queue directory. nullopt for a file on no block device (tmpfs, NFS, FUSE).
struct DeviceReadahead {
    ReadaheadConfig config;
    std::string source;
};
std::optional<DeviceReadahead> readahead_of(const std::filesystem::path& file);

// Device reads: how many, and how many bytes in all.
struct HomeReads {
    std::uint64_t ios = 0;
    std::uint64_t bytes = 0;
};

// Pages in the page cache, as disjoint, non-adjacent ranges: a scan of any length is one range, and
// a trace's offsets may lie terabytes apart.
class CachedPages {
public:
    bool contains(std::uint64_t page) const;
    void insert(std::uint64_t first, std::uint64_t end); // pages [first, end)
    // Cached pages from `page` on (0 when it is not cached), at most `limit`.
    std::uint64_t run_from(std::uint64_t page, std::uint64_t limit) const;
    // Cached pages right before `page`, at most `limit`.
    std::uint64_t run_before(std::uint64_t page, std::uint64_t limit) const;
    // The first cached page after `page`; UINT64_MAX when there is none.
    std::uint64_t next_after(std::uint64_t page) const;
    // The ranges, first page -> end page, in page order.
    const std::map<std::uint64_t, std::uint64_t>& ranges() const { return ranges_; }
    void clear() { ranges_.clear(); }

private:
    std::map<std::uint64_t, std::uint64_t> ranges_; // first page -> end page
};

class PageCacheModel {
public:
    // One file of `file_size` bytes opened once, none of it in the page cache. Throws
    // std::invalid_argument for a zero page size or window, or an IO smaller than a page.
    PageCacheModel(ReadaheadConfig config, std::uint64_t file_size);

    // One read(2) of `bytes` at `offset` (clipped at the end of the file): what it makes the
    // kernel read from the device.
    HomeReads read(std::uint64_t offset, std::uint64_t bytes);

    // One write(2) through the page cache: its pages are cached from now on (write-back is not
    // modelled).
    void write(std::uint64_t offset, std::uint64_t bytes);

    bool cached(std::uint64_t page) const { return cached_.contains(page); }

private:
    struct Window {
        std::uint64_t start = 0, size = 0, async_size = 0;
    };
    void sync_readahead(std::uint64_t index, std::uint64_t request_pages, HomeReads& reads);
    void async_readahead(std::uint64_t index, std::uint64_t request_pages, HomeReads& reads);
    // Reads the uncached pages of [start, start + pages) (clipped at the end), in IOs of at most
    // max_io pages, and marks the page `async_size` pages before the end for the next window.
    void issue(std::uint64_t start, std::uint64_t pages, std::uint64_t async_size,
               HomeReads& reads);
    std::uint64_t initial_window(std::uint64_t request_pages, std::uint64_t max) const;
    std::uint64_t next_window(std::uint64_t size, std::uint64_t max) const;

    ReadaheadConfig config_;
    std::uint64_t max_pages_, io_pages_, file_pages_;
    CachedPages cached_;
    Window window_;
    // Pages whose read starts the next window (the kernel's PG_readahead flags): one per window,
    // and a stream that stops leaves its marker behind.
    std::unordered_set<std::uint64_t> markers_;
    std::optional<std::uint64_t> prev_end_; // the byte the previous read ended at (prev_pos)
};

} // namespace iosig::tier
