// Group placement on scale-up domains (docs/model.md §6).
#include "shardplan/topology.h"

#include <algorithm>
#include <numeric>

#include "shardplan/hardware.h"
#include "shardplan/layout.h"

namespace shardplan {

int64_t domains_spanned(int64_t stride, int64_t size, int64_t domain, int64_t world) {
    if (size <= 1) return 1;
    if (stride >= domain) return size;  // consecutive members are at least a domain apart
    const int64_t block = stride * size;
    if (block <= domain && domain % block == 0) return 1;  // aligned blocks tile each domain
    if (domain % stride == 0 && block % domain == 0) return block / domain;
    // Irregular sizes (TP16 on 72-GPU racks): a group starting at offset x inside its domain spans
    // floor((x + span) / D) + 1 domains, which grows with x, so the worst group is the one whose start
    // has the largest reachable offset. Starts are i + k·block (i < stride); offsets repeat with period
    // D / gcd(block, D) in k. O(D) at most, and only here.
    const int64_t span = (size - 1) * stride;
    const int64_t blocks = std::max<int64_t>(1, world / block);
    const int64_t period = domain / std::gcd(block, domain);
    int64_t x = 0;
    for (int64_t k = 0; k < std::min(blocks, period) && x < domain - 1; ++k) {
        const int64_t a = (k * block) % domain;
        x = a + stride - 1 >= domain - 1 ? domain - 1 : std::max(x, a + stride - 1);
    }
    return (x + span) / domain + 1;
}

int64_t axis_stride(const Layout& l, Axis a) {
    int64_t stride = 1;
    for (Axis x : l.order) {
        if (x == a) return stride;
        switch (x) {
            case Axis::tp: stride *= l.tp; break;
            case Axis::cp: stride *= l.cp; break;
            case Axis::dp: stride *= l.dp; break;
            case Axis::pp: stride *= l.pp; break;
            default: break;  // ep is carved out of tp·cp·dp: it adds no extent of its own
        }
    }
    return stride;
}

namespace {

GroupPlacement place(Axis axis, int64_t size, int64_t stride, int64_t domain, int64_t world) {
    GroupPlacement g;
    g.axis = axis;
    g.size = size;
    g.stride = stride;
    g.domains_spanned = domains_spanned(stride, size, domain, world);
    g.per_domain = (size + g.domains_spanned - 1) / g.domains_spanned;
    return g;
}

// A group that is the product of two axes (dp×cp for dense gradients, ep×etp inside a stage) occupies
// as many members per domain as the two contribute together, capped by the domain size.
GroupPlacement combine(Axis axis, const GroupPlacement& a, const GroupPlacement& b, int64_t domain) {
    GroupPlacement g;
    g.axis = axis;
    g.size = a.size * b.size;
    g.stride = std::min(a.stride, b.stride);
    g.per_domain = std::min({a.per_domain * b.per_domain, g.size, domain});
    g.domains_spanned = (g.size + g.per_domain - 1) / g.per_domain;
    return g;
}

}  // namespace

const GroupPlacement* find_group(const std::vector<GroupPlacement>& groups, Axis a) {
    for (const GroupPlacement& g : groups)
        if (g.axis == a) return &g;
    return nullptr;
}

std::vector<GroupPlacement> place_groups(const ClusterSpec& c, const Layout& l) {
    std::vector<GroupPlacement> out;
    place_groups(c, l, out);
    return out;
}

int64_t domain_occupancy(const ClusterSpec& c, int64_t world) {
    const int64_t D = c.scale_up_domain;
    if (world <= D || world % D == 0) return D;
    const int64_t node = std::clamp<int64_t>(c.gpus_per_node, 1, D);
    for (int64_t d = D - D % node; d >= node; d -= node)
        if (world % d == 0) return d;
    return D;
}

void place_groups(const ClusterSpec& c, const Layout& l, std::vector<GroupPlacement>& out) {
    const int64_t world = ranks(l);
    const int64_t D = domain_occupancy(c, world);
    out.clear();
    const GroupPlacement tp = place(Axis::tp, l.tp, axis_stride(l, Axis::tp), D, world);
    const GroupPlacement cp = place(Axis::cp, l.cp, axis_stride(l, Axis::cp), D, world);
    const GroupPlacement pp = place(Axis::pp, l.pp, axis_stride(l, Axis::pp), D, world);
    const GroupPlacement dp = place(Axis::dp, l.dp, axis_stride(l, Axis::dp), D, world);
    out.push_back(tp);
    out.push_back(cp);
    out.push_back(pp);
    // Dense gradients are reduced over dp×cp (CP ranks hold the same weights).
    out.push_back(l.cp > 1 ? combine(Axis::dp, dp, cp, D) : dp);
    if (l.ep > 1 || l.etp > 0) {
        // Expert grid inside one stage: etp innermost, then ep, then edp (order of ep vs dp kept).
        const int64_t etp = effective_etp(l);
        const int64_t edp = expert_dp(l);
        const int64_t inner = std::min({axis_stride(l, Axis::tp), axis_stride(l, Axis::cp), axis_stride(l, Axis::dp)});
        const auto pos = [&](Axis a) { return std::find(l.order.begin(), l.order.end(), a) - l.order.begin(); };
        const bool ep_inside_dp = pos(Axis::ep) < pos(Axis::dp);
        const int64_t ep_stride = inner * etp * (ep_inside_dp ? 1 : edp);
        const int64_t edp_stride = inner * etp * (ep_inside_dp ? l.ep : 1);
        out.push_back(place(Axis::ep, l.ep, ep_stride, D, world));
        out.push_back(place(Axis::etp, etp, inner, D, world));
        out.push_back(place(Axis::edp, edp, edp_stride, D, world));
    }
}

}  // namespace shardplan
