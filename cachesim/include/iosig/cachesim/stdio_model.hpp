// CAWL Alg. 2, Lib_IO_Cost: fwrite() through the C library's user-space buffer on top of Alg. 1.
//
// As glibc does: data that fits goes into the buffer (memcpy); otherwise the buffer is topped up
// and written with one write(), whole buffer-sized blocks of the rest bypass the buffer in a second
// write(), and the remainder is buffered. A write that does not continue where the buffered data
// ends (an fseek) first writes the buffer out.
#pragma once

#include "iosig/cachesim/syscall_model.hpp"

#include <cstdint>

namespace iosig::cachesim {

struct StdioCost {
    double start = 0;                        // simulated time the call starts (after its delay)
    double cost = 0;                         // seconds fwrite (plus the fseek it implies) takes
    double pause = 0;                        // seconds of it the kernel paused the write() calls
    double paced = 0;                        // the paced part of `pause` (WriteCost::paced)
    int syscalls = 0;                        // write() calls it made
    CacheState state = CacheState::no_flush; // most restrictive state of those calls
};

class StdioWriteModel {
public:
    StdioWriteModel(const ModelParameters& p, const InitialState& initial = {});

    // Alg. 2: `delay` seconds of computation, then fwrite of `size` bytes at `offset` of `file`.
    StdioCost write(FileId file, std::uint64_t offset, std::uint64_t size, double delay);

    // fflush(): writes the buffered bytes out. Returns its cost.
    double flush();

    std::uint64_t buffered_bytes() const { return buffered_; }
    double now() const { return now_; }
    SyscallWriteModel& kernel() { return kernel_; }
    const SyscallWriteModel& kernel() const { return kernel_; }

private:
    double copy_cost(std::uint64_t bytes) const;
    WriteCost syscall(std::uint64_t offset, std::uint64_t size);
    void account(StdioCost& out, double seconds);
    void account(StdioCost& out, const WriteCost& syscall_cost);

    ModelParameters p_;
    SyscallWriteModel kernel_;
    double now_ = 0; // the program's clock; the kernel model catches up at write()
    FileId file_ = 0;
    std::uint64_t buffer_offset_ = 0; // file offset of the buffered bytes
    std::uint64_t buffered_ = 0;
    bool put_mode_ = false; // glibc: buffer space is available only in put mode
};

} // namespace iosig::cachesim
