// A process started by exec inherits descriptors of redirected files (a shell's `> out.dat` opened
// before exec): at load they are found through /proc/self/fd and tracked again.
#pragma once

#include <string>

namespace iosig::shim {

void adopt_inherited_descriptors(const std::string& job);

} // namespace iosig::shim
