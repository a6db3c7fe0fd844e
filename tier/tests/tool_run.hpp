// Runs a command line through the shell for the tools' tests: its exit status and everything it
// printed (standard output, and standard error when the command redirects it).
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace iosig::tier::test_support {

struct ToolRun {
    int status = -1; // the exit status; -1 when it did not exit normally or could not start
    std::string output;
};

inline ToolRun run_tool(const std::string& command) {
    ToolRun run;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return run;
    std::array<char, 4096> buffer;
    while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr)
        run.output += buffer.data();
    const int status = ::pclose(pipe);
    run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
}

} // namespace iosig::tier::test_support
