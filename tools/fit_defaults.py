#!/usr/bin/env python3
# Refits the built-in efficiency defaults: runs `shardplan calibrate --per-generation` on the published
# runs (one set shared by every generation, then each generation's from it, all from generic values:
# the fit each leave-one-source-out refit makes, with every source) and rewrites the block between
# FITTED-BEGIN and FITTED-END in src/model/hardware.cpp. The fit does not start from the built-in
# constants, so one pass is the answer; the script rebuilds and fits once more to confirm the block no
# longer changes (at most --rounds passes). Then rerun the tests (golden reports and the validation
# bounds move with it), tools/fit_ranges.py and tools/update_validation_doc.sh.
# Usage: tools/fit_defaults.py [--rounds N] [--holdout-every N]   (from the repository root, after a build)
import json, os, subprocess, sys, tempfile

args = sys.argv[1:]
rounds = 2
if '--rounds' in args:
    i = args.index('--rounds')
    rounds = int(args[i + 1])
    del args[i:i + 2]

# The fitted constants, from the one table (include/shardplan/constants.h) as `presets --json` lists it:
# (C++ field, JSON key, SI units per JSON unit).
_table = json.loads(subprocess.run(['./build/shardplan', 'presets', '--json'], capture_output=True, text=True,
                                   check=True).stdout)['constants']
KEYS = [(k['cpp_field'], k['key'], k['si_per_json']) for k in _table if k['fitted']]


def fit_once():
    tmp = os.path.join(tempfile.mkdtemp(), 'generations.json')
    out = subprocess.run(['./build/shardplan', 'calibrate', '../shared/validation/calibration.json',
                          '--per-generation', '-o', tmp] + args, capture_output=True, text=True, check=True).stdout
    prof = json.load(open(tmp))
    body = []
    for gen, p in prof.items():
        e = p['efficiency']
        body.append('    if (generation == "%s") {  // %d runs' % (gen, p['calibration']['fitted_on']['runs']))
        for field, key, scale in KEYS:
            body.append('        e.%s = %.4g;' % (field, e[key] * scale))
        body.append('    }')
    src = open('src/model/hardware.cpp').read()
    start = src.index('Efficiency default_efficiency(const std::string& generation) {')
    b = src.index('    // FITTED-BEGIN', start)
    e = src.index('    // FITTED-END\n', start)
    new = src[:b] + '    // FITTED-BEGIN (tools/fit_defaults.py: shardplan calibrate calibration.json --per-generation)\n' + \
        '\n'.join(body) + '\n' + src[e:]
    open('src/model/hardware.cpp', 'w').write(new)
    return out, new != src


for r in range(1, rounds + 1):
    out, changed = fit_once()
    print('round %d:\n%s' % (r, out))
    if not changed:
        print('the constants did not change: done')
        break
    subprocess.run(['cmake', '--build', 'build', '-j2', '--target', 'shardplan'], check=True,
                   stdout=subprocess.DEVNULL)
