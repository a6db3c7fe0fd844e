// Printing and saving a Prediction: the per-write table of iosig-cachesim and its CSV.
#pragma once

#include "iosig/cachesim/estimator.hpp"

#include <cstdio>
#include <span>
#include <string>

namespace iosig::cachesim {

// Columns: index,offset,size,delay_s,cost_s,baseline_s,pause_s,dirty_pages,state,syscalls
std::string prediction_csv(const Prediction& prediction, std::span<const WriteRequest> workload,
                           double page_size);

// A human-readable table (at most `max_rows` rows, then an ellipsis) and the totals.
void print_prediction(std::FILE* out, const Prediction& prediction,
                      std::span<const WriteRequest> workload, double page_size,
                      std::size_t max_rows);

} // namespace iosig::cachesim
