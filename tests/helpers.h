/// What several test files share: where ../shared is, and what a test does when it is missing.
///
///   const std::string f = shared_path("validation/calibration.json");
///   SHARDPLAN_REQUIRE_SHARED(f);  // a skip on a developer's machine, a failure in CI
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace shardplan::testing {

/// ../shared beside the checkout (the published runs the validation tests read).
inline std::string shared_path(const std::string& relative) { return std::string(SHARDPLAN_SHARED_DIR) + "/" + relative; }

/// In CI (the CI variable set) a missing ../shared is a failure: a CI run without it must not pass
/// the validation tests by skipping them. On a developer's machine it is a skip with the reason.
inline bool shared_missing_is_failure() {
    const char* ci = std::getenv("CI");
    return ci && *ci && std::string(ci) != "false" && std::string(ci) != "0";
}

}  // namespace shardplan::testing

/// Leaves the test when `path` is missing: GTEST_SKIP on a developer's machine, a failure in CI.
#define SHARDPLAN_REQUIRE_SHARED(path)                                                                       \
    do {                                                                                                     \
        if (!std::filesystem::exists(path)) {                                                                \
            if (::shardplan::testing::shared_missing_is_failure()) FAIL() << "CI: " << (path) << " is missing"; \
            GTEST_SKIP() << "no " << (path) << " beside the checkout";                                      \
        }                                                                                                    \
    } while (0)
