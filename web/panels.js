// shardplan web planner, its panels: compare against a pinned plan, launch configurations and the trace
// download, the search (pins, Pareto front, why #1 wins), "make it fit", loading a layout, and the
// keyboard steps through valid degrees. Loaded before app.js, whose helpers ($, el, post, state, ...)
// these functions use when they run.
'use strict';
// ---- compare: a pinned plan against the current one, line by line (memory per category, traffic and
// exposed time per axis, the step breakdown, throughput), with the change from pinned to current.
let pinned = null, current = null;
function compareRows(a, b) {
  const rows = [['layout', a.layout_string, b.layout_string, null],
                ['tokens/s per GPU', a.throughput.tokens_per_s_per_gpu, b.throughput.tokens_per_s_per_gpu, 'rate'],
                ['MFU', a.throughput.mfu, b.throughput.mfu, 'ratio'],
                ['fits', a.memory.fits ? 'yes' : 'no', b.memory.fits ? 'yes' : 'no', null]];
  for (const [k, label] of [['step_s', 'step'], ['compute_s', 'compute'], ['recompute_s', 'recompute'],
                            ['exposed_comm_s', 'exposed communication'], ['bubble_s', 'pipeline bubble'],
                            ['optimizer_s', 'optimizer step']])
    rows.push([label, a.time[k], b.time[k], 'time']);
  for (const [k, label] of [['total_bytes', 'memory per GPU'], ['margin_bytes', 'memory to spare'],
                            ['weights_bytes', 'weights'], ['grads_bytes', 'gradients'],
                            ['optimizer_bytes', 'optimizer state'], ['activations_bytes', 'activations'],
                            ['other_bytes', 'buffers']])
    rows.push([label, a.memory[k], b.memory[k], 'bytes']);
  // An axis can carry more than one term (PP's sends and a tied embedding's all-reduce): summed.
  const axes = [...new Set([...a.comm, ...b.comm].map((c) => c.axis))];
  const total = (p, axis, k) => p.comm.filter((c) => c.axis === axis).reduce((s, c) => s + c[k], 0);
  for (const axis of axes) {
    rows.push([`${axis.toUpperCase()} traffic`, total(a, axis, 'bytes_per_step'), total(b, axis, 'bytes_per_step'), 'bytes']);
    rows.push([`${axis.toUpperCase()} exposed`, total(a, axis, 'exposed_s'), total(b, axis, 'exposed_s'), 'time']);
  }
  return rows;
}
function renderCompare() {
  $('compare-section').hidden = !pinned;
  if (!pinned || !current) return;
  const show = (v, kind) => kind === 'time' ? fmtTime(v) : kind === 'bytes' ? fmtBytes(v) : kind === 'ratio'
    ? (100 * v).toFixed(1) + ' %' : kind === 'rate' ? Math.round(v).toLocaleString('en-US') : String(v);
  $('compare').tBodies[0].replaceChildren(...compareRows(pinned, current).map(([label, a, b, kind]) => {
    const tr = el('tr');
    let change = '';
    // Changes below 0.05 % are rounding, not a difference.
    if (kind && typeof a === 'number' && typeof b === 'number' && Math.abs(b - a) > 5e-4 * Math.max(Math.abs(a), Math.abs(b))) {
      const d = b - a, sign = d > 0 ? '+' : '−';
      change = kind === 'ratio' ? `${sign}${Math.abs(100 * d).toFixed(1)} points`
        : sign + show(Math.abs(d), kind) + (a !== 0 ? ` (${sign}${Math.abs(100 * d / a).toFixed(1)} %)` : '');
      // Better is faster, higher MFU, less time and less memory.
      tr.className = (kind === 'rate' || kind === 'ratio') === d > 0 ? 'better' : 'worse';
    }
    tr.append(el('td', {}, label), el('td', { class: 'num' }, show(a, kind)), el('td', { class: 'num' }, show(b, kind)),
              el('td', { class: 'num' }, change));
    return tr;
  }));
}

