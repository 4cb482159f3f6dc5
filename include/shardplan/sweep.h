/// How the best layout changes with one quantity: for each value of the GPU count, the sequence
/// length or the global batch, run the search and keep its best layout. Rendered as a table
/// (`--format csv` gives one header line and a row per point) or as an SVG chart of tokens/s per GPU
/// and MFU against the swept value.
///
///   auto pts = sweep(model, cluster, base, space, SweepAxis::gpus, {1024, 2048, 4096}, {});
///   std::string svg = sweep_svg(pts, SweepAxis::gpus, "Llama 3 70B on H100");
#pragma once
#include <string>
#include <vector>

#include "shardplan/search.h"
#include "shardplan/table.h"

namespace shardplan {

enum class SweepAxis { gpus, seq_len, global_batch };
template <> struct EnumNames<SweepAxis> {
    static constexpr std::array<std::pair<SweepAxis, std::string_view>, 3> table{{
        {SweepAxis::gpus, "gpus"}, {SweepAxis::seq_len, "seq_len"}, {SweepAxis::global_batch, "global_batch"}}};
};

struct SweepPoint {
    int64_t value = 0;
    SearchResult result;  // result.best is empty when nothing fits at this point
};

std::vector<SweepPoint> sweep(const ModelSpec& m, const ClusterSpec& c, const Layout& base, const SearchSpace& space,
                              SweepAxis axis, const std::vector<int64_t>& values, const SearchOptions& opt);

/// One row per point: the value, the best layout and its tokens/s per GPU, MFU, memory, step time.
Table sweep_table(const std::vector<SweepPoint>& points, SweepAxis axis);

/// A self-contained SVG chart (no scripts, no external fonts or links): tokens/s per GPU on the left
/// axis, MFU on the right, the swept value along the bottom (log scale when it spans 8× or more).
std::string sweep_svg(const std::vector<SweepPoint>& points, SweepAxis axis, const std::string& title);

}  // namespace shardplan
