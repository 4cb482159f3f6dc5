// `shardplan validate FILE.json`: predictions next to published measurements.
#include <iostream>
#include <memory>

#include "commands.h"
#include "scenario.h"
#include "shardplan/validate.h"

namespace shardplan::app {

Run setup_validate(CLI::App& cmd) {
    struct Opts {
        std::string file, profile;
        bool json = false, per_case = false;
    };
    auto o = std::make_shared<Opts>();
    cmd.add_option("FILE", o->file, "JSON array of cases (../shared/validation format)")->required();
    cmd.add_option("--cluster", o->profile,
                   "A calibrated cluster profile: its GPU figures and efficiencies replace the defaults for cases on that GPU");
    cmd.add_flag("--json", o->json, "Print cases and summary as JSON (docs/json.md)");
    cmd.add_flag("--cases", o->per_case, "List every case, not only the summary");
    return [o]() {
        CaseList list = read_cases(read_json_file(o->file, "FILE"), "FILE");
        if (!o->profile.empty()) {
            const ClusterSpec profile = cluster_from_arg(o->profile, "--cluster");
            for (Case& c : list.cases)
                if (c.cluster.gpu.id == profile.gpu.id) c.cluster.gpu = profile.gpu;
        }
        const ValidationReport r = validate_cases(list);
        if (o->json) std::cout << validation_to_json(r).dump(2) << "\n";
        else std::cout << format_validation(r, o->per_case);
        return 0;
    };
}

}  // namespace shardplan::app