// ---- exports: the layout as a framework's launch configuration (POST /api/export), or its reason not
// to; the simulated step as a Chrome trace file for Perfetto.
async function showExport(format) {
  fromControls();
  $('export-section').hidden = false;
  $('export-title').textContent = `${format} launch configuration for ${current ? current.layout_string : ''}`;
  try {
    // With no framework chosen, the one exported to decides its own settings (gradient dtype, overlaps), as
    // the CLI plans an export: what it writes is then what it runs, and the title says at what throughput.
    const body = { ...buildCase(), format };
    if (!state.fw) for (const key of Object.values(FRAMEWORK_SETTINGS)) delete body.layout[key];
    const r = await post('/api/export', body);
    const p = r.planned;
    if (p && p.tokens_per_s_per_gpu !== undefined)
      $('export-title').textContent = `${format} launch configuration for ${p.layout_string}, planned as ${p.framework} runs it: ` +
        `${Math.round(p.tokens_per_s_per_gpu).toLocaleString('en-US')} tokens/s per GPU`;
    $('export-text').textContent = r.text;
    $('export-refusal').hidden = true;
    $('export-copy').hidden = false;
  } catch (e) {
    $('export-text').textContent = '';
    $('export-refusal').textContent = e.message;
    $('export-refusal').hidden = false;
    $('export-copy').hidden = true;
  }
}
async function downloadTrace() {
  fromControls();
  try {
    const trace = await post('/api/trace', buildCase());
    const url = URL.createObjectURL(new Blob([JSON.stringify(trace)], { type: 'application/json' }));
    const a = el('a', { href: url, download: `shardplan-trace-${(current?.layout_string || 'plan').replaceAll('·', '-')}.json` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } catch (e) {
    showError(e.message);
  }
}

// ---- search
async function findBest() {
  fromControls();
  $('search-title').hidden = false;
  $('search-summary').textContent = 'Searching…';
  $('search-results').replaceChildren();
  const c = buildCase();
  // What is not searched comes from the controls, the framework and its settings as the plan has them.
  const plan = c.layout;
  c.layout = { global_batch: state.gbs, seq_len: state.seq, precision: state.precision, moe_dispatcher: state.disp,
               ...moeLoad() };
  for (const k of ['framework', ...Object.values(FRAMEWORK_SETTINGS)]) if (k in plan) c.layout[k] = plan[k];
  // The search options: pins from the current layout, the no-crossing rule, the memory headroom (a tenth,
  // the memory prediction's error on published runs), the Pareto front.
  const pins = {};
  if ($('pin-tp').checked) pins.tp = state.tp;
  if ($('pin-pp').checked) pins.pp = state.pp;
  if ($('no-crossing').checked) pins.no_crossing = true;
  if ($('headroom').checked) pins.headroom = 0.1;
  const pareto = $('pareto').checked;
  try {
    const r = await post('/api/search', { ...c, top: 5, pins, pareto });
    const rejected = Object.entries(r.rejected).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, v]) => `${v.toLocaleString('en-US')} ${k.replaceAll('_', ' ')}`).join(', ');
    const tight = r.rejected.too_little_headroom ?? 0;
    $('search-summary').textContent = `${r.evaluated.toLocaleString('en-US')} layouts evaluated in ${r.elapsed_s.toFixed(2)} s, ${r.feasible.toLocaleString('en-US')} fit; rejected: ${rejected}.` +
      (tight ? ` ${tight.toLocaleString('en-US')} that fit leave less than a tenth free.` : '');
    $('search-results').replaceChildren(...r.best.map((p, i) => {
      const li = el('li');
      const b = el('button', { type: 'button', class: 'load', 'data-rank': i + 1,
                               'aria-label': `Load layout ${i + 1}: ${p.layout_string}` }, 'Load');
      b.addEventListener('click', () => loadLayout(p.inputs.layout));
      const same = p.same_orders?.length ? ` (or ${p.same_orders.join(', ')}: the same plan)` : '';
      // How far behind #1, and whether that is closer than the model can order (ranking_resolution).
      const behind = i === 0 ? '' : `, ${(100 * p.gap_to_best).toFixed(1)} % behind #1${p.gap_to_best < r.ranking_resolution ? ' (a tie at the model’s resolution)' : ''}`;
      li.append(b, `${p.layout_string} · mb ${p.inputs.layout.micro_batch} · ZeRO-${p.inputs.layout.zero} · ${p.inputs.layout.recompute} · ${p.inputs.layout.schedule} · order ${p.inputs.layout.order}${same} — ${Math.round(p.throughput.tokens_per_s_per_gpu).toLocaleString('en-US')} tokens/s/GPU, MFU ${(100 * p.throughput.mfu).toFixed(1)} %, ${fmtBytes(p.memory.total_bytes)}, ${fmtBytes(p.memory.margin_bytes)} to spare${behind}`);
      return li;
    }));
    if (!r.best.length) $('search-summary').textContent += ' No layout fits.';
    $('search-why').textContent = r.best.length > 1 ? whyFirst(r.best[0], r.best[1], r.ranking_resolution) : '';
    renderPareto(pareto ? r.pareto : null);
    $('search-title').scrollIntoView({ block: 'start' });
  } catch (e) {
    $('search-summary').textContent = e.message;
  }
}
// Why #1 beats #2: the share of the step where they differ most; and whether that is more than the
// model can tell apart (ranking_resolution: layouts predicted closer were ordered as measured about as
// often as by a coin on published runs, docs/validation.md "Ranking").
function whyFirst(a, b, resolution) {
  const parts = [['compute', 'compute_s'], ['recomputation', 'recompute_s'], ['exposed communication', 'exposed_comm_s'],
                 ['pipeline bubble', 'bubble_s'], ['optimizer step', 'optimizer_s']];
  const [label, key] = parts.reduce((best, p) =>
    Math.abs(b.time[p[1]] - a.time[p[1]]) > Math.abs(b.time[best[1]] - a.time[best[1]]) ? p : best);
  const gain = 100 * b.gap_to_best;  // the search's (t₁ − t₂)/t₂
  if (gain < 0.05)  // the search breaks ties by the memory needed, then by the smaller layout
    return `#1 and #2 (${b.layout_string}) are as fast; #1 wins the tie with ` +
           (a.memory.needed_bytes < b.memory.needed_bytes - 1e6 ? `more memory to spare (${fmtBytes(a.memory.margin_bytes)} against ${fmtBytes(b.memory.margin_bytes)}).`
                                                                 : 'the simpler layout.');
  const close = gain < 100 * resolution
    ? ` Within ${Math.round(100 * resolution)} %, closer than the model can order layouts: weigh memory to spare and groups too.` : '';
  return `#1 is ${gain.toFixed(1)} % faster than #2 (${b.layout_string}): the largest difference is ${label}, ` +
         `${fmtTime(a.time[key])} against ${fmtTime(b.time[key])} per step.${close}`;
}
// The Pareto front: memory needed per GPU (x: allocated + runtime, the allocator's cache left out, as the search
// weighs it) against tokens/s per GPU (y), each point a layout no other beats on both.
function renderPareto(front) {
  const svg = $('pareto-plot');
  // An <svg> has no `hidden` property: the attribute itself is toggled.
  const none = !front || !front.length;
  svg.toggleAttribute('hidden', none);
  if (none) { svg.replaceChildren(); return; }
  // One user unit per CSS pixel (at most 600 wide), so its labels stay 11 px on a phone.
  const W = Math.min(600, Math.max(300, Math.round(svg.getBoundingClientRect().width) || 600)), H = 220, L = 60, B = 30;
  const xs = front.map((p) => p.memory.needed_bytes), ys = front.map((p) => p.throughput.tokens_per_s_per_gpu);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = 0, y1 = Math.max(...ys) * 1.1;
  const X = (v) => L + (x1 > x0 ? (v - x0) / (x1 - x0) : 0.5) * (W - L - 20);
  const Y = (v) => H - B - (v - y0) / (y1 - y0) * (H - B - 10);
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const parts = [el('text', { x: L, y: H - 6 }, `memory needed per GPU ${fmtBytes(x0)} – ${fmtBytes(x1)}`),
                 el('text', { x: 4, y: 14 }, 'tokens/s/GPU')];
  front.forEach((p) => {
    const c = el('circle', { cx: X(p.memory.needed_bytes), cy: Y(p.throughput.tokens_per_s_per_gpu), r: 5, class: 'front' });
    c.appendChild(el('title', {}, `${p.layout_string}: ${Math.round(p.throughput.tokens_per_s_per_gpu)} tokens/s/GPU, ${fmtBytes(p.memory.needed_bytes)} needed, ${fmtBytes(p.memory.margin_bytes)} to spare`));
    c.addEventListener('click', () => loadLayout(p.inputs.layout));
    parts.push(c);
  });
  svg.replaceChildren(...parts);
}
// A layout that does not fit: the single changes that would make it, planned by the API (POST /api/fit),
// fastest first, each one click away.
async function updateFit(plan, mine) {
  $('fit-box').hidden = plan.memory.fits;
  if (plan.memory.fits) return;
  const r = await post('/api/fit', buildCase());
  if (mine !== seq) return;
  const fitting = r.changes.filter((c) => c.fits);
  const shown = (fitting.length ? fitting : r.changes).slice(0, 5);
  $('fit-summary').textContent = fitting.length
    ? `${fitting.length} single change${fitting.length > 1 ? 's' : ''} make${fitting.length > 1 ? '' : 's'} it fit; the fastest first:`
    : 'No single change makes it fit; the closest:';
  $('fit-changes').replaceChildren(...shown.map((c, i) => {
    const li = el('li');
    const b = el('button', { type: 'button', class: 'apply', 'aria-label': `Apply: ${c.change}` }, 'Apply');
    b.addEventListener('click', () => loadLayout(c.layout));
    li.append(b, ` ${c.change} — ${Math.round(c.tokens_per_s_per_gpu).toLocaleString('en-US')} tokens/s/GPU, ` +
              (c.fits ? `fits, ${fmtBytes(c.margin_bytes)} to spare` : `still short by ${fmtBytes(c.short_bytes)}`));
    if (i === 0 && c.fits) li.classList.add('best');
    return li;
  }));
}

