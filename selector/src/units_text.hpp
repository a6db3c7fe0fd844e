// Helpers shared by units.cpp (parsing) and units_format.cpp (formatting); internal to the
// selector.
#pragma once

#include <string>

namespace iosig::units_text {

// fmt's shortest round-trip text with a tidier exponent: 1e-06 -> "1e-6", 1e+20 -> "1e20".
std::string shortest_decimal(double value);

} // namespace iosig::units_text
