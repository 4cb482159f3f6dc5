// One training step, in execution order (docs/model.md §8).
#include "shardplan/plan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "shardplan/collectives.h"
#include "shardplan/compute.h"
#include "shardplan/constants.h"
#include "shardplan/pipeline.h"
#include "terms.h"

#include <fmt/format.h>

namespace shardplan {

using terms::add_gradient_sync_terms;
using terms::add_term;
using terms::group;
using terms::term;

namespace {

// Step time = its parts; throughput, MFU and HFU from it (the FLOPs per token and the peak are set).
void finish_step(Plan& p, const Layout& l, const ClusterSpec& c) {
    TimeBreakdown& T = p.time;
    T.step_s = T.compute_s + T.recompute_s + T.exposed_comm_s + T.bubble_s + T.optimizer_s;
    Throughput& th = p.throughput;
    const double tokens = static_cast<double>(global_batch(l)) * static_cast<double>(l.seq_len);
    th.tokens_per_s = tokens / T.step_s;
    th.tokens_per_s_per_gpu = th.tokens_per_s / static_cast<double>(c.gpus);
    th.mfu = th.tokens_per_s_per_gpu * th.model_flops_per_token / th.peak_flops;
    th.hfu = th.tokens_per_s_per_gpu * th.hardware_flops_per_token / th.peak_flops;
}

}  // namespace

Plan evaluate(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const EvalOptions& o) {
    Plan plan;
    plan.model = m;
    plan.cluster = c;
    plan.layout = l;
    evaluate_into(m, c, l, plan, o);
    return plan;
}

Plan evaluate_closed_form(const ModelSpec& m, const ClusterSpec& c, const Layout& l) {
    return evaluate(m, c, l, EvalOptions{.pipeline = PipelineMethod::closed_form});
}

Plan evaluate_traced(const ModelSpec& m, const ClusterSpec& c, const Layout& l, SimulatedStep& step) {
    step = {};
    // trace_refusal() bounds the passes a trace may draw; within them the plan is the simulated one.
    return evaluate(m, c, l, EvalOptions{.max_passes = std::numeric_limits<int64_t>::max(), .keep = &step});
}

namespace {

/// Stages with the same layers and ends form a class: they hold the same state and differ only in
/// their in-flight activations, linearly, and that count never grows with the stage index. So each
/// class is computed once, and its first stage is its fullest.
struct StageClass {
    const Stage* first;  // lowest-index member
    int64_t count;
    MemoryBreakdown at0;  // memory in the passes with no micro-batch in flight (the step not yet weighed)
    double act_per_mb;    // stored activations each micro-batch in flight adds
    StageTimes times;
};

/// What one evaluation reuses across calls on its thread (the search evaluates millions).
struct Scratch {
    std::vector<Stage> stages;
    std::array<int64_t, 6> split_key{-1, -1, -1, -1, -1, -1};
    std::vector<StageClass> classes;
    std::vector<size_t> class_of;  // per stage
    PipelineSpec spec;
    PipelineResult pipeline;
};

Scratch& scratch() {
    thread_local Scratch s;
    return s;
}

/// 1. Layers onto pipeline ranks. The even split depends only on the layer pattern and the schedule: the
/// last one is reused when they match. nanotron's split by cost depends on every width as well (a layer's
/// matrices against the LM head's), so it is made anew each time and clears what is kept.
const std::vector<Stage>& split(const ModelSpec& m, const Layout& l, Scratch& x) {
    const std::array<int64_t, 6> key{m.layers, m.moe ? m.moe->dense_layers : -1, m.moe ? m.moe->layer_freq : -1, l.pp,
                                     l.schedule == Schedule::interleaved ? l.vpp : 1, static_cast<int64_t>(l.schedule)};
    const bool by_cost = l.stage_split == StageSplit::cost;
    if (by_cost || key != x.split_key) {
        split_stages(m, l, x.stages);
        x.split_key = by_cost ? std::array<int64_t, 6>{-1, -1, -1, -1, -1, -1} : key;
    }
    return x.stages;
}

/// 2. The memory model of each stage class: what it holds with no micro-batch in flight, and what each
/// one in flight adds.
void model_stage_memory(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const LayerMemory& layer_mem,
                        Scratch& x) {
    x.classes.clear();
    x.class_of.clear();
    for (const Stage& s : x.stages) {
        size_t k = 0;
        while (k < x.classes.size() &&
               !(x.classes[k].first->layers == s.layers && x.classes[k].first->moe_layers == s.moe_layers &&
                 x.classes[k].first->first == s.first && x.classes[k].first->last == s.last))
            ++k;
        if (k == x.classes.size())
            x.classes.push_back({&s, 0, stage_memory_in_passes(m, c, l, s, 0.0, layer_mem),
                                 stage_activation_bytes_per_micro_batch(s, layer_mem), {}});
        ++x.classes[k].count;
        x.class_of.push_back(k);
    }
}

/// A stage class's memory at its peak: `in_flight` micro-batches of activations, the allocator's share of
/// them on top, weighed against the optimizer step's moment.
MemoryBreakdown with_in_flight(const StageClass& k, double in_flight, double fragmentation) {
    MemoryBreakdown mem = k.at0;
    mem.add_activations(in_flight * k.act_per_mb, fragmentation);
    mem.settle_step_moment();
    return mem;
}

/// Each stage's memory at its in-flight count, the allocator's `fragmentation` share of the activations
/// on top; the fullest (the first of equals) decides whether the layout fits.
void place_memory(const Scratch& x, const std::vector<double>& in_flight, double fragmentation, Plan& plan) {
    // The fullest stage holds the most with its allocator cache; but the cache yields to allocations
    // (MemoryBreakdown::trim_cache), so allocated + runtime decide what fits, and a stage that does not fit
    // comes before one that does. Among stages that do not fit, the one whose allocations need the most is
    // the fullest: trimmed, each holds just that, and it is the one the report says is short.
    bool worst_over = false;
    double worst = -1;
    plan.needed_bytes = 0;
    for (size_t i = 0; i < x.stages.size(); ++i) {
        const MemoryBreakdown mem = with_in_flight(x.classes[x.class_of[i]], in_flight[i], fragmentation);
        const double needed = mem.allocated_bytes() + mem.runtime_bytes;
        plan.needed_bytes = std::max(plan.needed_bytes, needed);
        const bool over = needed > plan.capacity_bytes;
        const double key = over ? needed : mem.total_bytes();
        if ((over && !worst_over) || (over == worst_over && key > worst)) {
            worst_over = over;
            worst = key;
            plan.worst_memory_stage = x.stages[i].index;
            plan.memory = mem;
        }
    }
    plan.memory.trim_cache(plan.capacity_bytes);
    plan.memory_fits = plan.memory.total_bytes() <= plan.capacity_bytes;
}

/// 4. The traffic of the axes that run inside every layer (TP, CP, EP), per layer and micro-batch, and
/// what of it stays exposed, forward and backward.
struct LayerComm {
    int recompute_fwd = 0;
    bool has_ep = false;
    Traffic tp, cp, ep;
    int64_t tp_calls = 0, cp_calls = 0, ep_calls = 0;  // per layer and micro-batch
    // TP's exposed time per layer pass (both of its calls), dense and MoE layers, forward and backward.
    double tp_fwd_exp = 0, tp_bwd_exp = 0, tp_fwd_exp_moe = 0, tp_bwd_exp_moe = 0;
    // The vocabulary-parallel ends' one TP call each per micro-batch, and what of it is exposed: the input
    // embedding's all-reduce forward (SP: reduce-scatter, all-gather backward) on the first stage; on the
    // last, the output layer's input all-gather forward under SP (its backward's all-reduce or
    // reduce-scatter of the input gradient runs beside its weight-gradient GEMM, and hides under it).
    double embed_fwd = 0, embed_bwd = 0, head_fwd = 0;
    /// The ends stage `s` holds: their calls per micro-batch, and their exposed time forward and backward.
    static double ends(const Stage& s) { return (s.first ? 1.0 : 0.0) + (s.last ? 1.0 : 0.0); }
    double ends_fwd(const Stage& s) const { return (s.first ? embed_fwd : 0.0) + (s.last ? head_fwd : 0.0); }
    double ends_bwd(const Stage& s) const { return s.first ? embed_bwd : 0.0; }
    double cp_fwd_exp = 0, cp_bwd_exp = 0, ep_exp = 0;
    double sm_share = 0;  // what the SMs of hidden CP and EP traffic cost (overlap_sm_share)
};

LayerComm layer_comm(const ModelSpec& m, const Layout& l, const std::vector<GroupPlacement>& groups, const Fabric& fabric,
                     const GpuSpec& gpu, const LayerWork& dense, const LayerWork& moe) {
    const Efficiency& eff = gpu.eff;
    // A collective hidden under computation takes its SMs from it (comm.h); TP overlap is exempt: its
    // userbuffers move most chunks by ring exchange on one SM (Megatron-Bridge's RingExchangeOverlapCfg
    // num_sm 1) and torchtitan's async TP copies through symmetric memory.
    LayerComm x;
    x.sm_share = overlap_sm_share(gpu);
    x.recompute_fwd = l.recompute == Recompute::full ? 1 : 0;
    x.tp = tp_traffic(m, l, group(groups, Axis::tp), fabric);
    x.cp = cp_traffic(m, l, group(groups, Axis::cp), fabric);
    x.has_ep = m.moe && l.ep > 1;
    x.ep = x.has_ep ? ep_traffic(m, l, group(groups, Axis::ep), fabric) : Traffic{};
    x.tp_calls = l.tp > 1 ? 4 + 2 * x.recompute_fwd : 0;  // 2 fwd + 2 bwd (+2 recompute)
    x.cp_calls = l.cp > 1 ? 3 * (l.cp - 1) : 0;           // K/V fwd; K/V + dK/dV bwd
    x.ep_calls = x.has_ep ? 4 + 2 * x.recompute_fwd : 0;  // dispatch + combine, fwd and bwd
    // TP: exposed in full, unless the layout overlaps SP's collectives with the GEMMs beside them, one
    // chunk per TP rank (comm.h); the backward's dgrad and wgrad GEMMs are twice the forward's.
    if (l.tp > 1) {
        const bool overlap = overlaps_tp(l);
        auto pass = [&](double gemm_s) {
            const double comm_s = 2.0 * x.tp.time_s;
            return overlap ? chunked_overlap_exposed_s(comm_s, gemm_s, l.tp) : comm_s;
        };
        x.tp_fwd_exp = pass(dense.gemm_fwd_s);
        x.tp_bwd_exp = pass(2.0 * dense.gemm_fwd_s);
        x.tp_fwd_exp_moe = pass(moe.gemm_fwd_s);
        x.tp_bwd_exp_moe = pass(2.0 * moe.gemm_fwd_s);
        // Megatron-LM's VocabParallelEmbedding and output ColumnParallelLinear (whose backward launches
        // the input gradient's collective and then the weight gradient's GEMM,
        // LinearWithGradAccumulationAndAsyncCommunication), nanotron's TensorParallelEmbedding and LM
        // head: one TP call of the layers' size at each end per micro-batch, outside what TP overlap
        // chunks (its userbuffers serve the layers' linears).
        const double half = 0.5 * x.tp.time_s;  // SP: one of the pair (x.tp is reduce-scatter + all-gather)
        x.embed_fwd = l.sequence_parallel ? half : x.tp.time_s;
        x.embed_bwd = l.sequence_parallel ? half : 0.0;
        x.head_fwd = l.sequence_parallel ? half : 0.0;
    }
    auto beside = [share = x.sm_share](double comm_s, double window_s) {
        return exposed_beside_s(comm_s, std::min(comm_s, std::max(0.0, window_s)), share);
    };
    const double cp_steps = static_cast<double>(l.cp - 1);
    x.cp_fwd_exp = beside(cp_steps * x.cp.time_s, eff.overlap_cp * dense.attn_fwd_s);
    x.cp_bwd_exp = beside(2.0 * cp_steps * x.cp.time_s, eff.overlap_cp * dense.attn_bwd_s);
    x.ep_exp = x.ep.time_s;
    // EP: exposed in full, unless a forward chunk of one micro-batch is paired with a backward chunk of
    // another and each one's all-to-alls run under the other's computation: DualPipe (DeepSeek-V3 report
    // §3.2.1, Fig. 4), or Megatron's --overlap-moe-expert-parallel-comm, which pairs them the same way.
    // A MoE layer's four all-to-alls (dispatch and combine, forward and backward) hide under its forward
    // and backward computation, and only what exceeds that stays exposed. No fitted share decides.
    if (x.has_ep && overlaps_ep(l)) x.ep_exp = beside(x.ep.time_s, (moe.fwd_s + moe.bwd_s) / 4.0);
    return x;
}

/// 5. Each stage class's per-micro-batch times, with the per-layer traffic that stays exposed. Returns
/// the critical (slowest, then lowest-index) class.
const StageClass* time_stages(const Layout& l, const StepWork& w, const LayerComm& x, double chunk_share,
                              std::vector<StageClass>& classes) {
    const LayerWork& dense = w.dense;
    const LayerWork& moe = w.moe;
    const LayerWork& head = w.head;
    const int rf = x.recompute_fwd;
    const StageClass* critical = nullptr;
    for (StageClass& k : classes) {
        const Stage& s = *k.first;
        const double nd = static_cast<double>(s.layers - s.moe_layers) * chunk_share;
        const double ne = static_cast<double>(s.moe_layers) * chunk_share;
        const double n = nd + ne;
        // The share of the stage's layers whose forward is replayed: all but under full recomputation's
        // block method, which replays the first recompute_layers of each chunk.
        const double ph = replayed_share(l, s);
        StageTimes& t = k.times;
        const double tp_fwd = nd * x.tp_fwd_exp + ne * x.tp_fwd_exp_moe;
        t.fwd_s = nd * dense.fwd_s + ne * moe.fwd_s + (s.last ? head.fwd_s : 0) + tp_fwd + x.ends_fwd(s) +
                  (l.cp > 1 ? n * x.cp_fwd_exp : 0) + ne * (x.has_ep ? 2 : 0) * x.ep_exp;
        t.recompute_s = ph * (nd * dense.recompute_s + ne * moe.recompute_s +
                              static_cast<double>(rf) * (tp_fwd + ne * (x.has_ep ? 2 : 0) * x.ep_exp));
        t.bwd_s = nd * dense.bwd_s + ne * moe.bwd_s + (s.last ? head.bwd_s : 0) + nd * x.tp_bwd_exp + ne * x.tp_bwd_exp_moe +
                  x.ends_bwd(s) + (l.cp > 1 ? n * x.cp_bwd_exp : 0) + ne * (x.has_ep ? 2 : 0) * x.ep_exp + t.recompute_s;
        t.wgrad_s = nd * dense.wgrad_s + ne * moe.wgrad_s + (s.last ? head.wgrad_s : 0);
        if (!critical || t.total() > critical->times.total() ||
            (t.total() == critical->times.total() && s.index < critical->first->index))
            critical = &k;
    }
    return critical;
}

/// Every stage's report (the search reads only the totals and skips them).
void report_stages(const Scratch& x, const PipelineResult& pipe, double fragmentation, Plan& plan) {
    plan.stages.reserve(x.stages.size());
    for (size_t i = 0; i < x.stages.size(); ++i) {
        const StageClass& k = x.classes[x.class_of[i]];
        StageReport r{x.stages[i], with_in_flight(k, pipe.in_flight[i], fragmentation), pipe.in_flight[i], k.times,
                      k.act_per_mb};
        r.memory.trim_cache(plan.capacity_bytes);
        plan.stages.push_back(r);
    }
}

/// 10. FLOPs per token (model and hardware), the peak, then step time and throughput. Hardware FLOPs add
/// what recomputation replays: a whole layer forward under full recompute, the replayed modules' work under
/// selective (per GPU per micro-batch in StepWork, scaled back to one token of the whole model).
void finish_throughput(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const StepWork& w,
                       const std::vector<Stage>& stages, Plan& plan) {
    Throughput& th = plan.throughput;
    th.model_flops_per_token = model_flops_per_token(m, l.seq_len);
    double recompute_per_token = 0;
    if (l.recompute == Recompute::full)  // the block method replays only some layers: their share
        recompute_per_token = replayed_share(l, stages, m.layers) *
                              (th.model_flops_per_token - 6.0 * static_cast<double>(m.vocab * m.hidden)) / 3.0;
    if (l.recompute == Recompute::selective) {
        const double n_moe = static_cast<double>(moe_layers_in(m, 0, m.layers));
        const double per_gpu_mb = (static_cast<double>(m.layers) - n_moe) * w.dense.recompute_flops + n_moe * w.moe.recompute_flops;
        recompute_per_token = per_gpu_mb * static_cast<double>(l.tp * l.cp) /
                              (static_cast<double>(l.micro_batch) * static_cast<double>(l.seq_len));
    }
    th.hardware_flops_per_token = th.model_flops_per_token + recompute_per_token;
    th.peak_flops = c.gpu.peak_flops(l.precision);
    finish_step(plan, l, c);
}

/// 6. Per-axis totals on the critical stage: TP, CP and EP per layer and micro-batch. `layers_mb` and
/// `moe_layers_mb` are the layer passes of all micro-batches on that stage, `ends_mb` the passes of the
/// vocabulary-parallel ends it holds (embedding, output layer), one TP call each, `ends_exposed_s` what of
/// those calls stays exposed.
void add_layer_terms(const Layout& l, const LayerComm& lc, double layers_mb, double moe_layers_mb, double replayed,
                     double ends_mb, double ends_exposed_s, double step_flops, Plan& plan) {
    // The recomputed forward's 2 TP and 2 EP calls come only with the layers it replays.
    auto calls = [&](double n, int64_t per_layer) {
        const double again = 2.0 * static_cast<double>(lc.recompute_fwd);
        return n * (static_cast<double>(per_layer) - again) + std::round(replayed * n) * again;
    };
    if (l.tp > 1) {
        const double dense_mb = layers_mb - moe_layers_mb, moe_mb = moe_layers_mb;
        const double fwd = dense_mb * lc.tp_fwd_exp + moe_mb * lc.tp_fwd_exp_moe;
        const double bwd = dense_mb * lc.tp_bwd_exp + moe_mb * lc.tp_bwd_exp_moe;
        add_term(plan, term(Axis::tp, lc.tp, group(plan.groups, Axis::tp), calls(layers_mb, lc.tp_calls) + ends_mb,
                            fwd * (1.0 + lc.recompute_fwd * replayed) + bwd + ends_exposed_s), step_flops);
    }
    // CP and EP traffic that hides still costs its SMs (§5.3): on the critical path only if some of it waits.
    if (l.cp > 1)
        add_term(plan, term(Axis::cp, lc.cp, group(plan.groups, Axis::cp), layers_mb * static_cast<double>(lc.cp_calls),
                            layers_mb * (lc.cp_fwd_exp + lc.cp_bwd_exp), lc.sm_share), step_flops);
    if (lc.has_ep)
        add_term(plan, term(Axis::ep, lc.ep, group(plan.groups, Axis::ep), calls(moe_layers_mb, lc.ep_calls),
                            calls(moe_layers_mb, lc.ep_calls) * lc.ep_exp, lc.sm_share), step_flops);
}

/// 7. The pipeline stage: each rank's per-micro-batch times and the boundary send go to the closed forms
/// or the simulation (pipeline.h), which return the bubble, what the sends add and each rank's in-flight
/// count. Every micro-batch crosses each boundary forward and backward (× vpp chunks); the PP term's
/// exposed time is what the sends add to the step.
const PipelineResult& run_pipeline(const ModelSpec& m, const Layout& l, const Fabric& fabric, const EvalOptions& o,
                                   double step_flops, Scratch& x, Plan& plan) {
    PipelineSpec& spec = x.spec;
    spec.schedule = l.schedule;
    spec.pp = l.pp;
    spec.vpp = l.schedule == Schedule::interleaved ? l.vpp : 1;
    spec.micro_batches = plan.micro_batches;
    spec.ranks.clear();
    for (size_t i = 0; i < x.stages.size(); ++i) spec.ranks.push_back(x.classes[x.class_of[i]].times);
    spec.p2p_s = 0;
    spec.record_ops = o.keep != nullptr;
    Traffic pp{};
    const GroupPlacement& g = group(plan.groups, Axis::pp);
    if (l.pp > 1) {
        pp = pp_traffic(m, l, g, group(plan.groups, Axis::tp), fabric);
        spec.p2p_s = pp.time_s;
        spec.blocking_sends = blocks_pipeline_sends(l);
    }
    const bool simulate = o.keep != nullptr || (o.pipeline == PipelineMethod::simulated && l.pp > 1);
    if (simulate) x.pipeline = simulated_pipeline(spec, o.max_passes, o.memo);
    else closed_form_pipeline(spec, x.pipeline);
    const PipelineResult& r = x.pipeline;
    plan.time.bubble_s = r.bubble_s;
    if (l.pp > 1) {
        const double calls = 2.0 * static_cast<double>(plan.micro_batches) * static_cast<double>(spec.vpp) *
                             (l.schedule == Schedule::dualpipe ? 2.0 : 1.0);
        const CommTerm sends = term(Axis::pp, pp, g, calls, r.sends_exposed_s);
        add_term(plan, sends, step_flops);
        plan.time.pipeline_simulated = r.simulated;
        plan.time.pipeline_note = r.note;
        // What a simulation could take off the closed forms' bubble and exposed sends: down to the floor,
        // where the step counts the sends only up to their whole time (hence the floor without them, plus
        // that); nothing once simulated, or where a simulation falls back to the closed forms.
        if (!r.simulated) {
            const double floor_s = std::min(pipeline_floor_s(spec, spec.p2p_s), pipeline_floor_s(spec, 0.0) + sends.time_s);
            plan.time.pipeline_slack_s = std::max(0.0, r.bubble_s + sends.exposed_s - floor_s);
        }
    }
    return r;
}

}  // namespace

/// The 80 % band about `predicted`, stretched to the step planned at both ends of the middle half of the
/// host launch cost's plausible range. Runs last: the replans reuse the evaluation's scratch.
void widen_for_host(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const EvalOptions& o, double predicted,
                    ThroughputRange& r);

void evaluate_into(const ModelSpec& m, const ClusterSpec& c, const Layout& l, Plan& plan, const EvalOptions& o) {
    plan.capacity_bytes = c.gpu.hbm_usable_bytes;
    plan.rejection = check_layout(m, c, l);
    plan.stages.clear();
    plan.comm.clear();
    plan.groups.clear();
    plan.time = {};
    plan.throughput = {};
    plan.memory = {};
    plan.memory_fits = false;
    plan.worst_memory_stage = plan.critical_stage = plan.micro_batches = 0;
    if (plan.rejection) return;

    // 1-2. Layers onto pipeline ranks; each stage's memory model. A lean or memory-only evaluation
    // (the search) decides here, at the closed-form in-flight counts, whether the layout fits.
    const int64_t mb = micro_batches(l);
    plan.micro_batches = mb;
    Scratch& x = scratch();
    const std::vector<Stage>& stages = split(m, l, x);
    const bool shared_work = o.work && o.work->key == work_key(l);
    const LayerMemory own_mem = shared_work ? LayerMemory{} : layer_memory(m, l);
    const LayerMemory& layer_mem = shared_work ? o.work->memory : own_mem;
    model_stage_memory(m, c, l, layer_mem, x);
    const double cache_share = allocator_cache_share(c, l);
    if (o.depth != Depth::full) {
        x.pipeline.in_flight.clear();
        for (const Stage& s : stages) x.pipeline.in_flight.push_back(in_flight_micro_batches(l, s.index, mb));
        place_memory(x, x.pipeline.in_flight, cache_share, plan);
        if (o.depth == Depth::lean && !plan.memory_fits) return;
    }

    // Groups onto the machine: which tier each axis's traffic takes.
    place_groups(c, l, plan.groups);
    if (o.depth == Depth::memory) return;
    const Fabric fabric = make_fabric(c);

    // 3. Work of one layer for one micro-batch on one GPU (dense and MoE layers), and the LM head.
    const StepWork own = shared_work ? StepWork{} : step_work(m, c, l);
    const StepWork& w = shared_work ? *o.work : own;

    // 4-5. Per-layer TP/CP/EP traffic; each stage class's per-micro-batch times with what stays exposed.
    const double chunk_share = l.schedule == Schedule::dualpipe ? 0.5 : 1.0;  // a micro-batch crosses one of its 2 stages
    const LayerComm lc = layer_comm(m, l, plan.groups, fabric, c.gpu, w.dense, w.moe);
    const StageClass* critical = time_stages(l, w, lc, chunk_share, x.classes);
    plan.critical_stage = critical->first->index;

    // The critical stage sets the pace: m micro-batches of its compute, recompute and exposed traffic.
    const Stage& cs = stages[static_cast<size_t>(plan.critical_stage)];
    const double cnd = static_cast<double>(cs.layers - cs.moe_layers) * chunk_share;
    const double cne = static_cast<double>(cs.moe_layers) * chunk_share;
    const double dm = static_cast<double>(mb);
    plan.time.compute_s = dm * (cnd * (w.dense.fwd_s + w.dense.bwd_s) + cne * (w.moe.fwd_s + w.moe.bwd_s) +
                                (cs.last ? w.head.fwd_s + w.head.bwd_s : 0));
    // The share of the critical stage's layers replayed (full recomputation's block method: the first N of
    // each chunk; otherwise all).
    const double ph = replayed_share(l, cs);
    plan.time.recompute_s = dm * ph * (cnd * w.dense.recompute_s + cne * w.moe.recompute_s);
    const double step_flops = dm * (cnd * w.dense.model_flops + cne * w.moe.model_flops +
                                    (cs.last ? w.head.model_flops : 0) +
                                    ph * (cnd * w.dense.recompute_flops + cne * w.moe.recompute_flops));
    add_layer_terms(l, lc, std::round((cnd + cne) * dm), std::round(cne * dm), ph, dm * LayerComm::ends(cs),
                    dm * (lc.ends_fwd(cs) + lc.ends_bwd(cs)), step_flops, plan);

    // 7. The pipeline: bubble, exposed sends and in-flight counts; then each stage's memory at its count.
    const PipelineResult& pipe = run_pipeline(m, l, fabric, o, step_flops, x, plan);
    // A lean evaluation placed its memory at the closed-form counts already; only a full one, or a
    // simulated step (its own counts), places it here.
    if (o.depth == Depth::full || pipe.simulated) place_memory(x, pipe.in_flight, cache_share, plan);
    if (o.depth == Depth::full) report_stages(x, pipe, cache_share, plan);
    if (o.keep) {
        o.keep->spec = x.spec;
        o.keep->result = std::move(x.pipeline.passes);
    }

    // 8. Gradient synchronisation: the DP reduction and parameter gathers, a tied embedding's all-reduce.
    const StageParams owned = stage_params(m, l, cs, layer_mem);
    add_gradient_sync_terms(m, l, owned, cs.layers, critical->times, fabric, c.gpu, mb, step_flops, plan);

    // 9. Optimizer on the parameters this GPU owns after ZeRO sharding.
    const double owned_params = l.zero >= 1 ? owned.dense / static_cast<double>(l.dp * l.cp) +
                                                  owned.expert / static_cast<double>(std::max<int64_t>(1, expert_dp(l)))
                                            : owned.total();
    plan.time.optimizer_s = optimizer_step_s(owned_params, l.grad_dtype, c);

    // 10. Step time and throughput, and how far runs like it strayed from their predictions.
    finish_throughput(m, c, l, w, x.stages, plan);
    if (o.depth == Depth::full) {
        plan.throughput.range = throughput_range(plan.throughput.tokens_per_s_per_gpu, m.moe.has_value(), c.gpu.generation,
                                                 framework_family(l.framework), domain_scope(c.gpus, c.scale_up_domain));
        widen_for_host(m, c, l, o, plan.throughput.tokens_per_s_per_gpu, plan.throughput.range);
    }
}

void widen_for_host(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const EvalOptions& o, double predicted,
                    ThroughputRange& r) {
    // The host's launch cost is a sourced estimate, not fitted (docs/model.md §4): the step is planned
    // again with it a quarter and three quarters of the way across its plausible range (the middle half
    // of it), and each side of the band widens by that side's shift, added in quadrature to the class
    // band (log ratios, independent errors). Large layers barely move; small ones, where the host sets
    // the pace, get the uncertainty they carry. (The wider tenth-to-nine-tenths took vTrain's coverage to
    // 96 %: the class band already holds part of the host's spread across frameworks; docs/validation.md.)
    const Constant* k = find_constant("layer_overhead_us");
    if (!k || predicted <= 0) return;
    const double w = std::log(r.high / predicted);  // the class band, symmetric in ratio about the prediction
    double down = 0, up = 0;  // log shifts of throughput towards slower and faster
    for (double at : {0.25, 0.75}) {
        const double value = k->fit_lo + at * (k->fit_hi - k->fit_lo);
        if (std::abs(value - k->to_json(c.gpu.eff)) <= 1e-9 * value) continue;  // the plan itself (3 ms: 3/4 across)
        ClusterSpec alt = c;
        k->from_json(alt.gpu.eff, value);
        EvalOptions lean = o;
        lean.depth = Depth::lean;
        lean.keep = nullptr;
        lean.work = nullptr;
        const double t = evaluate(m, alt, l, lean).throughput.tokens_per_s_per_gpu;
        if (t <= 0) continue;
        const double shift = std::log(t / predicted);
        down = std::max(down, -shift);
        up = std::max(up, shift);
    }
    if (down <= 0 && up <= 0) return;
    r.host_slower = down;
    r.host_faster = up;
    r.low = predicted / std::exp(std::hypot(w, down));
    r.high = predicted * std::exp(std::hypot(w, up));
    if (std::max(down, up) > 0.01) r.basis += " · with the host launch cost's range";
}

std::optional<LayoutProblem> trace_refusal(const ModelSpec& m, const ClusterSpec& c, const Layout& l,
                                           int64_t max_passes) {
    if (auto bad = check_layout(m, c, l)) return bad;
    // In double: the product overflows int64 for a global batch near 2^63.
    const double passes = double(micro_batches(l)) * double(l.pp) * double(l.vpp);
    if (passes > double(max_passes))
        return LayoutProblem{"trace_too_large", "layout.global_batch",
                             fmt::format("a timeline of at most {} passes (micro-batches × pp × vpp), got {:.0f}",
                                         max_passes, passes)};
    return std::nullopt;
}

double closed_form_pipeline_s(const Plan& p) {
    const Plan closed = evaluate_closed_form(p.model, p.cluster, p.layout);
    if (closed.rejection) return 0;
    double sync_exposed_s = 0;
    for (const CommTerm& c : closed.comm)
        if (c.gradient_sync) sync_exposed_s += c.exposed_s;
    return closed.time.step_s - closed.time.optimizer_s - sync_exposed_s;
}

}  // namespace shardplan
