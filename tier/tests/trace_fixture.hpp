// The shared cloudPhysics traces, loaded once per test binary; tests skip with the path when
// absent.
#pragma once

#include "iosig/tier/trace.hpp"

#include <exception>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

namespace iosig::tier::test_support {

inline std::filesystem::path shared_trace(const std::string& name) {
    return std::filesystem::path(IOSIG_SHARED_DIR) / "data" / "traces" / name;
}

inline const Trace* cloud_physics_oracle() {
    static const std::optional<Trace> trace = []() -> std::optional<Trace> {
        const auto path = shared_trace("cloudPhysicsIO.oracleGeneral.bin");
        if (!std::filesystem::exists(path)) return std::nullopt;
        return load_trace(path, TraceFormat::oracle_general);
    }();
    return trace ? &*trace : nullptr;
}

inline const Trace* cloud_physics_csv() {
    static const std::optional<Trace> trace = []() -> std::optional<Trace> {
        const auto path = shared_trace("cloudPhysicsIO.csv");
        if (!std::filesystem::exists(path)) return std::nullopt;
        return load_trace(path, TraceFormat::csv);
    }();
    return trace ? &*trace : nullptr;
}

// The message of the exception `f` throws, "" when it throws none.
inline std::string error_of(auto&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

// A trace written out by hand, named `source` in messages.
inline Trace hand_made_trace(TraceKind kind, std::initializer_list<Request> requests,
                             std::string source = "hand-made") {
    Trace t;
    t.kind = kind;
    t.source = std::move(source);
    t.requests = requests;
    return t;
}

} // namespace iosig::tier::test_support

#define IOSIG_REQUIRE_TRACE(ptr, file)                                                             \
    if ((ptr) == nullptr)                                                                          \
    GTEST_SKIP() << "shared trace missing: "                                                       \
                 << iosig::tier::test_support::shared_trace(file).string()
