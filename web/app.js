// shardplan web planner: controls → POST /api/plan → memory bar, topology, traffic, time.
// The whole state lives in the URL hash, so a plan can be shared as a link.
'use strict';

const $ = (id) => document.getElementById(id);
const DEFAULTS = { model: 'llama3-70b', cluster: 'dgx-h100', gpus: 64, seq: 8192, gbs: 64, tp: 8, cp: 1, pp: 1,
                   ep: 1, etp: 0, vpp: 1, mb: 1, zero: 1, recompute: 'none', sp: 1, tpo: 0, epo: 0, dpo: 1, disp: 'alltoall', imb: 1, cap: 0, precision: 'bf16', schedule: '1f1b',
                   grad: 'bf16', order: 'tp-cp-ep-dp-pp', rmethod: 'uniform', rlayers: 1, fw: '' };
const NUMBER_KEYS = ['gpus', 'seq', 'gbs', 'tp', 'cp', 'pp', 'ep', 'vpp', 'mb', 'rlayers'];
// A MoE model's load, real numbers the API checks (blank: balanced, dropless).
const LOAD_KEYS = ['imb', 'cap'];
const ADVANCED = { 'm-layers': 'layers', 'm-hidden': 'hidden', 'm-ffn': 'ffn_hidden', 'm-heads': 'heads',
                   'm-kv': 'kv_heads', 'm-vocab': 'vocab' };
// The device figure's parts, in the bar's order, with the terminal report's names for them: what the
// allocations hold, then the caching allocator's share and the CUDA context and NCCL's buffers.
const MEMORY_PARTS = [['weights_bytes', 'weights', '#2563eb'], ['grads_bytes', 'grads', '#0891b2'],
                      ['optimizer_bytes', 'optimizer', '#7c3aed'], ['activations_bytes', 'activations', '#d97706'],
                      ['other_bytes', 'buffers', '#9ca3af'], ['allocator_bytes', 'allocator cache', '#cbd5e1'],
                      ['runtime_bytes', 'CUDA context, NCCL', '#e2e8f0']];
const AXIS_COLORS = { tp: '#2563eb', cp: '#0891b2', ep: '#7c3aed', etp: '#a855f7', dp: '#16a34a', pp: '#d97706', edp: '#65a30d' };

// A framework brings its own defaults for the gradient dtype and the TP, DP and EP overlaps: after the
// framework changes (or a link names one without them), those are left to it for one request and the
// controls then show what it chose.
const FRAMEWORK_SETTINGS = { grad: 'grad_dtype', tpo: 'tp_comm_overlap', dpo: 'dp_comm_overlap', epo: 'ep_comm_overlap' };
let followFramework = [];  // the state keys of FRAMEWORK_SETTINGS the next request leaves to the framework
let presets = null;
let state = { ...DEFAULTS };
let timer = null;
let seq = 0;

