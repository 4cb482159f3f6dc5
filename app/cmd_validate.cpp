// `shardplan validate FILE.json`: predictions next to published measurements.
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.h"
#include "scenario.h"
#include "shardplan/table.h"
#include "shardplan/calibrate.h"
#include "shardplan/validate.h"

namespace shardplan::app {

Run setup_validate(CLI::App& cmd) {
    struct Opts {
        std::string file, profile, format = "table";
        bool json = false, per_case = false, loso = false;
    };
    auto o = std::make_shared<Opts>();
    cmd.add_option("FILE", o->file, "JSON array of cases (../shared/validation format)")->required();
    cmd.add_option("--cluster", o->profile,
                   "A calibrated cluster profile: its GPU figures and efficiencies replace the defaults for cases on that GPU");
    add_format_flags(cmd, o->format, o->json);
    cmd.add_flag("--cases", o->per_case, "List every case, not only the summary");
    cmd.add_flag("--leave-one-source-out", o->loso,
                 "Also refit the constants without each source in turn and score that source (the out-of-sample figure)");
    return [o]() {
        const OutputFormat fmt = output_format(o->format, o->json);
        const FileAccess files{std::filesystem::path(o->file).parent_path().string()};
        CaseList list = read_cases(read_json_file(o->file, "FILE"), "FILE", &files);
        if (!o->profile.empty()) {
            const ClusterSpec profile = cluster_from_arg(o->profile, "--cluster");
            for (Case& c : list.cases)
                if (c.cluster.gpu.id == profile.gpu.id) c.cluster.gpu = profile.gpu;
        }
        const ValidationReport r = validate_cases(list);
        std::optional<LeaveOneSourceOut> loso;
        if (o->loso && fmt != OutputFormat::as_table && fmt != OutputFormat::as_json)
            throw ConfigError("--leave-one-source-out", "--format table or json (its figures are a summary, not rows)");
        if (o->loso) loso = leave_one_source_out(list.cases);
        switch (fmt) {
            case OutputFormat::as_json: {
                json j = validation_to_json(r);
                if (loso) j["summary"]["leave_one_source_out"] = loso_to_json(*loso);
                std::cout << j.dump(2) << "\n";
                return 0;
            }
            case OutputFormat::as_csv: std::cout << to_csv(validation_table(r)); break;
            case OutputFormat::as_markdown: std::cout << to_markdown(validation_table(r)); break;
            case OutputFormat::as_table: std::cout << format_validation(r, o->per_case); break;
        }
        if (loso && fmt == OutputFormat::as_table) std::cout << "\n" << format_loso(*loso);
        return 0;
    };
}

}  // namespace shardplan::app
