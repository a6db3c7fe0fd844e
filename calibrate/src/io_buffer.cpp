#include "io_buffer.hpp"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <numa.h>
#include <sys/mman.h>
#include <unistd.h>

namespace iosig::calibrate {
namespace {
constexpr std::size_t huge_page = 2 << 20;
const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

std::size_t round_up(std::size_t n, std::size_t to) {
    return (n + to - 1) / to * to;
}
} // namespace

IoBuffer::IoBuffer(std::size_t bytes, int numa_node, Pages pages) {
    size_ = round_up(bytes, page);
    // A huge page needs a 2 MiB aligned range: map one more and start at the first boundary.
    const std::size_t align = pages == Pages::huge ? huge_page : page;
    mapping_size_ = size_ + (align > page ? align : 0);
    void* p =
        mmap(nullptr, mapping_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    mapping_ = static_cast<std::byte*>(p);
    data_ =
        reinterpret_cast<std::byte*>(round_up(reinterpret_cast<std::uintptr_t>(mapping_), align));
    // Advice only: with transparent huge pages disabled ("never") the buffer keeps 4 KiB pages.
    if (pages == Pages::huge) madvise(data_, size_, MADV_HUGEPAGE);
    if (numa_available() >= 0) {
        if (numa_node >= 0)
            numa_tonode_memory(data_, size_, numa_node);
        else
            numa_setlocal_memory(data_, size_);
    }
    std::memset(data_, 0, size_); // fault every page in now, not during a timed IO
}

IoBuffer::~IoBuffer() {
    munmap(mapping_, mapping_size_);
}

std::optional<double> IoBuffer::contiguous_share() const {
    const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    const std::size_t first = reinterpret_cast<std::uintptr_t>(data_) / page;
    const std::size_t count = size_ / page;
    std::uint64_t previous = 0;
    std::size_t continued = 0;
    bool readable = true;
    for (std::size_t i = 0; i < count && readable; ++i) {
        std::uint64_t entry = 0;
        readable = pread(fd, &entry, sizeof entry, static_cast<off_t>((first + i) * 8)) == 8;
        const std::uint64_t frame = entry & ((1ULL << 55) - 1); // zero without CAP_SYS_ADMIN
        readable = readable && frame != 0;
        if (i > 0 && frame == previous + 1) ++continued;
        previous = frame;
    }
    close(fd);
    if (!readable || count < 2) return std::nullopt;
    return static_cast<double>(continued) / static_cast<double>(count - 1);
}

void IoBuffer::fill_random(std::uint64_t seed) {
    Random r(seed);
    for (std::size_t i = 0; i + 8 <= size_; i += 8) {
        const std::uint64_t v = r.next();
        std::memcpy(data_ + i, &v, 8);
    }
}

void IoBuffer::scramble(std::size_t offset, std::size_t bytes, std::uint64_t salt) {
    const std::size_t end = std::min(offset + bytes, size_);
    for (std::size_t i = offset; i + 8 <= end; i += 512) {
        const std::uint64_t v = salt * 0x9e3779b97f4a7c15ull + i;
        std::memcpy(data_ + i, &v, 8);
    }
}

void run_on_numa_node(int numa_node) {
    if (numa_available() < 0) return;
    numa_run_on_node(numa_node < 0 ? -1 : numa_node); // -1: every node again
}

} // namespace iosig::calibrate