function fmtBytes(v) {
  const a = Math.abs(v);
  if (a >= 1e12) return (v / 1e12).toFixed(2) + ' TB';
  if (a >= 1e9) return (v / 1e9).toFixed(2) + ' GB';
  if (a >= 1e6) return (v / 1e6).toFixed(1) + ' MB';
  return (v / 1e3).toFixed(1) + ' kB';
}
// Tokens/s as the terminal report prints them: millions from a million up, whole tokens below.
function fmtTokens(v) {
  return v >= 1e6 ? (v / 1e6).toFixed(2) + ' M' : Math.round(v).toLocaleString('en-US');
}
function fmtTime(s) {
  if (s === 0) return '0 s';
  if (s >= 1) return s.toFixed(3) + ' s';
  if (s >= 1e-3) return (s * 1e3).toFixed(2) + ' ms';
  return (s * 1e6).toFixed(1) + ' µs';
}
const el = (tag, attrs = {}, text) => {
  const e = document.createElementNS(tag === 'svg' || ['rect', 'line', 'text', 'g', 'title', 'circle'].includes(tag)
    ? 'http://www.w3.org/2000/svg' : 'http://www.w3.org/1999/xhtml', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};

// ---- state ⇄ URL and controls
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const s = { ...DEFAULTS };
  for (const [k, v] of p.entries()) s[k] = NUMBER_KEYS.includes(k) || LOAD_KEYS.includes(k) || k === 'zero' || k === 'sp' || k === 'tpo' || k === 'epo' || k === 'dpo' || k === 'etp' || k.startsWith('m-') || k.startsWith('c-') || k.startsWith('e-') ? Number(v) : v;
  // A link that names a framework but not its settings (written by hand) gets the framework's. (A
  // navigation fires both hashchange and popstate, and the first rewrites the hash whole: what is still
  // to be taken from the framework stays until a plan brings it.)
  if (p.has('fw'))
    for (const k of Object.keys(FRAMEWORK_SETTINGS)) if (!p.has(k) && !followFramework.includes(k)) followFramework.push(k);
  return s;
}
// Each settled plan is a history entry (Back returns to the previous one); typing within one field
// updates its entry in place.
let lastField = null, wroteHash = false;
function writeHash(field) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(state)) if (v !== undefined && v !== '' && !Number.isNaN(v)) p.set(k, v);
  const hash = '#' + p.toString();
  if (hash === location.hash) return;
  if (!wroteHash || (field && field === lastField)) history.replaceState(null, '', hash);
  else history.pushState(null, '', hash);
  wroteHash = true;
  lastField = field;
}
// The method and N of full recomputation mean something only under it.
function showFullOnly() {
  for (const label of document.querySelectorAll('label.full-only')) label.hidden = state.recompute !== 'full';
}
function toControls() {
  configOption();
  $('model').value = state.model;
  $('cluster').value = state.cluster;
  for (const k of NUMBER_KEYS) $(k).value = state[k];
  $('imb').value = state.imb === 1 ? '' : state.imb;
  $('cap').value = state.cap > 0 ? state.cap : '';
  $('zero').value = String(state.zero);
  $('recompute').value = state.recompute;
  $('rmethod').value = state.rmethod;
  showFullOnly();
  $('sp').checked = !!state.sp;
  $('tpo').checked = !!state.tpo;
  $('epo').checked = !!state.epo;
  $('dpo').checked = !!state.dpo;
  $('disp').value = state.disp;
  $('precision').value = state.precision;
  $('schedule').value = state.schedule;
  $('etp').value = state.etp > 0 ? String(state.etp) : '';
  $('grad').value = state.grad;
  $('fw').value = state.fw;
  // A rank order outside the two offered (a search result's, a shared link's) joins the list.
  if (![...$('order').options].some((o) => o.value === state.order)) $('order').append(new Option(state.order, state.order));
  $('order').value = state.order;
  fillAdvanced();
}
function fromControls() {
  state.model = $('model').value;
  state.cluster = $('cluster').value;
  for (const k of NUMBER_KEYS) state[k] = Number($(k).value);
  state.imb = $('imb').value === '' ? 1 : Number($('imb').value);
  state.cap = $('cap').value === '' ? 0 : Number($('cap').value);
  state.zero = Number($('zero').value);
  state.recompute = $('recompute').value;
  state.rmethod = $('rmethod').value;
  showFullOnly();
  state.sp = $('sp').checked ? 1 : 0;
  state.tpo = $('tpo').checked ? 1 : 0;
  state.epo = $('epo').checked ? 1 : 0;
  state.dpo = $('dpo').checked ? 1 : 0;
  state.disp = $('disp').value;
  state.precision = $('precision').value;
  state.schedule = $('schedule').value;
  state.etp = $('etp').value === '' ? 0 : Number($('etp').value);
  state.grad = $('grad').value;
  state.fw = $('fw').value;
  state.order = $('order').value;
  for (const id of Object.keys(ADVANCED)) {
    const v = $(id).value, base = presetModel()[ADVANCED[id]];
    if (v !== '' && Number(v) !== base) state[id] = Number(v); else delete state[id];
  }
  const moe = presetModel().moe;
  for (const [id, key] of Object.entries(MOE)) {
    const v = $(id).value;
    if (moe && v !== '' && Number(v) !== moe[key]) state[id] = Number(v); else delete state[id];
  }
  const d = $('c-domain').value, h = $('c-hbm').value, c = presetCluster();
  if (c && d !== '' && Number(d) !== c.scale_up_domain) state['c-domain'] = Number(d); else delete state['c-domain'];
  if (c && h !== '' && Number(h) !== c.gpu.hbm_usable_gb) state['c-hbm'] = Number(h); else delete state['c-hbm'];
}
// A MoE model's numbers (shown only for MoE presets): they override the preset's moe object field by field.
const MOE = { 'e-experts': 'experts', 'e-topk': 'top_k', 'e-ffn': 'expert_ffn_hidden', 'e-shared': 'shared_experts' };
// A loaded Hugging Face config.json: the model select's value, and state.mj the shardplan model object
// /api/model read from it (the link carries it; the file itself never leaves the browser but for that).
const CONFIG = 'config.json';
function loadedModel() {  // null where the link's mj is not a model object (edited by hand)
  try {
    const m = state.mj ? JSON.parse(state.mj) : null;
    return m && typeof m === 'object' && !Array.isArray(m) ? m : null;
  } catch { return null; }
}
const presetModel = () => (state.model === CONFIG && loadedModel())
  || presets.models.find((m) => m.name === state.model) || presets.models[0];
