// CAWL Alg. 2 (Lib_IO_Cost), following glibc's _IO_new_file_xsputn: a stream that has not written
// since it was opened or repositioned has no buffer space yet, so its first fwrite sends whole
// buffer-sized blocks straight to write() and buffers only the rest.
#include "iosig/cachesim/stdio_model.hpp"

#include <algorithm>

namespace iosig::cachesim {

StdioWriteModel::StdioWriteModel(const ModelParameters& p, const InitialState& initial)
    : p_(p), kernel_(p, initial), now_(initial.time) {}

double StdioWriteModel::copy_cost(std::uint64_t bytes) const {
    return p_.memory_bw > 0 ? static_cast<double>(bytes) / p_.memory_bw : 0.0;
}

WriteCost StdioWriteModel::syscall(std::uint64_t offset, std::uint64_t size) {
    // The kernel model has been idle since its last call; everything since is its delay.
    WriteCost c = kernel_.write(file_, offset, size, now_ - kernel_.now());
    now_ = kernel_.now();
    return c;
}

void StdioWriteModel::account(StdioCost& out, double seconds) {
    now_ += seconds;
    out.cost += seconds;
}

void StdioWriteModel::account(StdioCost& out, const WriteCost& c) {
    out.cost += c.cost;
    out.pause += c.pause;
    out.paced += c.paced;
    out.syscalls += 1;
    out.state = std::max(out.state, c.state);
}

StdioCost StdioWriteModel::write(FileId file, std::uint64_t offset, std::uint64_t size,
                                 double delay) {
    StdioCost out;
    now_ += delay;
    out.start = now_;
    account(out, p_.stdio_call_base);

    // A different position (fseek) or stream writes out what is buffered and drops put mode.
    if (offset != buffer_offset_ + buffered_ || file != file_) {
        if (buffered_ > 0) account(out, syscall(buffer_offset_, buffered_));
        buffered_ = 0;
        put_mode_ = false;
    }
    file_ = file;
    if (buffered_ == 0) buffer_offset_ = offset;

    const std::uint64_t capacity = p_.stdio_buffer_size;
    const std::uint64_t space = put_mode_ ? capacity - buffered_ : 0;
    if (size <= space) {
        account(out, copy_cost(size));
        buffered_ += size;
        return out;
    }
    // Top up the buffer and write it out (nothing to write on a fresh stream).
    account(out, copy_cost(space));
    if (buffered_ + space > 0) account(out, syscall(buffer_offset_, buffered_ + space));
    put_mode_ = true;
    // Whole buffer-sized blocks of the rest bypass the buffer in one write(); glibc does not keep
    // that alignment for buffers smaller than 128 bytes.
    const std::uint64_t rest = size - space;
    const std::uint64_t tail = capacity >= 128 ? rest % capacity : 0;
    const std::uint64_t bypass = rest - tail;
    if (bypass > 0) account(out, syscall(offset + space, bypass));
    account(out, copy_cost(tail));
    buffered_ = tail;
    buffer_offset_ = offset + space + bypass;
    return out;
}

double StdioWriteModel::flush() {
    if (buffered_ == 0) return 0;
    const WriteCost c = syscall(buffer_offset_, buffered_);
    buffer_offset_ += buffered_;
    buffered_ = 0;
    return c.cost;
}

} // namespace iosig::cachesim
