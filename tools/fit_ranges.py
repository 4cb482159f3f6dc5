#!/usr/bin/env python3
# Rewrites the 80 % throughput ranges (src/model/ranges.cpp, between RANGES-BEGIN and RANGES-END) from
# held-out residuals r = log(predicted/measured): calibration.json's leave-one-source-out ones, and the runs
# of the other validation files (vTrain, the Ultra-Scale Playbook, BigScience's BLOOM search, SimuMax's
# B200 node), which no fit has seen. Each class of runs (dense/MoE × GPU generation × framework family ×
# one scale-up domain or several, and the wider classes it falls back to) gets a band symmetric about the
# prediction, measured within [P·e^−w, P·e^w]. The planner widens each side of it, in quadrature, by the
# shift the host launch cost's range makes on that side (plan.cpp, widen_for_host; `range_host_shift` in
# validate's JSON), so a run needs w_i = sqrt(r² − h²) of the band, h its shift on its residual's side, and
# w is the q-quantile of w_i over the class's runs (|r| where the host does not set the pace). The
# other files' runs join their own framework family's classes only: each is one source, often of one
# framework and one cluster, and the classes for any framework stay those of calibration.json's several.
# One q serves every class, chosen so that the bands cover 80 % of a calibration source they were not built
# from: for each source, bands are rebuilt from the other sources' residuals and scored on its own (nested
# leave-one-source-out); q is the smallest quantile whose pooled coverage reaches 80 %. A band centred on
# the held-out bias instead (its 10th–90th percentiles) covered 49 % of unseen sources, since the next
# source's bias is as likely the other way (docs/validation.md). Classes with fewer than 20 runs are still
# written (the planner falls back past them, ranges.h). Then rebuild, rerun the tests (golden reports
# carry the ranges) and tools/update_validation_doc.sh.
# Usage: tools/fit_ranges.py   (from the repository root, after a build)
import json, math, subprocess, collections

MIN_RUNS = 20  # kMinBandRuns in ranges.h
TARGET = 0.80
OTHER_FILES = ['../shared/validation/vtrain_single_node.json', '../shared/validation/ultrascale_playbook.json',
               'examples/validation/bigscience_tr11_search.json', 'examples/validation/simumax_b200.json']


def validate(path, *flags):
    return json.loads(subprocess.run(['./build/shardplan', 'validate', path, '--json', *flags], capture_output=True,
                                     text=True, check=True).stdout)


def needed(c, shift):
    """The class band a run needs to fall inside its range: its residual beyond the host's shift on its side."""
    r = math.log1p(c['throughput_error'])  # log(predicted/measured): > 0, measured below the prediction
    h = shift[0] if r > 0 else shift[1]
    return math.sqrt(max(0.0, r * r - h * h))


# A run: (band it needs, kind, generation, family, scope, source, from calibration.json).
cases = validate('../shared/validation/calibration.json', '--leave-one-source-out')
runs = [(needed(c, c['range_host_shift']), c['kind'], c['generation'], c['family'], c['scope'], c['source'], True)
        for c in cases['summary']['leave_one_source_out']['cases']]
for path in OTHER_FILES:
    runs += [(needed(c, c['predicted']['range_host_shift']), c['kind'], c['generation'], c['family'], c['scope'],
              c['source'], False)
             for c in validate(path)['cases'] if c['throughput_error'] is not None and c['family']]


def quantile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def classes(k, g, f, s):  # from the most specific to the widest, as throughput_range() looks
    return ((k, g, f, s), (k, g, f, ''), (k, g, '', ''), (k, '', '', ''), ('', '', '', ''))


def bands(rows, q):
    groups = collections.defaultdict(list)
    for need, k, g, f, s, _, calibration in rows:
        for key in classes(k, g, f, s):
            if calibration or key[2]:  # the other files: their family's classes only
                groups[key].append(need)
    return {key: (len(v), quantile(v, q)) for key, v in groups.items()}


def half_width(b, k, g, f, s):
    for key in classes(k, g, f, s):
        if key in b and (b[key][0] >= MIN_RUNS or not key[0]):
            return b[key][1]
    return 0.0


def coverage(rows, b):
    return sum(1 for need, k, g, f, s, *_ in rows if need <= half_width(b, k, g, f, s)) / max(1, len(rows))


def nested(q, source):
    return coverage([x for x in runs if x[5] == source], bands([x for x in runs if x[5] != source], q))


calibration_sources = sorted({x[5] for x in runs if x[6]})
n_calibration = sum(1 for x in runs if x[6])


def nested_coverage(q):
    return sum(nested(q, s) * sum(1 for x in runs if x[5] == s) for s in calibration_sources) / n_calibration


qs = [0.70 + 0.01 * i for i in range(30)]
cover = {q: nested_coverage(q) for q in qs}
q = next((q for q in qs if cover[q] >= TARGET), qs[-1])
table = bands(runs, q)

lines = []
for (k, g, f, s), (n, w) in sorted(table.items()):
    lines.append('        {"%s", "%s", "%s", "%s", %d, %.4f},' % (k, g, f, s, n, w))
src = open('src/model/ranges.cpp').read()
b = src.index('        // RANGES-BEGIN')
e = src.index('        // RANGES-END')
src = src[:b] + ('        // RANGES-BEGIN (tools/fit_ranges.py: kind, generation, family, scope, runs, log half-width; '
                 'q = %.2f of the band each run needs, unseen-source coverage %.0f %%)\n' % (q, 100 * cover[q])) + \
      '\n'.join(lines) + '\n' + src[e:]
open('src/model/ranges.cpp', 'w').write(src)
print('%d held-out runs of calibration.json, %d of the other files, %d classes; q = %.2f: a calibration source left out '
      'of the bands falls inside %.0f %% of the time' % (n_calibration, len(runs) - n_calibration, len(table), q,
                                                          100 * cover[q]))
print('  nested coverage by q: ' + ', '.join('%.2f %.0f %%' % (x, 100 * cover[x]) for x in qs[::2]))
for source in sorted({x[5] for x in runs if not x[6]}):
    own = [x for x in runs if x[5] == source]
    print('  %-26s %5d runs: inside %.0f %% (the bands as written), %.0f %% (built without them)' %
          (source, len(own), 100 * coverage(own, table), 100 * nested(q, source)))
for (k, g, f, s), (n, w) in sorted(table.items()):
    if n >= MIN_RUNS:
        print('  %-6s %-10s %-10s %-8s %4d runs: measured within [%.2f, %.2f] × predicted' %
              (k or 'all', g or '-', f or '-', s or '-', n, math.exp(-w), math.exp(w)))