function configOption() {
  let o = [...$('model').options].find((x) => x.value === CONFIG);
  const m = loadedModel();
  if (!m) { o?.remove(); return; }
  if (!o) $('model').prepend(o = new Option('', CONFIG));
  o.textContent = `${m.name} (config.json)`;
}
async function loadConfig(file) {
  let config;
  try {
    config = JSON.parse(await file.text());
  } catch (e) {
    showError(`config.json: expected JSON, ${e.message}`);
    return;
  }
  try {
    const { model } = await post('/api/model', { model: config });
    delete model.params_total;
    delete model.params_active;
    for (const k of Object.keys(state)) if (k.startsWith('m-') || k.startsWith('e-')) delete state[k];
    state.mj = JSON.stringify(model);
    state.model = CONFIG;
    configOption();
    toControls();
    clearSearch();
    update('model');
  } catch (e) {
    showError(e.message + ' (nothing was changed for you)');
  }
}
const presetCluster = () => presets.clusters.find((c) => c.name === state.cluster);
function fillAdvanced() {
  const m = presetModel(), c = presetCluster();
  for (const [id, key] of Object.entries(ADVANCED)) $(id).value = state[id] ?? m[key];
  for (const [id, key] of Object.entries(MOE)) $(id).value = m.moe ? (state[id] ?? m.moe[key]) : '';
  for (const label of document.querySelectorAll('label.moe')) label.hidden = !m.moe;
  if (c) {
    $('c-domain').value = state['c-domain'] ?? c.scale_up_domain;
    $('c-hbm').value = state['c-hbm'] ?? c.gpu.hbm_usable_gb;
  }
}

