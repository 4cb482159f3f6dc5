/// The simulated step as a Chrome trace (Trace Event Format: opens in Perfetto and chrome://tracing), a
/// report writer like report.h: one process per pipeline rank; threads for compute, point-to-point
/// sends, the per-layer TP/CP/EP collectives (exposed, and on their own thread the part compute hides)
/// and the DP reduction; events "F3", "R3" (the recomputed forward before "B3"), "B3", "W3", "send",
/// "dp gradient reduction", "optimizer", with sizes in args.
///
/// Written as it goes, event by event: memory is the simulation's op list and the output itself, never
/// a document tree (a tree cost 20 kB a pass: 2 GB for 100,000 passes). trace_bytes_per_pass bounds
/// the output's size before anything is simulated, so callers can refuse what they cannot hold.
///
///   std::ofstream f("step.json");
///   write_trace(f, plan, simulate_pipeline(spec), spec);
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

#include "shardplan/plan.h"
#include "shardplan/simulate.h"

namespace shardplan {

/// Output bytes per pass (micro-batch × virtual stage) at most: the events one pass writes (forward,
/// backward, weight gradient, recomputed forward, exposed and hidden collectives, sends) take about
/// 1,400 bytes (69 MB for 50,000 passes of Llama 3 70B, PP4 · VPP5, full recompute). A bound for sizing.
inline constexpr int64_t kTraceBytesPerPass = 2048;

void write_trace(std::ostream& out, const Plan& p, const SimResult& r, const PipelineSpec& s);
std::string trace_text(const Plan& p, const SimResult& r, const PipelineSpec& s);

}  // namespace shardplan
