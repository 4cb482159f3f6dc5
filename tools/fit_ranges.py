#!/usr/bin/env python3
# Rewrites the 80 % throughput ranges (src/model/ranges.cpp, between RANGES-BEGIN and RANGES-END) from the
# leave-one-source-out residuals of calibration.json: for each class of runs (dense/MoE × GPU generation ×
# framework family, and the wider classes it falls back to) the 10th and 90th percentiles of
# log(predicted/measured) over the held-out predictions. Classes with fewer than 20 runs are still written
# (the planner falls back past them, ranges.h). Then rebuild, rerun the tests (golden reports carry the
# ranges) and tools/update_validation_doc.sh.
# Usage: tools/fit_ranges.py   (from the repository root, after a build)
import json, math, subprocess, collections

out = subprocess.run(['./build/shardplan', 'validate', '../shared/validation/calibration.json',
                      '--leave-one-source-out', '--json'], capture_output=True, text=True, check=True).stdout
cases = json.loads(out)['summary']['leave_one_source_out']['cases']


def quantile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


groups = collections.defaultdict(list)
for c in cases:
    r = math.log1p(c['throughput_error'])  # log(pred/meas)
    k, g, f = c['kind'], c['generation'], c['family']
    for key in ((k, g, f), (k, g, ''), (k, '', ''), ('', '', '')):
        groups[key].append(r)

lines = []
for (k, g, f), v in sorted(groups.items()):
    lines.append('        {"%s", "%s", "%s", %d, %.4f, %.4f},' % (k, g, f, len(v), quantile(v, 0.1), quantile(v, 0.9)))
src = open('src/model/ranges.cpp').read()
b = src.index('        // RANGES-BEGIN')
e = src.index('        // RANGES-END')
src = src[:b] + '        // RANGES-BEGIN (tools/fit_ranges.py: kind, generation, family, runs, log q10, log q90)\n' + \
      '\n'.join(lines) + '\n' + src[e:]
open('src/model/ranges.cpp', 'w').write(src)
print('%d held-out runs, %d classes' % (len(cases), len(groups)))
for (k, g, f), v in sorted(groups.items()):
    if len(v) >= 20:
        print('  %-6s %-10s %-10s %4d runs: measured within [%.2f, %.2f] × predicted' %
              (k or 'all', g or '-', f or '-', len(v), math.exp(-quantile(v, 0.9)), math.exp(-quantile(v, 0.1))))