// ---- the request
function buildCase() {
  const loaded = state.model === CONFIG ? loadedModel() : null;
  const shape = loaded || presetModel();  // what the edits below start from
  const model = loaded ? { ...loaded } : { preset: state.model };
  for (const [id, key] of Object.entries(ADVANCED)) if (state[id] !== undefined) model[key] = state[id];
  // Another layer count keeps the share of windowed layers (Gemma 3's five in six, gpt-oss's one in two).
  if (state['m-layers'] !== undefined && shape.window_layers > 0)
    model.window_layers = Math.round(shape.window_layers * state['m-layers'] / shape.layers);
  const base = shape.moe;
  if (base && Object.keys(MOE).some((id) => state[id] !== undefined)) {
    model.moe = { ...base };  // the edited numbers over the whole pattern (dense layers, routing groups)
    for (const [id, key] of Object.entries(MOE)) if (state[id] !== undefined) model.moe[key] = state[id];
  }
  const cluster = { preset: state.cluster, gpus: state.gpus };
  if (state['c-domain'] !== undefined) cluster.scale_up_domain = state['c-domain'];
  if (state['c-hbm'] !== undefined) cluster.gpu = { base: presetCluster().gpu.id, hbm_usable_gb: state['c-hbm'] };
  const layout = { tp: state.tp, cp: state.cp, pp: state.pp, ep: state.ep, vpp: state.vpp,
                   micro_batch: state.mb, global_batch: state.gbs, seq_len: state.seq, zero: state.zero,
                   recompute: state.recompute, sequence_parallel: !!state.sp, tp_comm_overlap: !!state.tpo,
                   ep_comm_overlap: !!state.epo, dp_comm_overlap: !!state.dpo,
                   moe_dispatcher: state.disp, ...moeLoad(), precision: state.precision,
                   schedule: state.schedule, grad_dtype: state.grad, order: state.order,
                   ...(state.recompute === 'full' ? { recompute_method: state.rmethod, recompute_layers: state.rlayers } : {}),
                   ...(state.fw ? { framework: state.fw } : {}),
                   ...(state.etp > 0 ? { etp: state.etp } : {}) };
  for (const k of followFramework) delete layout[FRAMEWORK_SETTINGS[k]];
  // dp is left to the API, which derives it by the same rule as the CLI (gpus ÷ tp·cp·pp).
  return { model, cluster, layout };
}
// The framework's own settings, as the plan resolved them, into the state and the controls.
function takeFrameworkSettings(plan, keys) {
  const l = plan.inputs.layout;
  for (const k of keys) {
    const v = l[FRAMEWORK_SETTINGS[k]];
    if (k === 'grad') $(k).value = state[k] = v;
    else $(k).checked = !!(state[k] = v ? 1 : 0);
  }
  followFramework = [];
  writeHash('fw');
}
// A MoE model's load: the busiest EP rank's routed tokens over the mean (1: balanced) and the capacity
// factor (blank: dropless). Sent only for a MoE model, and only when set, so a dense plan is unaffected.
function moeLoad() {
  if (!presetModel().moe) return {};
  return { ...(state.imb !== 1 ? { moe_imbalance: state.imb } : {}),
           ...(state.cap > 0 ? { moe_capacity_factor: state.cap } : {}) };
}
function showError(msg) {
  $('error').textContent = msg;
  $('error').hidden = !msg;
  $('results').classList.toggle('stale', !!msg);
}
async function post(path, body) {
  const r = await fetch(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || ('HTTP ' + r.status));
  return j;
}
function schedule(e) {
  const field = e && e.target ? e.target.id : null;
  clearTimeout(timer);
  timer = setTimeout(() => update(field), 40);
}
// Whole numbers of at least 1, or the field is named and nothing is planned (0 or '' is never a default).
function badNumber() {
  for (const k of NUMBER_KEYS) {
    const v = state[k];
    if (!Number.isInteger(v) || v < 1) {
      const label = $(k).getAttribute('aria-label') || k;
      return `${label}: expected a whole number of at least 1, got ${$(k).value === '' ? 'nothing' : $(k).value}`;
    }
  }
  if (!Number.isInteger(state.etp) || state.etp < 0) return `Expert tensor parallel degree: expected empty (= TP) or a whole number of at least 1, got ${$('etp').value}`;
  return '';
}
async function update(field) {
  fromControls();
  writeHash(field);
  const mine = ++seq;
  const bad = badNumber();
  if (bad) {
    $('dp').value = '—';
    showError(bad);
    return;
  }
  try {
    const following = followFramework;
    const plan = await post('/api/plan', buildCase());
    if (mine !== seq) return;  // a newer request is on its way
    if (following.length) takeFrameworkSettings(plan, following);
    $('dp').value = plan.inputs.layout.dp;
    showError('');
    render(plan);
    current = plan;
    renderCompare();
    await updateFit(plan, mine);
    await updateTimeline(plan, mine);
  } catch (e) {
    if (mine !== seq) return;
    $('dp').value = '—';
    showError(e.message + ' (nothing was changed for you)');
  }
}

