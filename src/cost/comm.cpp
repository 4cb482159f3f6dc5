// Per-axis communication volumes (docs/model.md §5) priced on the tier each group lands on.
#include "shardplan/comm.h"

#include <algorithm>
#include <cmath>

#include "shardplan/hardware.h"
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

double overlap_sm_share(const GpuSpec& gpu) {
    if (gpu.sms <= 0) return 0.0;
    return std::min(1.0, gpu.eff.comm_sms / static_cast<double>(gpu.sms));
}

double exposed_beside_s(double comm_s, double hidden_s, double sm_share) {
    return comm_s - hidden_s * (1.0 - sm_share);
}

bool traffic_waits(double comm_s, double exposed_s, double sm_share) {
    return comm_s > 0 && exposed_s > sm_share * comm_s * (1.0 + 1e-9);
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

double expert_parts_hit(int64_t experts, int64_t top_k, double parts) {
    if (parts <= 1.0 || experts <= 0 || top_k <= 0) return std::min(1.0, parts);
    const double E = static_cast<double>(experts), per = E / parts;
    double miss = 1.0;  // C(E − per, k) / C(E, k) = Π_{i<k} (E − per − i) / (E − i)
    for (int64_t i = 0; i < top_k && i < experts; ++i) {
        const double di = static_cast<double>(i);
        miss *= std::max(0.0, (E - per - di) / (E - di));
    }
    return parts * (1.0 - miss);
}

Traffic ep_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const Fabric& f) {
    const double k = m.moe ? static_cast<double>(m.moe->top_k) : 0.0;
    // A copy of each token, on the busiest rank: it receives moe_load_factor × the mean and every rank
    // waits for it (with capacity and padding every buffer is capacity-sized).
    const double unit = kElem * tokens(l) / static_cast<double>(l.tp) * static_cast<double>(m.hidden) * moe_load_factor(l);
    Traffic t = make(Collective::all_to_all, "all-to-all", k * unit, g, f);
    if (!m.moe || l.moe_dispatcher == Dispatcher::alltoall || g.size <= 1) return t;
    // DeepEP / HybridEP (Megatron's flex dispatcher): a token goes once to each GPU holding any of its
    // experts, and across domains once to each domain over the NIC, then over NVLink inside it (DeepEP
    // README: internode dispatch by RDMA to the same-index GPU, NVLink forwarding). With experts in order on
    // the EP ranks, a token's k experts touch expert_parts_hit(E, k, n) of n equal parts. Group-limited
    // routing (DeepSeek-V3 report §2.1.2, §3.2.2) caps the domains at group_topk · max(1, N / groups),
    // each group covering N / groups of the N domains. The kernels reach the links' achieved bandwidth
    // (DeepEP: 153-158 GB/s of H800's ~160 GB/s NVLink, 43-58 GB/s of a 400 Gb/s NIC), not a2a's share.
    const MoeSpec& moe = *m.moe;
    const double n = static_cast<double>(g.size), N = static_cast<double>(g.domains_spanned),
                 G = static_cast<double>(g.per_domain);
    const double hit = expert_parts_hit(moe.experts, moe.top_k, n);
    const double gpus = hit * (n - 1.0) / n;  // other GPUs reached
    double domains = expert_parts_hit(moe.experts, moe.top_k, N);
    if (moe.group_topk > 0 && moe.router_groups > 1)
        domains = std::min(domains, static_cast<double>(moe.group_topk) *
                                        std::max(1.0, N / static_cast<double>(moe.router_groups)));
    const double remote = domains * (N - 1.0) / std::max(1.0, N);  // other domains reached
    const double up = gpus * unit, out = remote * unit;  // every GPU reached over NVLink; domains over the NIC
    t.time_s = std::max(up / f.up_Bps, g.crosses_domain() ? out / f.out_Bps : 0.0) + (G - 1.0) * f.up_latency_s +
               (N - 1.0) * f.out_latency_s;
    t.buffer_bytes = up;
    t.wire_bytes = hit * (G - 1.0) / n * unit + out;  // what leaves this GPU: its own domain's GPUs, other domains
    t.algorithm = l.moe_dispatcher == Dispatcher::deepep ? "deepep" : "hybridep";
    t.label = l.moe_dispatcher == Dispatcher::deepep ? "DeepEP dispatch + combine" : "HybridEP dispatch + combine";
    return t;
}

Traffic pp_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& g, const GroupPlacement& tp,
                   const Fabric& f) {
    const double whole = kElem * tokens(l) * static_cast<double>(m.hidden);
    const bool scatter = scatters_pipeline_sends(l);
    const double S = (l.sequence_parallel && l.tp > 1) || scatter ? whole / static_cast<double>(l.tp) : whole;
    // A point-to-point between two neighbouring stages: priced on the tier their ranks share.
    GroupPlacement pair = g;
    pair.size = 2;
    pair.per_domain = g.crosses_domain() ? 1 : 2;
    Traffic t = make(Collective::send_recv, "send/recv", S, pair, f);
    t.group_size = g.size;
    t.wire_bytes = S;
    if (scatter) {  // the receiving TP group puts the tensor back together
        const Traffic gather = make(Collective::all_gather, "", whole, tp, f);
        t.time_s += gather.time_s;
        t.label = "send/recv (scatter-gather)";
    }
    return t;
}

GroupPlacement end_stages(const GroupPlacement& pp, int64_t pp_degree) {
    GroupPlacement pair = pp;
    pair.size = 2;
    pair.stride = pp.stride * std::max<int64_t>(1, pp_degree - 1);
    pair.domains_spanned = pp.crosses_domain() ? 2 : 1;
    pair.per_domain = pp.crosses_domain() ? 1 : 2;
    return pair;
}

Traffic tied_embedding_traffic(const ModelSpec& m, const Layout& l, const GroupPlacement& ends, const Fabric& f) {
    const double grad_bytes = l.grad_dtype == GradDtype::fp32 ? 4.0 : 2.0;
    const double rows = std::ceil(static_cast<double>(m.vocab) / static_cast<double>(l.tp));  // vocab-parallel
    const double S = grad_bytes * rows * static_cast<double>(m.hidden);
    return make(Collective::all_reduce, "all-reduce (tied embedding)", S, ends, f);
}

Traffic dp_reduce_traffic(double grad_bytes, int zero, const GroupPlacement& g, const Fabric& f) {
    if (zero == 0) return make(Collective::all_reduce, "all-reduce", grad_bytes, g, f);
    return make(Collective::reduce_scatter, "reduce-scatter", grad_bytes, g, f);
}

Traffic dp_gather_traffic(double param_bytes, const GroupPlacement& g, const Fabric& f) {
    return make(Collective::all_gather, "all-gather", param_bytes, g, f);
}

Traffic per_tensor_zero3(Traffic t) {
    t.time_s = std::max(t.time_s, t.wire_bytes / kPerTensorZero3_Bps);
    return t;
}

}  // namespace shardplan
