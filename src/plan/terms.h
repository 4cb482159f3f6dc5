/// How the evaluation turns a kind of call into a communication term of the plan: the placed group of an
/// axis, a call count held in int64 without overflow, a term from one call's Traffic, and the term onto
/// the plan (its exposed time joins the step). Internal to src/plan (plan.cpp, sync.cpp), not installed.
///
///   add_term(plan, term(Axis::tp, traffic, group(plan.groups, Axis::tp), calls, exposed_s), step_flops);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "shardplan/comm.h"
#include "shardplan/plan.h"

namespace shardplan::terms {

/// The placed group of an axis that place_groups always places (tp, cp, pp, dp; ep when ep > 1). An axis it
/// did not place is a caller's mistake, not a group to stand in for: answering with the first group had
/// priced a MoE layout's expert gradients over its TP group (add_gradient_sync_terms asks with find_group
/// instead).
inline const GroupPlacement& group(const std::vector<GroupPlacement>& gs, Axis a) {
    const GroupPlacement* g = find_group(gs, a);
    if (!g) throw std::logic_error(fmt::format("no {} group placed", enum_name(a)));
    return *g;
}

/// A term's calls per step are counted in double: layer passes × micro-batches × calls passes 2^63 when a
/// request's global batch is near it (any integer below 2^63 is one), so the count held is saturated.
inline int64_t saturated_count(double calls) {
    constexpr double kMax = 9.2e18;  // below INT64_MAX (≈ 9.223e18), exactly representable
    return calls >= kMax ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(std::llround(calls));
}

/// One axis's term: `calls` of `t` a step, `exposed` of their time on the step. `sm_share` is what its hidden
/// part costs (overlap_sm_share): the term sits on the critical path only where some traffic waits beyond it.
inline CommTerm term(Axis axis, const Traffic& t, const GroupPlacement& g, double calls, double exposed,
                     double sm_share = 0.0) {
    CommTerm c;
    c.axis = axis;
    c.collective = t.label;
    c.group_size = g.size;
    c.calls_per_step = saturated_count(calls);
    c.bytes_per_step = t.wire_bytes * calls;
    c.time_s = t.time_s * calls;
    c.exposed_s = std::min(exposed, c.time_s);
    c.critical_path = traffic_waits(c.time_s, c.exposed_s, sm_share);
    c.tier = t.tier;
    c.crosses_domain = g.crosses_domain();
    c.domains_spanned = g.domains_spanned;
    c.algorithm = t.algorithm;
    return c;
}

/// A communication term onto the plan: its exposed time joins the step, its bytes per FLOP are the
/// critical stage's.
inline void add_term(Plan& plan, CommTerm t, double step_flops) {
    t.bytes_per_flop = step_flops > 0 ? t.bytes_per_step / step_flops : 0;
    plan.time.exposed_comm_s += t.exposed_s;
    plan.comm.push_back(t);
}

/// 8. Gradient synchronisation after the last backward: the DP reduction and parameter gathers by ZeRO
/// stage (dense over dp·cp, experts over edp), then, with tied embeddings under PP, the end stages'
/// all-reduce of the embedding's gradients (sync.cpp). What hides under the computation still costs the
/// SMs it takes from it (overlap_sm_share, comm.h).
void add_gradient_sync_terms(const ModelSpec& m, const Layout& l, const StageParams& owned, int64_t units,
                             const StageTimes& critical, const Fabric& fabric, const GpuSpec& gpu, int64_t mb,
                             double step_flops, Plan& plan);

}  // namespace shardplan::terms