// ---- rendering
function render(p) {
  document.body.dataset.ready = '1';
  $('tps').textContent = Math.round(p.throughput.tokens_per_s_per_gpu).toLocaleString('en-US') + ' tokens/s/GPU';
  $('tps-cluster').textContent = `${fmtTokens(p.throughput.tokens_per_s)} tokens/s for the cluster`;
  const [lo, hi] = p.throughput.tokens_per_s_per_gpu_range, basis = p.throughput.range_basis;
  $('tps-range').textContent = basis.runs > 0
    ? `80 % range ${Math.round(lo).toLocaleString('en-US')}–${Math.round(hi).toLocaleString('en-US')}: from ${basis.runs} held-out published runs like it (${basis.class})`
    : '';
  $('mfu').textContent = `MFU ${(100 * p.throughput.mfu).toFixed(1)} % · HFU ${(100 * p.throughput.hfu).toFixed(1)} % of ${(p.throughput.peak_flops / 1e12).toFixed(0)} TFLOP/s ${p.inputs.layout.precision}`;
  $('step').textContent = fmtTime(p.time.step_s);
  // Capacities are 10^9 bytes; what vendors sell as "80 GB" is GiB, so both are shown.
  const gib = (b) => `${(b / 2 ** 30).toFixed(1)} GiB`;
  $('fits').textContent = p.memory.fits
    ? `fits: ${fmtBytes(p.memory.total_bytes)} of ${fmtBytes(p.memory.capacity_bytes)} (${gib(p.memory.capacity_bytes)}) usable, ${fmtBytes(p.memory.margin_bytes)} to spare`
    : `does not fit: needs ${fmtBytes(p.memory.total_bytes)} of ${fmtBytes(p.memory.capacity_bytes)} (${gib(p.memory.capacity_bytes)}), short by ${fmtBytes(p.memory.short_bytes)}`;
  $('fits').className = p.memory.fits ? '' : 'bad';
  // A layout that does not fit does not run: its speed is what it would reach, shown as such.
  $('throughput-card').classList.toggle('unfit', !p.memory.fits);
  $('tps-note').hidden = p.memory.fits;
  renderMemory(p);
  renderTopology(p);
  renderComm(p);
  renderTime(p);
  $('findings').replaceChildren(...p.findings.filter((f) => !f.includes(' spans ')).map((f) => el('li', {}, f)));
}

function renderMemory(p) {
  const svg = $('memory-bar');
  const m = p.memory, W = 640, H = 64;
  const scale = Math.max(m.total_bytes, m.capacity_bytes) * 1.02;
  const parts = [];
  let x = 0;
  for (const [k, name, color] of MEMORY_PARTS) {
    const w = (m[k] / scale) * W;
    const r = el('rect', { x, y: 8, width: Math.max(0, w), height: H - 16, fill: color, class: 'seg', 'data-kind': k,
                           'data-width': w.toFixed(2), 'data-bytes': m[k] });
    r.appendChild(el('title', {}, `${name}: ${fmtBytes(m[k])}`));
    parts.push(r);
    x += w;
  }
  const cap = (m.capacity_bytes / scale) * W;
  parts.push(el('line', { x1: cap, x2: cap, y1: 0, y2: H, stroke: '#dc2626', 'stroke-width': 2, id: 'capacity-line' }));
  svg.replaceChildren(...parts);
  svg.dataset.total = m.total_bytes;
  const inFlight = Math.round((p.stages[m.worst_stage]?.in_flight ?? 1) * 100) / 100;  // interleaved: fractions of a chunk
  const moment = m.peak === 'loss' ? 'at a micro-batch\'s loss'
    : m.peak === 'optimizer' ? 'at the optimizer step (fp32 copies of its 16-bit gradients)'
    : `at a layer's backward, ${inFlight} micro-batch${inFlight === 1 ? '' : 'es'} in flight`;
  $('mem-stage').textContent = `stage ${m.worst_stage} (fullest), ${moment} · ${fmtBytes(m.total_bytes)} of ${fmtBytes(m.capacity_bytes)} usable · ` +
    `allocated ${fmtBytes(m.allocated_bytes)}, reserved ${fmtBytes(m.reserved_bytes)}, device ${fmtBytes(m.device_bytes)}`;
  $('memory-legend').replaceChildren(...MEMORY_PARTS.map(([k, name, c]) => {
    const li = el('li');
    li.append(el('i', { style: `background:${c}` }), `${name} ${fmtBytes(m[k])}`);
    return li;
  }));
}

