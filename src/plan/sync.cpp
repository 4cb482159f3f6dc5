// Gradient synchronisation after the backward (docs/model.md §5.2): the DP reduction and parameter gathers
// by ZeRO stage, and a tied embedding's all-reduce between the end pipeline stages.
#include "terms.h"

#include "shardplan/layout.h"
#include "shardplan/model.h"

namespace shardplan::terms {

/// 8. DP: gradients reduced over dp·cp (experts over edp) after the last backward; ZeRO ≥ 1 gathers the
/// updated parameters before the next forward; ZeRO-3 gathers them per micro-batch, twice, one of the
/// critical stage's `units` layers at a time. Then a tied embedding's all-reduce between the end stages.
void add_gradient_sync_terms(const ModelSpec& m, const Layout& l, const StageParams& owned, int64_t units,
                             const StageTimes& critical, const Fabric& fabric, const GpuSpec& gpu, int64_t mb,
                             double step_flops, Plan& plan) {
    const double dm = static_cast<double>(mb);
    const double gbytes = l.grad_dtype == GradDtype::fp32 ? 4.0 : 2.0;
    // The compute that can hide DP traffic is one window for both parts: the dense parameters' collectives
    // take it first, the experts' (edp) what they leave (one DP stream, one set of NICs). Without DP
    // overlap (dp_comm_overlap off, ZeRO 0-2) there is none: the reduction waits for the backward's end
    // and the gather runs before the next forward.
    // What hides is not free: the collective's kernels take their SMs from the computation beside it.
    const double share = overlaps_dp(l) ? gpu.eff.overlap_dp : 0.0;
    const double sm_share = overlap_sm_share(gpu);
    double fwd_window = share * critical.fwd_s;
    double bwd_window = share * critical.bwd_s;
    auto hide = [sm_share](double comm_s, double& window_s) {  // exposed time; the window shrinks by what it hides
        const double hidden = std::min(comm_s, window_s);
        window_s -= hidden;
        return exposed_beside_s(comm_s, hidden, sm_share);
    };
    struct DpPart { Axis axis; double params; };
    const GroupPlacement& dense_g = group(plan.groups, Axis::dp);
    // Without an expert grid (ep 1 and etp as tp: topology.cpp places none) the experts' gradients are
    // reduced over dp·cp, the dense group's ranks.
    const GroupPlacement* expert_g = find_group(plan.groups, Axis::edp);
    for (DpPart part : {DpPart{Axis::dp, owned.dense}, DpPart{Axis::edp, owned.expert}}) {
        if (part.params <= 0) continue;
        const GroupPlacement& g = part.axis == Axis::dp || !expert_g ? dense_g : *expert_g;
        if (g.size <= 1) continue;
        // FSDP gathers and reduces one unit (a transformer block) at a time: each unit's collective pays
        // the group's latency, its bytes the bandwidth. Other stages move the stage's parameters at once.
        const double u = fsdp_per_micro_batch(l) ? static_cast<double>(std::max<int64_t>(1, units)) : 1.0;
        auto per_unit = [u](Traffic t) {  // u calls of one unit's size, reported as the stage's whole
            t.buffer_bytes *= u;
            t.wire_bytes *= u;
            t.time_s *= u;
            return t;
        };
        // ZeRO-3's per-tensor collectives (DeepSpeed through 2021) move at most per_tensor_zero3_Bps a GPU.
        const bool per_tensor = l.zero >= 3 && l.zero3_comm == Zero3Comm::per_tensor;
        auto engine = [per_tensor](Traffic t) { return per_tensor ? per_tensor_zero3(t) : t; };
        const Traffic red = engine(per_unit(dp_reduce_traffic(part.params * gbytes / u, l.zero, g, fabric)));
        // The updated parameters are gathered in bf16, or as per-tensor FP8 where the weights are held so;
        // the embeddings, on the dense part's end stages, stay bf16 (gathered_weight_bytes).
        const double embedding = part.axis == Axis::dp ? owned.embedding : 0.0;
        const Traffic gat = engine(per_unit(dp_gather_traffic(gathered_weight_bytes(l, part.params, embedding) / u, g, fabric)));
        // One term per part: the reduction's group and tier, the calls, bytes, time and exposure of all it moves.
        CommTerm t = term(Axis::dp, red, g, 1, 0);
        double calls = 1, bytes = red.wire_bytes, time_s = red.time_s, exposed_s = 0;
        if (l.zero == 0) {
            exposed_s = hide(red.time_s, bwd_window);
        } else if (l.zero < 3 || l.pp > 1) {
            // ZeRO-1/2 gather the updated parameters before the next forward; FSDP under PP gathers each
            // stage once per step and reduce-scatters its accumulated gradients once. ZeRO-2 keeps only
            // gradient shards, so every micro-batch's backward reduce-scatters its own, each under that
            // backward (DeepSpeed's engine: stage 2 "communicates during non gradient accumulation
            // boundaries as well"); ZeRO-1 accumulates whole gradients and reduces them once.
            const double reductions = reduces_grads_per_micro_batch(l) ? dm : 1.0;
            calls = reductions + 1;
            bytes = reductions * red.wire_bytes + gat.wire_bytes;
            time_s = reductions * red.time_s + gat.time_s;
            exposed_s = reductions * hide(red.time_s, bwd_window) + hide(gat.time_s, fwd_window);
            t.collective = reductions > 1 ? "reduce-scatter per mb + all-gather"
                           : l.zero < 3   ? "reduce-scatter + all-gather"
                                          : "all-gather + reduce-scatter (FSDP, once per step)";
        } else {  // per micro-batch: gathered for the forward, again for the backward, gradients reduce-scattered
            calls = 3.0 * dm;
            bytes = dm * (red.wire_bytes + 2.0 * gat.wire_bytes);
            time_s = dm * (red.time_s + 2.0 * gat.time_s);
            exposed_s = dm * (hide(gat.time_s, fwd_window) + hide(gat.time_s + red.time_s, bwd_window));
            t.collective = "all-gather ×2 + reduce-scatter (FSDP)";
        }
        t.calls_per_step = saturated_count(calls);
        t.bytes_per_step = bytes;
        t.time_s = time_s;
        t.exposed_s = std::min(exposed_s, time_s);
        t.critical_path = traffic_waits(t.time_s, t.exposed_s, sm_share);
        if (part.axis == Axis::edp) t.axis = Axis::edp;
        t.gradient_sync = true;
        add_term(plan, t, step_flops);
    }

    // Tied embeddings under PP: the end stages' two copies' gradients, all-reduced after the DP reduction
    // with nothing left to hide under (Megatron-LM's finalize_model_grads). DualPipe's end ranks each hold
    // both ends of the model.
    if (m.tied_embeddings && l.pp > 1 && l.schedule != Schedule::dualpipe) {
        const GroupPlacement ends = end_stages(group(plan.groups, Axis::pp), l.pp);
        const Traffic e = tied_embedding_traffic(m, l, ends, fabric);
        CommTerm t = term(Axis::pp, e, ends, 1, e.time_s);
        t.gradient_sync = true;
        add_term(plan, t, step_flops);
    }
}

}  // namespace shardplan::terms
