// The job lifetime that `availability` is evaluated over (docs/selection.md, "Job lifetime").
#include "iosig/selection.hpp"
#include "iosig/units.hpp"

#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <string>

namespace iosig {
namespace {

std::optional<double> number_from_environment(const char* name) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return std::nullopt;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0') return std::nullopt;
    return value;
}

} // namespace

SelectionContext selection_context_from_environment() {
    SelectionContext context;
    if (const char* text = std::getenv("IOSIG_JOB_LIFETIME"); text != nullptr && *text != '\0') {
        const UnitResult<double> lifetime = parse_duration_seconds(text);
        if (lifetime && *lifetime.value > 0) {
            context.job_lifetime = *lifetime.value;
            context.job_lifetime_source = fmt::format("IOSIG_JOB_LIFETIME={}", text);
            return context;
        }
        context.job_lifetime_source =
            fmt::format("default (24 h; IOSIG_JOB_LIFETIME='{}' is not a positive duration)", text);
    }
    // Slurm: the whole job's span (end - start) is the same number in every process of the job, so
    // every rank of an MPI job takes the same decision; "end - now" only when the start is unknown.
    if (const auto end = number_from_environment("SLURM_JOB_END_TIME")) {
        const auto start = number_from_environment("SLURM_JOB_START_TIME");
        const double from = start ? *start : static_cast<double>(std::time(nullptr));
        if (*end > from) {
            context.job_lifetime = *end - from;
            context.job_lifetime_source =
                start ? "SLURM_JOB_END_TIME - SLURM_JOB_START_TIME" : "SLURM_JOB_END_TIME - now";
            return context;
        }
    }
    if (const auto minutes = number_from_environment("SLURM_TIME_LIMIT"); minutes && *minutes > 0) {
        context.job_lifetime = *minutes * 60;
        context.job_lifetime_source = "SLURM_TIME_LIMIT (minutes)";
        return context;
    }
    return context;
}

} // namespace iosig