// A search answers for one model and cluster: its results go when either changes.
function clearSearch() {
  $('search-title').hidden = true;
  $('search-summary').textContent = '';
  $('search-why').textContent = '';
  $('search-results').replaceChildren();
  $('pareto-plot').toggleAttribute('hidden', true);
}
function loadLayout(l) {
  Object.assign(state, { tp: l.tp, cp: l.cp, pp: l.pp, ep: l.ep, etp: l.etp === l.tp ? 0 : l.etp, vpp: l.vpp,
                         mb: l.micro_batch, zero: l.zero, recompute: l.recompute, sp: l.sequence_parallel ? 1 : 0,
                         tpo: l.tp_comm_overlap ? 1 : 0,
                         epo: l.ep_comm_overlap ? 1 : 0, dpo: l.dp_comm_overlap === false ? 0 : 1, disp: l.moe_dispatcher ?? 'alltoall',
                         imb: l.moe_imbalance ?? 1, cap: l.moe_capacity_factor ?? 0,
                         schedule: l.schedule, grad: l.grad_dtype, order: l.order,
                         rmethod: l.recompute_method ?? 'uniform', rlayers: l.recompute_layers ?? 1,
                         fw: [...$('fw').options].some((o) => o.value === l.framework) ? l.framework : '' });
  toControls();
  update();
}

// ---- keyboard: ArrowUp/ArrowDown on a degree steps to the next value that divides the GPUs (TP also the
// heads), instead of the browser's +1 (8 → 9, never a valid TP).
function validDegrees(k) {
  const others = { tp: ['cp', 'pp'], cp: ['tp', 'pp'], pp: ['tp', 'cp'] }[k];
  const room = Math.floor(state.gpus / others.reduce((p, o) => p * (state[o] || 1), 1));
  const heads = Number($('m-heads').value) || presetModel().heads;
  const out = [];
  for (let d = 1; d <= room; ++d) if (room % d === 0 && (k !== 'tp' || heads % d === 0)) out.push(d);
  return out;
}
function stepDegree(e) {
  if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
  const k = e.target.id;
  fromControls();
  const valid = validDegrees(k), v = state[k];
  const next = e.key === 'ArrowUp' ? valid.find((d) => d > v) : [...valid].reverse().find((d) => d < v);
  e.preventDefault();
  if (next === undefined) return;
  e.target.value = String(next);
  schedule();
}
