// Single changes that make a layout fit (include/shardplan/suggest.h).
#include "shardplan/suggest.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

namespace shardplan {

namespace {

// A degree doubled (or halved) with dp taking up the difference; nullopt when the GPUs do not divide.
std::optional<Layout> with_degree(const Layout& l, int64_t Layout::*axis, int64_t to) {
    Layout n = l;
    n.*axis = to;
    const int64_t model_parallel = n.tp * n.cp * n.pp;
    const int64_t gpus = ranks(l);
    if (to < 1 || gpus % model_parallel != 0) return std::nullopt;
    n.dp = gpus / model_parallel;
    if (n.dp < 1) return std::nullopt;
    if (axis == &Layout::tp) n.sequence_parallel = l.sequence_parallel || l.tp == 1;  // SP follows a TP > 1
    return n;
}

}  // namespace

std::vector<std::pair<std::string, Layout>> recompute_options(const ModelSpec& m, const ClusterSpec& c, const Layout& l,
                                                              const std::function<Plan(const Layout&)>& plan) {
    std::vector<std::pair<std::string, Layout>> out;
    if (l.recompute == Recompute::full) return out;
    // Selective sets of growing reach, each a superset of what `l` already replays.
    const uint32_t have = l.recompute == Recompute::selective
                              ? (l.recompute_modules ? l.recompute_modules : module_bit(RecomputeModule::core_attn))
                              : 0;
    // The cheap replays, the attention core aside: the norms, the experts' activation, MLA's up-projections,
    // each alone and all together (Megatron-Bridge's recipes name these: ["mla_up_proj"], ["moe_act"],
    // ["layernorm", "moe_act"]).
    std::vector<uint32_t> sets = {module_bit(RecomputeModule::core_attn)};
    uint32_t cheap = 0;
    for (const RecomputeModule r : {RecomputeModule::layernorm, RecomputeModule::moe_act, RecomputeModule::mla_up_proj}) {
        if ((r == RecomputeModule::moe_act && !m.moe) || (r == RecomputeModule::mla_up_proj && !m.mla)) continue;
        sets.push_back(module_bit(r));
        cheap |= module_bit(r);
    }
    if (std::popcount(cheap) > 1) sets.push_back(cheap);
    const uint32_t elementwise = cheap | module_bit(RecomputeModule::core_attn);
    uint32_t blocks = elementwise | module_bit(RecomputeModule::mlp);
    if (m.moe) blocks |= module_bit(RecomputeModule::moe) | module_bit(RecomputeModule::shared_experts);
    sets.push_back(elementwise);
    sets.push_back(blocks);
    for (const uint32_t set : sets) {
        if ((set & have) != have || set == have) continue;
        Layout n = l;
        n.recompute = Recompute::selective;
        n.recompute_modules = set;
        out.emplace_back("recompute " + recompute_setting_string(n), n);
    }
    // Full recomputation of only as many layers per chunk as it takes (Megatron's block method):
    // memory falls as N grows, so the smallest N that fits, found by bisection, replays the least. (JAX
    // frameworks scan their layers under one remat policy; their policies between "minimal" and "full",
    // which save some of each layer's tensors, cost about what this does for the same memory.)
    Layout n = l;
    n.recompute = Recompute::full;
    n.recompute_modules = 0;
    if (!check_layout(m, c, l)) {
        Layout b = n;
        b.recompute_method = RecomputeMethod::block;
        const int64_t chunks = rank_chunks(l);
        int64_t most = 0;
        for (const Stage& s : split_stages(m, l)) most = std::max(most, (s.layers + chunks - 1) / chunks);
        auto fits_with = [&](int64_t layers) {
            b.recompute_layers = layers;
            const Plan p = plan(b);
            return !p.rejection && p.memory_fits;
        };
        if (most > 1 && fits_with(most - 1)) {
            int64_t lo = 1, hi = most - 1;  // hi fits
            while (lo < hi) {
                const int64_t mid = (lo + hi) / 2;
                if (fits_with(mid)) hi = mid;
                else lo = mid + 1;
            }
            b.recompute_layers = hi;
            out.emplace_back(fmt::format("recompute full, the first {} layer{} of each stage{} (block)", hi,
                                         hi == 1 ? "" : "s", chunks > 1 ? " chunk" : ""),
                             b);
        }
    }
    out.emplace_back("recompute full", n);
    return out;
}

std::vector<FitChange> fit_changes(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Plan& planned) {
    std::vector<std::pair<std::string, Layout>> candidates =
        recompute_options(m, c, l, [&](const Layout& n) { return evaluate(m, c, n); });
    auto add = [&](std::string what, Layout n) { candidates.emplace_back(std::move(what), std::move(n)); };
    for (int z = l.zero + 1; z <= 3; ++z) {
        Layout n = l;
        n.zero = z;
        add(fmt::format("ZeRO {} → {}", l.zero, z), n);
    }
    struct Degree { const char* name; int64_t Layout::*axis; };
    for (const Degree d : {Degree{"TP", &Layout::tp}, {"PP", &Layout::pp}, {"CP", &Layout::cp}})
        if (const auto n = with_degree(l, d.axis, l.*d.axis * 2))
            add(fmt::format("{} {} → {} (DP {} → {})", d.name, l.*d.axis, (*n).*d.axis, l.dp, n->dp), *n);
    // A MoE model's routed experts divide by EP, carved from the DP·CP ranks (DP stays): the smallest
    // doubling that fits, as one change, else one doubling.
    if (m.moe) {
        Layout n = l;
        n.ep = l.ep * 2;
        for (Layout e = n; !check_layout(m, c, e); e.ep *= 2) {
            const Plan p = evaluate(m, c, e);
            if (!p.rejection && p.memory_fits) {
                n = e;
                break;
            }
        }
        add(fmt::format("EP {} → {}", l.ep, n.ep), n);
    }
    if (l.micro_batch > 1) {
        Layout n = l;
        n.micro_batch = l.micro_batch / 2;
        add(fmt::format("micro-batch {} → {}", l.micro_batch, n.micro_batch), n);
    }
    if (l.tp > 1 && !l.sequence_parallel) {
        Layout n = l;
        n.sequence_parallel = true;
        add("sequence parallelism on", n);
    }
    // Where the optimizer step's fp32 copies of 16-bit gradients set the peak, fp32 gradients need no copy
    // (Megatron's --accumulate-allreduce-grads-in-fp32): 2 + 4 bytes a parameter held against 2 + 2 + 4 at
    // the step when the optimizer owns them all (docs/model.md §2.5).
    if (l.grad_dtype != GradDtype::fp32 && planned.memory.peak == PeakMoment::optimizer) {
        Layout n = l;
        n.grad_dtype = GradDtype::fp32;
        add("gradients in fp32 (no copy at the optimizer step)", n);
    }
    if (l.attention_kernel == AttentionKernel::unfused) {
        Layout n = l;
        n.attention_kernel = framework_defaults(l.framework).attention;
        add(fmt::format("{} attention", enum_name(n.attention_kernel)), n);
    }
    std::vector<FitChange> out;
    for (auto& [what, n] : candidates) {
        if (check_layout(m, c, n)) continue;  // not runnable (a degree that no longer divides, ...)
        Plan p = evaluate(m, c, n);
        if (p.rejection) continue;
        out.push_back({what, n, std::move(p)});
    }
    std::stable_sort(out.begin(), out.end(), [](const FitChange& a, const FitChange& b) {
        if (a.plan.memory_fits != b.plan.memory_fits) return a.plan.memory_fits;
        if (a.plan.memory_fits) return a.plan.throughput.tokens_per_s_per_gpu > b.plan.throughput.tokens_per_s_per_gpu;
        return a.plan.memory.total_bytes() < b.plan.memory.total_bytes();
    });
    return out;
}

}  // namespace shardplan
