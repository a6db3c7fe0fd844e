// A C++ program writing with std::ofstream (libstdc++ opens with fopen and writes with write()).
//   ofstream PATH LINES
#include <cstdlib>
#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
    if (!out) {
        std::cerr << "cannot open " << argv[1] << "\n";
        return 1;
    }
    const long lines = std::atol(argv[2]);
    for (long i = 0; i < lines; ++i)
        out << "line " << i << " of " << lines << ": " << i * i % 9973 << "\n";
    out.close();
    return out ? 0 : 1;
}