// The first group of an axis that leaves its domain: leaders are the ranks whose index along the axis is
// 0 (floor(rank / stride) % size === 0); a group is leader, leader + stride, ... The model reports an axis
// as crossing when any of its groups does, so that group, not rank 0's, is the one to draw.
function firstCrossingStart(g, D, G) {
  for (let r = 0, seen = 0; r < G && seen < 100000; r++) {
    if (Math.floor(r / g.stride) % g.size !== 0) continue;
    ++seen;
    if (Math.floor(r / D) !== Math.floor((r + (g.size - 1) * g.stride) / D)) return r;
  }
  return 0;
}
function renderTopology(p) {
  const svg = $('topology');
  const D = p.inputs.cluster.scale_up_domain, G = p.inputs.cluster.gpus;
  const heavy = new Set(['tp', 'cp', 'ep', 'etp']);
  const groups = p.groups.filter((g) => g.size > 1);
  for (const g of groups) g.start = g.crosses_domain && heavy.has(g.axis) ? firstCrossingStart(g, D, G) : 0;
  // Draw enough domains to show the heavy groups whole, and at most 8.
  let extent = D;
  for (const g of groups) if (heavy.has(g.axis)) extent = Math.max(extent, g.start + g.stride * (g.size - 1) + 1);
  const domains = Math.min(8, Math.ceil(Math.min(extent, G) / D));
  const cols = D <= 8 ? D : Math.ceil(Math.sqrt(D * 1.2));
  const rows = Math.ceil(D / cols), cell = 16, pad = 14;
  const bw = cols * cell + 2 * pad, bh = rows * cell + 2 * pad + 14;
  const perRow = Math.max(1, Math.floor(900 / (bw + 10)));
  const width = Math.min(domains, perRow) * (bw + 10) + 10, height = Math.ceil(domains / perRow) * (bh + 10) + 40;
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  // Drawn at one user unit per CSS pixel: labels are 11 px at any screen width (its box scrolls if it must).
  svg.style.width = width + 'px';
  const out = [];
  const pos = (rank) => {
    const d = Math.floor(rank / D), i = rank % D;
    const bx = 10 + (d % perRow) * (bw + 10), by = 10 + Math.floor(d / perRow) * (bh + 10);
    return [bx + pad + (i % cols) * cell, by + pad + 14 + Math.floor(i / cols) * cell];
  };
  for (let d = 0; d < domains; d++) {
    const bx = 10 + (d % perRow) * (bw + 10), by = 10 + Math.floor(d / perRow) * (bh + 10);
    out.push(el('rect', { x: bx, y: by, width: bw, height: bh, rx: 6, class: 'domain' }));
    out.push(el('text', { x: bx + 6, y: by + 14 }, `domain ${d}`));
    for (let i = 0; i < D && d * D + i < G; i++) {
      const [x, y] = pos(d * D + i);
      out.push(el('rect', { x: x + 1, y: y + 1, width: cell - 2, height: cell - 2, rx: 2, class: 'gpu' }));
    }
  }
  const shown = domains * D;
  const notes = [];
  groups.forEach((g, n) => {
    const color = AXIS_COLORS[g.axis] || '#111827';
    const crossing = g.crosses_domain && heavy.has(g.axis);
    const gEl = el('g', { class: `group ${g.axis}${crossing ? ' crossing' : ''}`, 'data-axis': g.axis, 'data-crosses': g.crosses_domain ? '1' : '0', stroke: color });
    let drawn = 0;
    const inset = 1 + (n % 4);
    for (let j = 0; j < g.size; j++) {
      const r = g.start + j * g.stride;
      if (r >= shown) break;
      const [x, y] = pos(r);
      gEl.appendChild(el('rect', { x: x + inset, y: y + inset, width: cell - 2 * inset, height: cell - 2 * inset, rx: 2 }));
      drawn++;
    }
    gEl.dataset.start = g.start;
    gEl.appendChild(el('title', {}, `${g.axis.toUpperCase()} group of ${g.size}, stride ${g.stride}, from rank ${g.start}: ${g.crosses_domain ? `spans ${g.domains_spanned} domains` : 'inside one domain'}`));
    out.push(gEl);
    if (drawn < g.size) notes.push(`${g.axis.toUpperCase()} ${drawn} of ${g.size} shown`);
  });
  const ly = height - 14;
  let lx = 10;
  for (const g of groups) {
    out.push(el('rect', { x: lx, y: ly - 9, width: 10, height: 10, fill: 'none', stroke: AXIS_COLORS[g.axis], 'stroke-width': 2 }));
    out.push(el('text', { x: lx + 14, y: ly }, `${g.axis.toUpperCase()}×${g.size}`));
    lx += 80;
  }
  svg.replaceChildren(...out);
  const moved = groups.filter((g) => g.start > 0).map((g) =>
    `${g.axis.toUpperCase()}: ranks ${g.start}–${g.start + (g.size - 1) * g.stride}, the first group that leaves its domain`);
  $('topo-caption').textContent = `${G.toLocaleString('en-US')} GPUs in domains of ${D}; group of rank 0 per axis outlined` +
    (moved.length ? `, except ${moved.join('; ')}` : '') + (notes.length ? ' (' + notes.join(', ') + ')' : '');
  const crossing = p.findings.filter((f) => f.includes(' spans '));
  $('crossing-note').textContent = crossing.length ? crossing.join(' ') : 'Every TP, CP and EP group stays inside one scale-up domain.';
  $('crossing-note').className = crossing.length ? 'crossing' : '';
}

