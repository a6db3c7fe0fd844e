// Opening the engine (crash recovery first: recovery.cpp), shutdown and the file table
// (engine_impl.hpp).
#include "engine_impl.hpp"
#include "iosig/units.hpp"
#include "recovery.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <limits>
#include <set>
#include <unistd.h>

namespace iosig::tier {

std::unique_ptr<TierCache> TierCache::open(const TierConfig& config) {
    return std::make_unique<detail::Engine>(config);
}

std::uint64_t prefetch_buffer_lines(const TierConfig& config) {
    if (config.prefetch_lines) return config.prefetch_lines;
    const std::uint64_t lines = config.line_size ? config.cache_size / config.line_size : 0;
    const std::uint64_t window =
        fit_prefetch_window(config.prefetch_config, std::numeric_limits<std::uint64_t>::max(),
                            io_run_lines(config.io_run_bytes, config.line_size))
            .max_depth;
    return std::max<std::uint64_t>({4, lines / 32, window});
}

namespace detail {

Engine::Engine(const TierConfig& config) : config_(config), line_size_(config.line_size) {
    if (!engine_line_size(line_size_))
        throw TierError(
            fmt::format("line size {} is not a power of two between 4 KiB and 1 MiB", line_size_));
    lines_ = config.cache_size / line_size_;
    if (lines_ < 4)
        throw TierError(fmt::format("cache size {} holds fewer than 4 lines of {} bytes",
                                    config.cache_size, line_size_));
    if (lines_ >= (1ull << 31)) throw TierError("too many cache lines (at most 2^31)");
    if (config.cache_file.empty()) throw TierError("no cache file given");
    if (policy_is_offline(config.policy))
        throw TierError(fmt::format(
            "policy '{}' needs the future of the trace; the engine cannot use it", config.policy));
    PolicyConfig pc = config.policy_config;
    pc.capacity = lines_;
    pc.expected_entries = lines_;
    try {
        policy_ = make_policy(config.policy, pc);
        if (!config.prefetch.empty()) make_prefetcher(config.prefetch, config.prefetch_config);
    } catch (const std::invalid_argument& e) {
        throw TierError(e.what());
    }
    max_dirty_ =
        config.max_dirty_lines ? config.max_dirty_lines : std::max<std::uint64_t>(1, lines_ / 4);
    constexpr std::uint32_t key_file_ids = (std::uint32_t{1} << (64 - line_bits)) - 1;
    most_file_ids_ = config.file_ids > 0 ? std::min(config.file_ids, key_file_ids) : key_file_ids;

    try {
        journal_ = std::make_unique<Journal>(journal_path(config), config.faults);
    } catch (const std::runtime_error& e) {
        throw TierError(e.what());
    }
    recovery_ = write_home_after_crash(config, replay_or_refuse(*journal_), journal_->page_cache());

    int error = 0;
    cache_ = File::open(config.cache_file, O_RDWR | O_CREAT, 0600, FileRole::cache,
                        config.direct_io, config.faults, error);
    if (!cache_)
        throw TierError(fmt::format("{}: cannot open the cache file: {}",
                                    config.cache_file.string(), std::strerror(error)));
    if (const int e = cache_->ftruncate(static_cast<off_t>(lines_ * line_size_)); e < 0)
        throw TierError(fmt::format("{}: cannot size the cache file to {} bytes: {}",
                                    config.cache_file.string(), lines_ * line_size_,
                                    std::strerror(-e)));
    // Reserved now, so that a cache larger than its file system's free space (a sparse file on a
    // small tmpfs) fails here and not with ENOSPC in the middle of the caller's IO.
    if (const int e = cache_->reserve(static_cast<off_t>(lines_ * line_size_)); e < 0) {
        std::error_code unknown;
        throw TierError(fmt::format(
            "{}: cannot reserve {} for the cache on its file system ({} "
            "free): {}; give a smaller cache size",
            config.cache_file.string(), iosig::format_size(lines_ * line_size_),
            iosig::format_size(room_for(config.cache_file, unknown)), std::strerror(-e)));
    }
    if (const int e = journal_->reset(line_size_, lines_); e < 0)
        throw TierError(fmt::format("{}: cannot start the journal: {}",
                                    journal_path(config).string(), std::strerror(-e)));

    meta_.resize(lines_);
    // The index holds at most one key per line: made for all of them now, it never rehashes, so
    // no lookup waits behind a copy of the whole index in the middle of the first fill, and its
    // peak is its final size (not the old and the new table together).
    index_ = FlatMap(lines_);
    data_locks_ = std::make_unique<LineLock[]>(lines_);
    free_.reserve(lines_);
    for (std::uint64_t s = lines_; s-- > 0;)
        free_.push_back(static_cast<Slot>(s));
    // Write-back batches take up to a quarter of the pool, so fills always find buffers.
    staging_ = std::make_unique<StagingPool>(4 * std::max(4u, config.queue_depth), line_size_,
                                             config.numa_node);
    if (!config.prefetch.empty()) {
        prefetch_lines_ = prefetch_buffer_lines(config);
        prefetch_config_ = fit_prefetch_window(config.prefetch_config, prefetch_lines_,
                                               io_run_lines(config.io_run_bytes, line_size_));
        prefetch_pool_ =
            std::make_unique<StagingPool>(prefetch_lines_, line_size_, config.numa_node);
    }
    start();
}

void Engine::start() {
    if (!config_.faults && io_uring_queue_init(std::max(4u, config_.queue_depth), &ring_, 0) == 0)
        uring_ = true;
    flusher_ = std::thread([this] { flusher_loop(); });
    releaser_ = std::thread([this] { releaser_loop(); });
    if (prefetch_pool_) prefetcher_ = std::thread([this] { prefetch_loop(); });
}

void Engine::stop_threads() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    flusher_wake_.notify_all();
    changed_.notify_all();
    {
        std::lock_guard lock(prefetch_mutex_);
        prefetch_stopping_ = true;
    }
    prefetch_wake_.notify_all();
    {
        std::lock_guard lock(release_mutex_);
        releaser_stopping_ = true;
    }
    release_wake_.notify_all();
    if (flusher_.joinable()) flusher_.join();
    if (releaser_.joinable()) releaser_.join();
    if (prefetcher_.joinable()) prefetcher_.join();
}

Engine::~Engine() {
    if (!abandoned_) {
        stop_threads();
        // A clean shutdown leaves nothing dirty, so the next open has nothing to recover. If a line
        // cannot be written home, the journal still lists it and the next open retries.
        if (flush_all() == 0) {
            if (journal_->reset(line_size_, lines_) < 0) { /* the next open replays; harmless */
            }
        }
    }
    if (uring_) io_uring_queue_exit(&ring_);
    for (auto& [key, p] : prefetched_)
        prefetch_pool_->release(p.data);
}

void Engine::abandon() {
    stop_threads();
    abandoned_ = true;
}

double Engine::now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

TierStats Engine::stats() const {
    TierStats s;
    s.lines = lines_;
    s.line_size = line_size_;
    s.read_hits = read_hits_;
    s.read_misses = read_misses_;
    s.write_hits = write_hits_;
    s.write_misses = write_misses_;
    s.fills = fills_;
    s.fill_reads = fill_reads_;
    s.writeback_writes = writeback_writes_;
    s.writebacks = writebacks_;
    s.evictions = evictions_;
    s.bypassed_bytes = bypassed_;
    s.cache_refusals = cache_refusals_;
    s.prefetches_issued = prefetches_;
    s.prefetch_reads = prefetch_reads_;
    s.prefetch_hits = prefetch_hits_;
    s.journal_commits = journal_commits_;
    s.journal_rewrites = journal_rewrites_;
    s.longest_journal_rewrite_seconds = static_cast<double>(longest_rewrite_ns_.load()) * 1e-9;
    s.home_syncs = home_syncs_;
    s.writer_wait_seconds = static_cast<double>(writer_wait_ns_.load()) * 1e-9;
    {
        std::shared_lock files(files_mutex_);
        s.home_files = files_.size();
        s.file_ids_reused = file_ids_reused_;
    }
    {
        std::lock_guard lock(mutex_);
        s.dirty_lines = dirty_count_;
        s.slots_out_of_use = set_aside_.size();
    }
    s.numa_node = staging_->numa_placed() ? staging_->node() : -1;
    s.io_uring = uring_;
    return s;
}

} // namespace detail
} // namespace iosig::tier
