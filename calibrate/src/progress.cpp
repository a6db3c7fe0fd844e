#include "progress.hpp"

#include "measure.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace iosig::calibrate {

Progress::Progress(std::FILE* out, bool interactive, bool quiet)
    : out_(out), interactive_(interactive), quiet_(quiet) {}

void Progress::begin(const std::string& subject, const std::string& phase) {
    subject_ = subject;
    phase_ = phase;
    started_ = now_seconds();
    last_draw_ = 0;
    open_ = true;
    if (interactive_ && !quiet_) draw(0);
}

void Progress::update(double fraction) {
    if (!interactive_ || quiet_ || !open_) return;
    const double t = now_seconds();
    if (t - last_draw_ < 0.1) return;
    last_draw_ = t;
    draw(fraction);
}

void Progress::draw(double fraction) {
    constexpr int width = 24;
    const int filled = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * width);
    fmt::print(out_, "\r\033[K  {:<14.14} {:<12.12} [{}{}] {:3.0f}%", subject_, phase_,
               std::string(filled, '#'), std::string(width - filled, '.'),
               std::clamp(fraction, 0.0, 1.0) * 100);
    std::fflush(out_);
}

void Progress::end(const std::string& result) {
    if (quiet_ || !open_) return;
    open_ = false;
    const double seconds = now_seconds() - started_;
    if (interactive_)
        fmt::print(out_, "\r\033[K  {:<14.14} {:<12.12} {} ({:.1f} s)\n", subject_, phase_, result,
                   seconds);
    else
        fmt::print(out_, "iosig-calibrate: {}: {}: {} ({:.1f} s)\n", subject_, phase_, result,
                   seconds);
    std::fflush(out_);
}

void Progress::note(const std::string& line) {
    if (quiet_) return;
    if (interactive_ && open_) fmt::print(out_, "\r\033[K");
    fmt::print(out_, "iosig-calibrate: {}\n", line);
    if (interactive_ && open_) draw(0);
    std::fflush(out_);
}

} // namespace iosig::calibrate