function renderComm(p) {
  const rows = p.comm.map((c) => {
    const tr = el('tr', { class: c.crosses_domain && ['tp', 'cp', 'ep'].includes(c.axis) ? 'crossing' : '', 'data-axis': c.axis });
    for (const [v, num] of [[c.axis.toUpperCase()], [c.collective], [c.group_size, 1], [c.tier.replace('_', '-')],
                            [fmtBytes(c.bytes_per_step), 1], [fmtTime(c.time_s), 1], [fmtTime(c.exposed_s), 1],
                            [c.critical_path ? 'critical' : 'hidden']])
      tr.appendChild(el('td', num ? { class: 'num' } : {}, String(v)));
    return tr;
  });
  if (!rows.length) rows.push(el('tr', {}, 'No communication: a single GPU.'));
  $('comm').tBodies[0].replaceChildren(...rows);
}

function renderTime(p) {
  const t = p.time;
  const rows = [['compute', t.compute_s], ['recompute', t.recompute_s], ['exposed communication', t.exposed_comm_s],
                [t.pipeline_simulated ? 'pipeline bubble (simulated)' : 'pipeline bubble', t.bubble_s],
                ['optimizer step', t.optimizer_s], ['step', t.step_s]];
  $('time').tBodies[0].replaceChildren(...rows.map(([k, v]) => {
    const tr = el('tr');
    tr.append(el('td', {}, k), el('td', { class: 'num' }, fmtTime(v)),
              el('td', { class: 'num' }, t.step_s > 0 ? (100 * v / t.step_s).toFixed(1) + ' %' : ''));
    return tr;
  }));
}

// ---- pipeline timeline: the simulated step (POST /api/trace, the Chrome trace `shardplan trace` writes)
const PASS_COLORS = { F: '#2563eb', B: '#16a34a', W: '#d97706', R: '#7c3aed' };
async function updateTimeline(plan, mine) {
  const section = $('timeline-section');
  if (plan.inputs.layout.pp <= 1) { section.hidden = true; return; }
  section.hidden = false;
  // The previous timeline stays while the new one is simulated, marked as out of date.
  $('timeline').classList.add('stale');
  $('timeline-caption').textContent = 'simulating…';
  try {
    const trace = await post('/api/trace', buildCase());
    if (mine === seq) { renderTimeline(trace); $('timeline').classList.remove('stale'); }
  } catch (e) {
    if (mine === seq) {
      $('timeline').replaceChildren();
      $('timeline').classList.remove('stale');
      $('timeline-caption').textContent = e.message;
    }
  }
}

