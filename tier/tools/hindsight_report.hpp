// Output of `iosig-tiersim --hindsight` (iosig/tier/hindsight.hpp): a table or JSON.
#pragma once

#include "iosig/tier/hindsight.hpp"

#include <string>
#include <vector>

void print_hindsight(const std::string& source,
                     const std::vector<iosig::tier::SwitchingHindsight>& rows, bool json);
