// Progress on stderr: on a terminal, one bar per mount and phase redrawn in place; otherwise one
// plain line per finished phase (logs, CI).
#pragma once

#include <cstdio>
#include <string>

namespace iosig::calibrate {

class Progress {
public:
    // `interactive`: draw bars (normally isatty(stderr)). `quiet`: print nothing.
    Progress(std::FILE* out, bool interactive, bool quiet = false);

    void begin(const std::string& subject, const std::string& phase);
    void update(double fraction); // 0..1 of the phase's time box
    void end(const std::string& result);
    void note(const std::string& line); // a line of its own (skips, warnings)

private:
    void draw(double fraction);
    std::FILE* out_;
    bool interactive_;
    bool quiet_;
    std::string subject_, phase_;
    double started_ = 0;
    double last_draw_ = 0;
    bool open_ = false;
};

} // namespace iosig::calibrate