function renderTimeline(trace) {
  const svg = $('timeline');
  const spans = trace.traceEvents.filter((e) => e.ph === 'X' && (e.tid === 0 || e.tid === 3));
  const ranks = 1 + Math.max(...spans.map((e) => e.pid));
  const end = Math.max(...spans.map((e) => e.ts + e.dur));
  // One user unit per CSS pixel (the drawing's own width, 900 before it is laid out), so the labels are
  // 11 px on a phone too instead of shrinking with the drawing.
  const W = Math.max(480, Math.round(svg.getBoundingClientRect().width) || 900), left = 58, row = 22, top = 8;
  const x = (us) => left + (us / end) * (W - left - 8);
  const parts = [];
  for (let r = 0; r < ranks; ++r) parts.push(el('text', { x: 4, y: top + r * row + 15 }, `rank ${r}`));
  for (const e of spans) {
    const kind = e.tid === 3 || e.name === 'optimizer' ? null : e.name[0];
    const y = top + e.pid * row + (e.tid === 3 ? 15 : 2);
    const h = e.tid === 3 ? 4 : 13;
    const r = el('rect', { x: x(e.ts), y, width: Math.max(0.5, x(e.ts + e.dur) - x(e.ts)), height: h,
                           fill: kind ? PASS_COLORS[kind] : '#9ca3af', class: kind ? 'pass' : 'tail',
                           'data-rank': e.pid, 'data-start': e.ts, 'data-end': e.ts + e.dur });
    if (kind) r.dataset.kind = kind;
    r.appendChild(el('title', {}, `rank ${e.pid} · ${e.name} · ${fmtTime(e.dur / 1e6)}`));
    parts.push(r);
  }
  const H = top + ranks * row + 18;
  parts.push(el('text', { x: left, y: H - 4 }, '0'));
  parts.push(el('text', { x: W - 8, y: H - 4, 'text-anchor': 'end' }, fmtTime(end / 1e6)));
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.replaceChildren(...parts);
  const info = trace.otherData;
  $('timeline-caption').textContent =
    `${info.schedule} · ${info.micro_batches} micro-batches · simulated passes ${fmtTime(info.simulated_makespan_s)}`;
}

// ---- start
async function start() {
  presets = await (await fetch('/api/presets')).json();
  for (const m of presets.models) $('model').append(new Option(`${m.name} (${(m.params_total / 1e9).toFixed(1)}B)`, m.name));
  for (const c of presets.clusters) $('cluster').append(new Option(`${c.name} · ${c.gpu.id}, ${c.scale_up_domain}/domain`, c.name));
  state = readHash();
  toControls();
  $('controls').addEventListener('input', schedule);
  $('controls').addEventListener('change', schedule);
  $('model').addEventListener('change', () => { for (const id of [...Object.keys(ADVANCED), ...Object.keys(MOE)]) delete state[id]; state.model = $('model').value; fillAdvanced(); clearSearch(); });
  $('cluster').addEventListener('change', () => { delete state['c-domain']; delete state['c-hbm']; state.cluster = $('cluster').value; fillAdvanced(); clearSearch(); });
  // The file input sits in the controls form, but choosing a file is not a change of the plan: the form
  // must not re-plan the state as it was (its answer, coming after, would clear a bad file's error).
  $('hf-file').addEventListener('input', (e) => e.stopPropagation());
  $('hf-file').addEventListener('change', (e) => {
    e.stopPropagation();
    if (e.target.files[0]) loadConfig(e.target.files[0]);
    e.target.value = '';
  });
  $('reset-numbers').addEventListener('click', () => { for (const k of Object.keys(state)) if (k.startsWith('m-') || k.startsWith('c-') || k.startsWith('e-')) delete state[k]; fillAdvanced(); schedule(); });
  $('fw').addEventListener('change', () => { followFramework = Object.keys(FRAMEWORK_SETTINGS); });
  $('find-best').addEventListener('click', findBest);
  $('pin').addEventListener('click', () => { pinned = current; renderCompare(); });
  for (const b of document.querySelectorAll('button.export')) b.addEventListener('click', () => showExport(b.dataset.format));
  $('export-copy').addEventListener('click', () => navigator.clipboard?.writeText($('export-text').textContent).catch(() => {}));
  $('export-close').addEventListener('click', () => { $('export-section').hidden = true; });
  $('download-trace').addEventListener('click', downloadTrace);
  $('unpin').addEventListener('click', () => { pinned = null; renderCompare(); });
  $('schedule').addEventListener('change', () => {
    if ($('schedule').value === 'interleaved' && Number($('vpp').value) < 2) $('vpp').value = '2';
    if ($('schedule').value !== 'interleaved' && Number($('vpp').value) > 1) $('vpp').value = '1';
  });
  for (const k of ['tp', 'cp', 'pp']) $(k).addEventListener('keydown', stepDegree);
  $('copy-link').addEventListener('click', () => navigator.clipboard?.writeText(location.href).catch(() => {}));
  const restore = () => { state = readHash(); toControls(); lastField = null; update(); };
  window.addEventListener('hashchange', restore);
  window.addEventListener('popstate', restore);
  update();
}
start();
