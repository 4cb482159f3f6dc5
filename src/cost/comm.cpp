// Per-axis communication volumes (docs/model.md §5) priced on the tier each group lands on.
#include "shardplan/comm.h"

#include "shardplan/layout.h"
#include "shardplan/model.h"

namespace shardplan {

namespace {
constexpr double kElem = 2.0;  // bf16 activations and gradients on the wire

double tokens(const Layout& l) {
    return static_cast<double>(l.micro_batch) * static_cast<double>(l.seq_len) / static_cast<double>(l.cp);
}

Traffic make(Collective kind, const char* label, double S, const GroupPlacement& g, const Fabric& f) {
    Traffic t;
    t.kind = kind;
    t.label = label;
    t.buffer_bytes = S;
    t.group_size = g.size;
    t.wire_bytes = wire_bytes(kind, S, g.size);
    const CollectiveCost c = collective_time(kind, S, g.size, g.per_domain, f);
    t.time_s = c.time_s;
    t.tier = g.crosses_domain() ? Tier::scale_out : Tier::scale_up;
    t.algorithm = c.algorithm;
    return t;
}
}  // namespace

double chunked_overlap_exposed_s(double comm_s, double gemm_s, int64_t chunks) {
    const double k = static_cast<double>(std::max<int64_t>(1, chunks));
    return comm_s / k + (k - 1.0) / k * std::max(0.0, comm_s - gemm_s);
}

Traffic tp_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const Fabric& f) {
    const double S = kElem * tokens(l) * static_cast<double>(m.hidden);
    if (!l.sequence_parallel) return make(Collective::all_reduce, "all-reduce", S, g, f);
    // Sequence parallel: each all-reduce becomes a reduce-scatter and an all-gather of the same tensor.
    Traffic rs = make(Collective::reduce_scatter, "reduce-scatter + all-gather", S, g, f);
    const Traffic ag = make(Collective::all_gather, "", S, g, f);
    rs.wire_bytes += ag.wire_bytes;
    rs.time_s += ag.time_s;
    return rs;
}

Traffic cp_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const Fabric& f) {
    const double block = kElem * tokens(l) * static_cast<double>(k_width(m) + v_width(m)) / static_cast<double>(l.tp);
    Traffic t = make(Collective::send_recv, "ring send/recv (K,V)", block, g, f);
    t.wire_bytes = block;
    return t;
}

Traffic ep_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const Fabric& f) {
    const double k = m.moe ? static_cast<double>(m.moe->top_k) : 0.0;
    const double S = kElem * tokens(l) / static_cast<double>(l.tp) * k * static_cast<double>(m.hidden);
    Traffic t = make(Collective::all_to_all, "all-to-all", S, g, f);
    if (m.moe && m.moe->group_topk > 0 && m.moe->router_groups > 1 && g.crosses_domain()) {
        // Group-limited routing (DeepSeek-V3 report §2.1.2, §3.2.2): experts sit on the EP ranks in
        // order, so each of the router_groups groups covers N / groups of the group's N domains (at least
        // part of one), and a token's experts lie on at most group_topk · max(1, N / groups) of them. It
        // crosses the scale-out fabric once per target domain other than its own and fans out to its
        // experts' GPUs over NVLink there, and back the same way.
        const double N = static_cast<double>(g.domains_spanned), G = static_cast<double>(g.per_domain);
        const double groups = static_cast<double>(m.moe->router_groups);
        const double limit = std::min(N, static_cast<double>(m.moe->group_topk) * std::max(1.0, N / groups));
        const double cross = kElem * tokens(l) / static_cast<double>(l.tp) * static_cast<double>(m.hidden) * limit *
                             (N - 1.0) / N;
        const double t_out = cross / (f.out_Bps * f.a2a), t_up = S / (f.up_Bps * f.a2a);
        const double limited = std::max(t_out, t_up) + (G - 1.0) * f.up_latency_s + (N - 1.0) * f.out_latency_s;
        if (limited < t.time_s) {
            t.time_s = limited;
            t.algorithm = "node-limited";
        }
    }
    return t;
}

Traffic pp_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const Fabric& f) {
    const double sp = (l.sequence_parallel && l.tp > 1) ? static_cast<double>(l.tp) : 1.0;
    const double S = kElem * tokens(l) * static_cast<double>(m.hidden) / sp;
    // A point-to-point between two neighbouring stages: priced on the tier their ranks share.
    GroupPlacement pair = g;
    pair.size = 2;
    pair.per_domain = g.crosses_domain() ? 1 : 2;
    Traffic t = make(Collective::send_recv, "send/recv", S, pair, f);
    t.group_size = g.size;
    t.wire_bytes = S;
    return t;
}

Traffic dp_reduce_traffic(double grad_bytes, int zero, const GroupPlacement& g, const Fabric& f) {
    if (zero == 0) return make(Collective::all_reduce, "all-reduce", grad_bytes, g, f);
    return make(Collective::reduce_scatter, "reduce-scatter", grad_bytes, g, f);
}

Traffic dp_gather_traffic(double param_bytes, const GroupPlacement& g, const Fabric& f) {
    return make(Collective::all_gather, "all-gather", param_bytes, g, f);
}

}  // namespace shardplan
