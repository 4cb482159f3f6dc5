// Golden reports: every preset model (and several GPU presets) through `plan --json`, compared with the
// reviewed reports in tests/golden/. After an intended model change, regenerate them with
// tools/update_golden.sh and review the diff.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "shardplan/io.h"
#include "shardplan/plan.h"
#include "shardplan/report.h"

using namespace shardplan;

namespace {

const std::string kDir = SHARDPLAN_GOLDEN_DIR;

void compare(const json& want, const json& got, const std::string& path, std::vector<std::string>& diffs) {
    if (diffs.size() > 20) return;
    if (want.is_number() && got.is_number()) {
        const double a = want.get<double>(), b = got.get<double>();
        if (std::fabs(a - b) > 1e-6 * std::max({std::fabs(a), std::fabs(b), 1e-30}))
            diffs.push_back(path + ": golden " + want.dump() + ", now " + got.dump());
        return;
    }
    if (want.type() != got.type()) {
        diffs.push_back(path + ": type changed");
        return;
    }
    if (want.is_object()) {
        for (auto it = want.begin(); it != want.end(); ++it) {
            if (!got.contains(it.key())) diffs.push_back(path + "." + it.key() + ": missing");
            else compare(it.value(), got[it.key()], path + "." + it.key(), diffs);
        }
        for (auto it = got.begin(); it != got.end(); ++it)
            if (!want.contains(it.key())) diffs.push_back(path + "." + it.key() + ": new field");
    } else if (want.is_array()) {
        if (want.size() != got.size()) {
            diffs.push_back(path + ": length " + std::to_string(want.size()) + " → " + std::to_string(got.size()));
            return;
        }
        for (size_t i = 0; i < want.size(); ++i) compare(want[i], got[i], path + "[" + std::to_string(i) + "]", diffs);
    } else if (want != got) {
        diffs.push_back(path + ": golden " + want.dump() + ", now " + got.dump());
    }
}

}  // namespace

TEST(Golden, PresetReports) {
    const json cases = read_json_file(kDir + "/cases.json", "golden cases");
    const bool update = std::getenv("SHARDPLAN_UPDATE_GOLDEN") != nullptr;
    ASSERT_GE(cases.size(), 11u);
    for (const json& j : cases) {
        const Case c = case_from_json(j);
        const Plan p = evaluate(c.model, c.cluster, c.layout);
        ASSERT_FALSE(p.rejection) << c.id << ": " << p.rejection->expected;
        const json got = plan_to_json(p);
        const std::string file = kDir + "/" + c.id + ".json";
        if (update) {
            std::ofstream(file) << got.dump(1) << "\n";
            continue;
        }
        std::ifstream in(file);
        ASSERT_TRUE(in.good()) << "missing golden " << file << " (run tools/update_golden.sh)";
        const json want = json::parse(in);
        std::vector<std::string> diffs;
        compare(want, got, c.id, diffs);
        EXPECT_TRUE(diffs.empty()) << c.id << " differs from its golden report:\n  " << [&] {
            std::string s;
            for (const auto& d : diffs) s += d + "\n  ";
            return s;
        }();
    }
}
