// The C++ forms of annotated opens: file stream constructors and .open with const char*,
// std::string and std::filesystem::path, a non-constant openmode, temporaries, a function template,
// a generic lambda, a member call whose object expression has side effects, C calls from C++.
// Built with and without the plugin and run with and without the runtime, it must print the same
// lines and leave the same files (tests/plugin-e2e/run-e2e.sh).
//
// usage: annotated-cxx OUTDIR
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

// clang-format off
#pragma sigdef journal sequential persist size-per-IO(4K)
// clang-format on

namespace {

std::string out_dir;
int evaluations = 0;

std::string path_of(const std::string& name) {
    std::cout << "evaluate " << ++evaluations << ' ' << name << '\n';
    return out_dir + "/" + name;
}

void write_lines(std::ostream& out, const std::string& what, int lines) {
    for (int i = 0; i < lines; ++i)
        out << what << ' ' << i << '\n';
}

void report(const char* what, bool ok) {
    std::cout << what << ": " << (ok ? "ok" : "failed") << '\n';
}

void constructors() {
    const std::string text = path_of("ctor-char.txt");
    {
#pragma sig journal
        std::ofstream out(text.c_str());
        report("ofstream(const char*)", out.good());
        write_lines(out, "ctor-char", 500);
    }
    {
#pragma sig random temp
        std::ofstream out(path_of("ctor-string.txt"), std::ios::out | std::ios::binary);
        report("ofstream(std::string)", out.good());
        write_lines(out, "ctor-string", 300);
    }
    {
#pragma sig global random
        std::ofstream out{std::filesystem::path(path_of("ctor-path.txt"))};
        report("ofstream(filesystem::path)", out.good());
        write_lines(out, "ctor-path", 200);
    }
    {
#pragma sig random
        std::ifstream in(path_of("ctor-char.txt"));
        std::string first;
        std::getline(in, first);
        report("ifstream(std::string) of an existing file", in.good());
        std::cout << "first line: " << first << '\n';
    }
    {
#pragma sig random
        std::ifstream in(path_of("missing.txt"));
        report("ifstream of a missing file", in.good());
    }
#pragma sig persist
    std::ofstream(path_of("temporary.txt")) << "written through a temporary\n";
}

void member_open(std::ios_base::openmode extra) {
    std::vector<std::fstream> streams(3);
    int index = 0;
    for (const char* name : {"open-0.txt", "open-1.txt"}) {
#pragma sig journal
        streams[index++].open(path_of(name), std::ios::out | std::ios::trunc | extra);
    }
    std::cout << "index after two opens: " << index << '\n';
    report("fstream::open", streams[0].good() && streams[1].good());
    write_lines(streams[0], "open-0", 100);
    write_lines(streams[1], "open-1", 100);
    streams[0].close();
    streams[1].close();
    // Appending to an existing file, mode computed at run time.
    const std::ios_base::openmode append = extra | std::ios::app;
#pragma sig journal
    streams[2].open(path_of("open-0.txt"), append);
    write_lines(streams[2], "appended", 10);
}

template <class Path>
bool write_with_template(const Path& path, const char* what) {
#pragma sig random temp
    std::ofstream out(path);
    write_lines(out, what, 50);
    return out.good();
}

int c_calls() {
#pragma sig journal
    std::FILE* file = std::fopen(path_of("cfile.txt").c_str(), "w");
    std::fputs("from C++\n", file);
    std::fclose(file);
    errno = 0;
#pragma sig journal
    int fd = ::open(path_of("missing/none").c_str(), O_RDONLY);
    std::cout << "open of a missing file: " << fd << " (" << std::strerror(errno) << ")\n";
    auto opener = [](const auto& path, int flags) {
#pragma sig temp
        return ::open(path.c_str(), flags, 0644);
    };
    fd = opener(path_of("lambda.dat"), O_WRONLY | O_CREAT | O_TRUNC);
    report("generic lambda", fd >= 0);
    return ::write(fd, "lambda\n", 7) == 7 ? ::close(fd) : -1;
}

void unannotated() {
    std::ofstream out(path_of("unannotated.txt"));
    write_lines(out, "unannotated", 20);
}

void summary() {
    for (const char* name : {"ctor-char.txt", "ctor-string.txt", "ctor-path.txt", "temporary.txt",
                             "open-0.txt", "open-1.txt", "template-char.txt", "template-string.txt",
                             "cfile.txt", "lambda.dat", "unannotated.txt"}) {
        const std::string path = out_dir + "/" + name;
        struct stat info{};
        if (stat(path.c_str(), &info) != 0) {
            std::cout << name << ": missing\n";
            continue;
        }
        std::ifstream in(path, std::ios::binary);
        std::uint32_t hash = 2166136261u;
        for (char c; in.get(c);)
            hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
        char line[160];
        std::snprintf(line, sizeof line, "%s: %lld bytes, mode %o, fnv1a %08x", name,
                      static_cast<long long>(info.st_size),
                      static_cast<unsigned>(info.st_mode & 07777), static_cast<unsigned>(hash));
        std::cout << line << '\n';
    }
    std::cout << evaluations << " evaluations\n";
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " OUTDIR\n";
        return 2;
    }
    out_dir = argv[1];
    umask(022);
    constructors();
    member_open(std::ios::binary);
    report("template, const char*",
           write_with_template(path_of("template-char.txt").c_str(), "t1"));
    report("template, std::string", write_with_template(path_of("template-string.txt"), "t2"));
    c_calls();
    unannotated();
    summary();
    return 0;
}
