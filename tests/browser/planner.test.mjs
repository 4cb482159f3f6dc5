// Browser tests: the real page, served by the real binary, in headless Debian Chromium (playwright-core).
// Run by CTest (tests/CMakeLists.txt) with SHARDPLAN_BIN and SHOTS_DIR set; screenshots land in SHOTS_DIR.
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const BIN = process.env.SHARDPLAN_BIN;
const SHOTS = process.env.SHOTS_DIR || '.';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// Every test runs at the viewport VIEWPORT names: CTest runs the file twice, as `browser` (a 1440×900
// desktop) and `browser_phone` (a 390×844 phone); screenshots of the phone run end in -phone.
const VIEWPORTS = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } };
const VIEW = process.env.VIEWPORT || 'desktop';
const VIEWPORT = VIEWPORTS[VIEW];
if (!VIEWPORT) throw new Error(`VIEWPORT: expected desktop or phone, got ${VIEW}`);
const shot = (name) => `${SHOTS}/${name}${VIEW === 'phone' ? '-phone' : ''}.png`;
let server, base, browser, page;

before(async () => {
  assert.ok(BIN, 'SHARDPLAN_BIN must point at the shardplan binary');
  mkdirSync(SHOTS, { recursive: true });
  server = spawn(BIN, ['serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  base = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('server did not start')), 10000);
    server.stdout.on('data', (d) => {
      const m = String(d).match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) { clearTimeout(t); resolve(`http://127.0.0.1:${m[1]}/`); }
    });
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-proxy-server'],
  });
  page = await browser.newPage({ viewport: VIEWPORT });
  page.on('pageerror', (e) => { throw e; });
});

// Whatever a test did, the page stays inside the screen: nothing scrolls sideways, at either viewport.
afterEach(async () => {
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(wide <= VIEWPORT.width, `the page is ${wide} px wide on a ${VIEWPORT.width} px screen`);
});

after(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
});

async function ready(p = page) {
  await p.waitForFunction(() => document.body.dataset.ready === '1');
  await p.waitForTimeout(150);  // the debounce of a control change
}

async function setNumber(id, value) {
  await page.fill(`#${id}`, String(value));
  await page.dispatchEvent(`#${id}`, 'input');
}

// The smallest label of a drawing as rendered, in CSS pixels (the height of its text box): 11 px type
// gives about 13; a drawing squeezed into a phone used to render it at 6.
async function smallestLabelPx(selector, p = page) {
  return p.$$eval(`${selector} text`, (ts) => Math.min(...ts.map((t) => t.getBoundingClientRect().height).filter((h) => h > 0)));
}

async function settle(check, arg = null) {
  // The page re-plans on every input; wait until what we changed is rendered.
  await page.waitForFunction(check, arg, { timeout: 10000 });
}

test('TP above the domain size turns the TP group red and memory per GPU shrinks', async () => {
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&gbs=64&seq=4096');
  await ready();
  assert.equal(await page.inputValue('#tp'), '8');
  assert.equal(await page.locator('#topology g.group.tp.crossing').count(), 0);
  const before = Number(await page.getAttribute('#memory-bar', 'data-total'));
  // The bar holds every part of the device figure the headline gives, the allocator's cache and the CUDA
  // context among them (it had drawn the allocations alone, 72 of 79 GB here).
  const parts = await page.$$eval('#memory-bar rect.seg', (rs) => rs.map((r) => Number(r.getAttribute('data-bytes'))));
  assert.ok(parts.length === 7 && Math.abs(parts.reduce((a, b) => a + b, 0) - before) < 1e3, `${parts} against ${before}`);
  assert.match(await page.textContent('#memory-legend'), /allocator cache [\d.]+ GB.*CUDA context, NCCL [\d.]+ GB/);
  // The throughput carries its 80 % range from held-out published runs, and says where it comes from.
  assert.match(await page.textContent('#tps-range'), /^80 % range [\d,]+–[\d,]+: from \d+ held-out published runs like it \(dense · hopper/);
  assert.ok(await smallestLabelPx('#topology') >= 10, 'topology labels readable');
  // The memory caption names the moment of the peak (PP 1: the loss of a micro-batch; its logits are
  // larger than a layer's gradients).
  assert.match(await page.textContent('#mem-stage'), /^stage 0 \(fullest\), at a micro-batch's loss · /);
  // Under 1F1B stage 0 keeps pp micro-batches and is fullest at a layer's backward.
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=4&gbs=64&seq=4096');
  await ready();
  await settle(() => /backward/.test(document.querySelector('#mem-stage').textContent));
  assert.match(await page.textContent('#mem-stage'), /^stage 0 \(fullest\), at a layer's backward, 4 micro-batches in flight · /);
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&gbs=64&seq=4096');
  await ready();
  await page.screenshot({ path: shot('tp8'), fullPage: true });

  await setNumber('tp', 16);
  await settle(() => document.querySelector('#topology g.group.tp')?.classList.contains('crossing'));
  const after = Number(await page.getAttribute('#memory-bar', 'data-total'));
  assert.ok(after < before, `memory per GPU should shrink with TP: ${before} → ${after}`);
  const note = await page.textContent('#crossing-note');
  assert.match(note, /TP group of 16 spans 2 scale-up domains of 8/);
  assert.equal(await page.getAttribute('#crossing-note', 'class'), 'crossing');
  assert.equal(await page.locator('#comm tr.crossing[data-axis="tp"]').count(), 1);
  assert.match(page.url(), /tp=16/);
  await page.screenshot({ path: shot('tp16-crossing'), fullPage: true });
});

test('TP16 on an NVL72 rack outlines the TP group that really leaves its domain, and says which', async () => {
  // 144 GPUs in racks of 72: TP groups of 16 at ranks 0-15 ... 48-63 stay inside rack 0; 64-79 straddles
  // racks 0 and 1. That group is drawn, red, and named in the caption.
  await page.goto(base + '#model=llama3-405b&cluster=nvl72&gpus=144&tp=16&pp=1&gbs=144&seq=4096');
  await ready();
  await settle(() => document.querySelector('#topology g.group.tp') !== null);
  assert.equal(await page.getAttribute('#topology g.group.tp', 'data-start'), '64');
  assert.equal(await page.locator('#topology g.group.tp.crossing').count(), 1);
  assert.match(await page.textContent('#topo-caption'), /TP: ranks 64–79, the first group that leaves its domain/);
  assert.match(await page.textContent('#crossing-note'), /spans 2 scale-up domains of 72/);
  await page.locator('#topology').screenshot({ path: shot('nvl72-tp16') });
});

test('an invalid combination is explained inline, not corrected', async () => {
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&gbs=64&seq=4096');
  await ready();
  await setNumber('tp', 3);
  await page.waitForSelector('#error:not([hidden])');
  // The API's own words: dp is derived on the server by the same rule as the CLI.
  assert.match(await page.textContent('#error'), /layout\.dp: expected gpus \(64\) divisible by tp·cp·pp \(3\)/);
  assert.equal(await page.textContent('#dp'), '—');
  assert.equal(await page.inputValue('#tp'), '3');  // left as typed
  await setNumber('gpus', 48);  // 48 / 3 = 16: now a layout, but TP 3 does not divide 64 heads
  await page.waitForFunction(() => /layout\.tp: expected a divisor of heads/.test(document.querySelector('#error').textContent));
});

test('arrow keys step TP through valid degrees; a zero global batch is named, not planned', async () => {
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=1&cp=1&gbs=64&seq=4096');
  await ready();
  // 64 GPUs, 64 heads: TP steps 8 → 16 → 8, never 9.
  await page.focus('#tp');
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.inputValue('#tp'), '16');
  await settle(() => location.hash.includes('tp=16'));
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.inputValue('#tp'), '8');
  await settle(() => location.hash.includes('tp=8'));
  // With pp 4 only divisors of 64 / 4 = 16 remain: TP 8 → 16 → (no 32) 16.
  await setNumber('pp', 4);
  await settle(() => location.hash.includes('pp=4'));
  await page.focus('#tp');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.inputValue('#tp'), '16');
  // Global batch 0 is an error in words, and nothing is planned for it (counted once the arrow keys'
  // plans have all been sent: the debounce is 40 ms).
  await page.waitForTimeout(400);
  const plansBefore = requests.filter((p) => p === '/api/plan').length;
  await setNumber('gbs', 0);
  await settle(() => !document.querySelector('#error').hidden);
  assert.equal(await page.textContent('#error'), 'Global batch in sequences: expected a whole number of at least 1, got 0');
  await page.waitForTimeout(200);
  assert.equal(requests.filter((p) => p === '/api/plan').length, plansBefore);
  await setNumber('gbs', 64);
  await settle(() => document.querySelector('#error').hidden);
  // The page asks for no favicon the server does not have.
  assert.equal(requests.includes('/favicon.ico'), false);
});

test('Back returns to the previous plan; a layout that does not fit shows its speed struck through', async () => {
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=1&gbs=64&seq=4096');
  await ready();
  await page.selectOption('#recompute', 'full');
  await settle(() => location.hash.includes('recompute=full'));
  await setNumber('tp', 4);
  await settle(() => location.hash.includes('tp=4'));
  await page.goBack();
  await settle(() => document.querySelector('#tp').value === '8');
  assert.equal(await page.inputValue('#recompute'), 'full');
  await page.goBack();
  await settle(() => document.querySelector('#recompute').value === 'none');
  // TP 1 on one GPU's share of a 70B model does not fit: the speed is labelled and struck through.
  await setNumber('tp', 1);
  await settle(() => document.querySelector('#throughput-card').classList.contains('unfit'));
  assert.equal(await page.isVisible('#tps-note'), true);
  assert.match(await page.textContent('#fits'), /^does not fit: needs [\d.]+ GB of 85\.52 GB \(79\.6 GiB\), short by/);
  await setNumber('tp', 8);
  await settle(() => !document.querySelector('#throughput-card').classList.contains('unfit'));
  // It fits, and says by how much: what the allocations could still take.
  assert.match(await page.textContent('#fits'), /of 85\.52 GB \(79\.6 GiB\) usable, [\d.]+ GB to spare$/);
  // Interleaved needs two chunks per rank: choosing it with VPP 1 sets VPP 2 instead of failing.
  await setNumber('pp', 2);
  await settle(() => location.hash.includes('pp=2'));
  await page.selectOption('#schedule', 'interleaved');
  await settle(() => location.hash.includes('schedule=interleaved'));
  assert.equal(await page.inputValue('#vpp'), '2');
  assert.equal(await page.isVisible('#error'), false);
});

test('expert tensor parallelism, gradient dtype and rank order are controls', async () => {
  // Mixtral on 64 GPUs, TP2 with experts over EP8 and expert-TP 1: the layout carries ETP1.
  await page.goto(base + '#model=mixtral-8x7b&cluster=dgx-h100&gpus=64&tp=2&ep=8&etp=1&gbs=64&seq=4096&grad=fp32&order=tp-cp-ep-pp-dp');
  await ready();
  await settle(() => document.querySelector('#error').hidden && document.querySelector('#dp').value === '32');
  assert.equal(await page.inputValue('#etp'), '1');
  assert.equal(await page.inputValue('#grad'), 'fp32');
  assert.equal(await page.inputValue('#order'), 'tp-cp-ep-pp-dp');
  const plan = await page.evaluate(async () => {
    const r = await fetch('/api/plan', { method: 'POST', body: JSON.stringify({ model: 'mixtral-8x7b',
      cluster: { preset: 'dgx-h100', gpus: 64 }, layout: { tp: 2, ep: 8, etp: 1, global_batch: 64, seq_len: 4096,
      grad_dtype: 'fp32', order: 'tp-cp-ep-pp-dp' } }) });
    return r.json();
  });
  assert.match(plan.layout_string, /ETP1/);
  // Emptying ETP means "same as TP" again.
  await page.fill('#etp', '');
  await page.dispatchEvent('#etp', 'input');
  await settle(() => !location.hash.includes('etp=1'));
});

test('a layout that does not fit lists the single changes that would make it fit, one click each', async () => {
  // Llama 3 70B, TP8 on 64 H100, ZeRO 0, micro-batch 2 at 8k: 191 GB. ZeRO 2 (the fastest fix) and 3 fit.
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=1&gbs=64&seq=8192&zero=0&mb=2');
  await ready();
  await settle(() => !document.querySelector('#fit-box').hidden && document.querySelectorAll('#fit-changes li').length > 0);
  assert.match(await page.textContent('#fit-summary'), /single changes? makes? it fit/);
  const first = await page.textContent('#fit-changes li:first-child');
  assert.match(first, /ZeRO 0 → 2/);
  assert.match(first, /fits, [\d.]+ [kMGT]B to spare$/);
  await page.click('#fit-changes li:first-child button.apply');
  await settle(() => document.querySelector('#zero').value === '2');
  await settle(() => document.querySelector('#fit-box').hidden);
  assert.match(await page.textContent('#fits'), /^fits/);
  // At 32k tokens on TP8 · PP4 one of the fixes recomputes only the first N layers of each stage (block):
  // applying it sets the method and N, which the page shows only under full recomputation.
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=4&gbs=64&seq=32768&zero=1&mb=1');
  await ready();
  assert.equal(await page.isVisible('#rlayers'), false);
  await settle(() => [...document.querySelectorAll('#fit-changes li')].some((li) => /\(block\)/.test(li.textContent)));
  const block = page.locator('#fit-changes li', { hasText: '(block)' });
  const n = (await block.textContent()).match(/the first (\d+) layers/)[1];
  await block.locator('button.apply').click();
  await settle(() => document.querySelector('#rmethod').value === 'block');
  assert.equal(await page.inputValue('#recompute'), 'full');
  assert.equal(await page.inputValue('#rlayers'), n);
  assert.equal(await page.isVisible('#rlayers'), true);
  await settle(() => document.querySelector('#fit-box').hidden);
  assert.match(await page.textContent('#fits'), /^fits/);
  assert.match(page.url(), new RegExp(`rmethod=block&rlayers=${n}`));
});

test('pin a plan and compare the next one against it, line by line', async () => {
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=1&gbs=64&seq=4096&zero=1&mb=1');
  await ready();
  await page.click('#pin');
  await settle(() => !document.querySelector('#compare-section').hidden);
  await setNumber('tp', 4);
  await settle(() => document.querySelector('#compare tbody tr td:nth-child(3)')?.textContent.startsWith('TP4'));
  const rows = await page.$$eval('#compare tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  const row = (label) => rows.find((r) => r[0] === label);
  assert.equal(row('layout')[1], 'TP8·CP1·PP1·DP8·EP1');
  assert.equal(row('layout')[2], 'TP4·CP1·PP1·DP16·EP1');
  assert.match(row('tokens/s per GPU')[3], /^[+−][\d,]+ \([+−][\d.]+ %\)$/);
  assert.ok(row('memory per GPU') && row('TP traffic') && row('DP exposed') && row('activations'));
  // TP 4 holds more per GPU than TP 8: less to spare.
  assert.match(row('memory to spare')[3], /^−/);
  await page.locator('#compare-section').screenshot({ path: shot('compare') });
  await page.click('#unpin');
  await settle(() => document.querySelector('#compare-section').hidden);
});

test('export buttons show the launch configuration or the reason, and the trace downloads for Perfetto', async () => {
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=2&gbs=64&seq=4096&zero=1');
  await ready();
  await page.click('button.export[data-format="megatron"]');
  await settle(() => document.querySelector('#export-text').textContent.includes('--tensor-model-parallel-size 8'));
  assert.match(await page.textContent('#export-text'), /--pipeline-model-parallel-size 2/);
  // No framework chosen: exported as Megatron-LM runs it (fp32 gradient reduction: no --grad-reduce-in-bf16),
  // and the title says at what throughput.
  assert.match(await page.textContent('#export-title'), /planned as Megatron-LM runs it: [\d,]+ tokens\/s per GPU/);
  assert.doesNotMatch(await page.textContent('#export-text'), /--grad-reduce-in-bf16/);
  // torchtitan has no ZeRO-1: the reason, not a configuration.
  await page.click('button.export[data-format="torchtitan"]');
  await settle(() => !document.querySelector('#export-refusal').hidden);
  assert.match(await page.textContent('#export-refusal'), /ZeRO-1\/2 have no equivalent/);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-trace')]);
  assert.match(download.suggestedFilename(), /^shardplan-trace-TP8-CP1-PP2-DP4-EP1\.json$/);
  const trace = JSON.parse(readFileSync(await download.path(), 'utf8'));
  assert.ok(trace.traceEvents.length > 0);
  await page.click('#export-close');
});

test('the search keeps pinned degrees, draws the memory-speed front and says why the winner wins', async () => {
  await page.goto(base + '#model=llama3-8b&cluster=dgx-h100&gpus=16&tp=2&pp=1&gbs=64&seq=4096');
  await ready();
  await page.check('#pin-tp');
  await page.check('#pareto');
  await page.click('#find-best');
  await page.waitForSelector('#search-results li button.load', { timeout: 20000 });
  const rows = await page.$$eval('#search-results li', (lis) => lis.map((li) => li.textContent));
  assert.ok(rows.length >= 2);
  for (const r of rows) assert.match(r, /TP2·/);
  // Each says how much memory it leaves to spare, what tells tight layouts apart.
  for (const r of rows) assert.match(r, /[\d.]+ [kMGT]B to spare/);
  // Each answer after the first says how far behind #1 it is predicted.
  for (const r of rows.slice(1)) assert.match(r, /[\d.]+ % behind #1/);
  assert.doesNotMatch(rows[0], /behind #1/);
  const why = await page.textContent('#search-why');
  assert.match(why, /^(#1 is [\d.]+ % faster than #2 \(TP2·.*\): the largest difference is |#1 and #2 \(TP2·.*\) are as fast; #1 wins the tie with )/);
  // A lead under the model's resolution (5 %) is said to be one, and only then.
  const lead = why.match(/^#1 is ([\d.]+) % faster/);
  if (lead) assert.equal(/closer than the model can order layouts/.test(why), Number(lead[1]) < 5, why);
  assert.equal(await page.isVisible('#pareto-plot'), true);
  // The front's points are drawn (SVG circles, with a size), one per layout of the front.
  const dots = await page.$$eval('#pareto-plot circle.front', (cs) => cs.map((c) => c.getBBox().width));
  await page.locator('#pareto-plot').screenshot({ path: shot('pareto') });
  assert.ok(await smallestLabelPx('#pareto-plot') >= 10, 'Pareto labels readable');
  assert.ok(dots.length >= 1 && dots.every((w) => w > 0), JSON.stringify(dots));
  // The cluster's throughput and the three memory figures are shown with the plan.
  // Llama 3 8B on 16 GPUs runs well under a million tokens/s: whole tokens, as the terminal prints them.
  assert.match(await page.textContent('#tps-cluster'), /^\d{1,3}(,\d{3})+ tokens\/s for the cluster$/);
  assert.match(await page.textContent('#mem-stage'), /allocated [\d.]+ GB, reserved [\d.]+ GB, device [\d.]+ GB$/);
  await page.uncheck('#pin-tp');
  await page.uncheck('#pareto');
  await page.click('#find-best');
  await settle(() => document.querySelector('#pareto-plot').hasAttribute('hidden'));
  assert.equal(await page.isVisible('#pareto-plot'), false);
});

test('the search can leave a tenth of the memory free, the memory prediction’s own error', async () => {
  // Llama 3 70B on 64 H100s at 8k tokens: the fastest layout fits with under half a GB to spare.
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=2&pp=4&gbs=64&seq=8192');
  await ready();
  await page.click('#find-best');
  await page.waitForSelector('#search-results li button.load', { timeout: 20000 });
  const spare = (row) => {
    const m = row.match(/([\d.]+) ([kMGT])B to spare/);
    return Number(m[1]) * { k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2]];
  };
  const tight = await page.$$eval('#search-results li', (lis) => lis.map((li) => li.textContent));
  assert.ok(spare(tight[0]) < 7.7e9, tight[0]);
  await page.check('#headroom');
  await page.click('#find-best');
  await settle(() => /that fit leave less than a tenth free\.$/.test(document.querySelector('#search-summary').textContent));
  // Each answer now leaves at least a tenth of what it needs (85.5 GB usable: 7.7 GB or more).
  const roomy = await page.$$eval('#search-results li', (lis) => lis.map((li) => li.textContent));
  assert.ok(roomy.length >= 1);
  for (const r of roomy) assert.ok(spare(r) >= 7.7e9, r);
  await page.uncheck('#headroom');
});

test('the framework decides how stages split: nanotron gives its first stage more layers', async () => {
  await page.goto(base + '#model=llama3-8b&cluster=dgx-h100&gpus=64&tp=1&pp=8&gbs=64&seq=4096');
  await ready();
  await settle(() => document.querySelector('#pp').value === '8' && document.querySelector('#fw').value === '');
  assert.doesNotMatch(await page.textContent('#findings'), /Uneven pipeline/);
  // nanotron splits by compute cost: 5 layers on the first stage (as the Ultra-Scale Playbook prints), 2 on
  // the last, which also holds the LM head.
  await page.selectOption('#fw', 'nanotron');
  await settle(() => /Uneven pipeline: 32 layers on 8 stages, 2 to 5 per stage/.test(document.querySelector('#findings').textContent));
  assert.match(page.url(), /fw=nanotron/);
  await page.selectOption('#fw', '');
  await settle(() => !/Uneven pipeline/.test(document.querySelector('#findings').textContent));
});

test('a framework brings its gradient dtype and overlaps: the controls show them, as the CLI plans it', async () => {
  // Llama 3 70B, TP8 on 64 H100. Generic: bf16 gradients, DP overlap on, TP overlap off. Megatron-LM keeps
  // fp32 main gradients (8.8 B parameters a GPU: 17.64 → 35.28 GB) and overlaps DP only when asked;
  // NeMo / Megatron-Bridge recipes reduce in bf16 and turn TP overlap on; torchtitan reduces in fp32.
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&gbs=64&seq=8192');
  await ready();
  const grads = () => page.textContent('#memory-legend');
  assert.match(await grads(), /grads 17\.64 GB/);
  const want = async (fw, grad, tpo, dpo) => {
    await page.selectOption('#fw', fw);
    await settle(([g, t, d]) => document.querySelector('#grad').value === g && document.querySelector('#tpo').checked === t &&
      document.querySelector('#dpo').checked === d, [grad, tpo, dpo]);
    await settle((g) => new URLSearchParams(location.hash.slice(1)).get('grad') === g, grad);
  };
  await want('Megatron-LM', 'fp32', false, false);
  await settle(() => /grads 35\.28 GB/.test(document.querySelector('#memory-legend').textContent));
  assert.match(page.url(), /fw=Megatron-LM/);
  assert.match(page.url(), /dpo=0/);
  await want('Megatron-Bridge', 'bf16', true, true);
  await want('torchtitan', 'fp32', false, true);
  // What the user sets afterwards stays theirs.
  await page.selectOption('#grad', 'bf16');
  await settle(() => /grads 17\.64 GB/.test(document.querySelector('#memory-legend').textContent));
  await want('', 'bf16', false, true);
  // A link that names the framework and not its settings gets the framework's; one that names a
  // setting keeps it.
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&gbs=64&seq=8192&fw=Megatron-LM');
  await settle(() => document.querySelector('#grad').value === 'fp32' && !document.querySelector('#dpo').checked);
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&gbs=64&seq=8192&fw=Megatron-LM&grad=bf16');
  await settle(() => /grads 17\.64 GB/.test(document.querySelector('#memory-legend').textContent) &&
    !document.querySelector('#dpo').checked);
  assert.equal(await page.inputValue('#grad'), 'bf16');
});

test('the search plans with the chosen framework, and a loaded result keeps it', async () => {
  await page.goto(base + '#model=llama3-8b&cluster=dgx-h100&gpus=16&tp=1&gbs=64&seq=4096');
  await ready();
  await page.selectOption('#fw', 'Megatron-LM');
  await settle(() => document.querySelector('#grad').value === 'fp32');
  const [request] = await Promise.all([page.waitForRequest((r) => r.url().endsWith('/api/search')), page.click('#find-best')]);
  const sent = JSON.parse(request.postData()).layout;
  assert.equal(sent.framework, 'Megatron-LM');
  assert.equal(sent.grad_dtype, 'fp32');
  assert.equal(sent.dp_comm_overlap, false);
  await page.waitForSelector('#search-results li button.load', { timeout: 20000 });
  await page.click('#search-results li:first-child button.load');
  await settle(() => document.querySelector('#fw').value === 'Megatron-LM' && /fw=Megatron-LM/.test(location.hash));
  assert.equal(await page.inputValue('#grad'), 'fp32');
  await page.selectOption('#fw', '');
  await settle(() => document.querySelector('#grad').value === 'bf16');
});

test('TP overlap is a control: the finding about exposed TP traffic names it, and ticking it hides most of it', async () => {
  // Llama 3 70B, TP8 on 64 H100 with SP: off (Megatron's default), TP's traffic is exposed in full (but
  // for the output layer's backward call, under its weight-gradient GEMM) and a finding says so; on, about
  // 1/8 of it stays exposed, and the setting travels in the URL.
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&gbs=64&seq=8192');
  await ready();
  await settle(() => /TP traffic is exposed in full/.test(document.querySelector('#findings').textContent));
  assert.equal(await page.isChecked('#tpo'), false);
  const tpRow = () => page.$$eval('#comm tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent))
    .find((cells) => cells[0] === 'TP'));
  const off = await tpRow();
  const secs = (t) => parseFloat(t) * (/µs$/.test(t) ? 1e-6 : /ms$/.test(t) ? 1e-3 : 1);
  assert.ok(secs(off[6]) <= secs(off[5]) && secs(off[6]) > 0.99 * secs(off[5]), `${off[6]} of ${off[5]}`);  // exposed ≈ time
  await page.check('#tpo');
  await settle(() => !/TP traffic is exposed in full/.test(document.querySelector('#findings').textContent));
  assert.match(page.url(), /tpo=1/);
  const on = await tpRow();
  assert.equal(on[5], off[5]);
  assert.notEqual(on[6], off[6]);
  // Without sequence parallelism there is nothing to overlap: the page says so instead of guessing.
  await page.uncheck('#sp');
  await settle(() => /tp_comm_overlap: expected only with sequence_parallel true/.test(document.querySelector('#error').textContent));
  await page.check('#sp');
  await page.uncheck('#tpo');
  await settle(() => document.querySelector('#error').hidden);
});

test('DP overlap is a control, on by default: unticked, the DP traffic runs after the backward and a finding names the flags', async () => {
  // Llama 3 8B on 64 H100, DP 64 with the distributed optimizer, one micro-batch a rank: overlapped, the
  // backward and forward hide part of the reduce-scatter and all-gather; unticked (Megatron-LM's default
  // without --overlap-grad-reduce), all of it is exposed, the time unchanged, and the setting travels in the URL.
  await page.goto(base + '#model=llama3-8b&cluster=dgx-h100&gpus=64&tp=1&gbs=64&seq=4096&zero=1');
  await ready();
  assert.equal(await page.isChecked('#dpo'), true);
  const dpRow = () => page.$$eval('#comm tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent))
    .find((cells) => cells[0] === 'DP'));
  const on = await dpRow();
  assert.notEqual(on[6], on[5]);
  assert.doesNotMatch(await page.textContent('#findings'), /DP traffic runs after the backward/);
  await page.uncheck('#dpo');
  await settle(() => /DP traffic runs after the backward/.test(document.querySelector('#findings').textContent));
  assert.match(page.url(), /dpo=0/);
  const off = await dpRow();
  assert.equal(off[5], on[5]);
  assert.equal(off[6], off[5]);  // exposed = time
  await page.check('#dpo');
  await settle(() => !/DP traffic runs after the backward/.test(document.querySelector('#findings').textContent));
});

test('EP overlap is a control for MoE models: it hides the all-to-all under the other micro-batch, and needs interleaving under PP', async () => {
  // Qwen3-30B-A3B on 64 H100, EP8, no PP, 8 micro-batches: off, the all-to-all (about a fifth of the
  // step) is exposed in full and a finding says so; on, it runs under the paired micro-batch's
  // computation. A dense model has no such box.
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&gbs=64&seq=8192');
  await ready();
  assert.equal(await page.isVisible('#epo'), false);
  await page.goto(base + '#model=qwen3-30b-a3b&cluster=dgx-h100&gpus=64&tp=1&ep=8&gbs=512&seq=4096');
  await ready();
  await settle(() => document.querySelector('#error').hidden && [...document.querySelectorAll('#comm tbody tr')].some((r) => r.cells[0].textContent === 'EP'));
  assert.equal(await page.isVisible('#epo'), true);
  const epRow = () => page.$$eval('#comm tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent))
    .find((cells) => cells[0] === 'EP'));
  const off = await epRow();
  assert.equal(off[6], off[5]);  // exposed = time
  assert.match(await page.textContent('#findings'), /EP all-to-all is exposed in full/);
  await page.check('#epo');
  await settle(() => !/EP all-to-all is exposed in full/.test(document.querySelector('#findings').textContent));
  assert.match(page.url(), /epo=1/);
  const on = await epRow();
  assert.equal(on[5], off[5]);
  assert.notEqual(on[6], off[6]);
  // Under PP without interleaving Megatron cannot pair micro-batches: said, not corrected.
  await setNumber('pp', 2);
  await settle(() => /ep_comm_overlap: expected only with the interleaved schedule/.test(document.querySelector('#error').textContent));
  await page.uncheck('#epo');
  await settle(() => document.querySelector('#error').hidden);
  // The dispatcher: DeepEP sends a token once to each GPU holding any of its 8 experts (16 experts per
  // GPU: about 4.6 other GPUs, not 7 copies), at the link's achieved bandwidth: the EP row names it and
  // takes less time; the choice rides in the link.
  await setNumber('pp', 1);
  await settle(() => document.querySelector('#error').hidden);
  const a2a = await epRow();
  assert.equal(await page.isVisible('#disp'), true);
  await page.selectOption('#disp', 'deepep');
  await settle(() => [...document.querySelectorAll('#comm tbody tr')].some((r) => /DeepEP/.test(r.textContent)));
  assert.match(page.url(), /disp=deepep/);
  const deepep = await epRow();
  const seconds = (t) => parseFloat(t) * ({ s: 1, ms: 1e-3, 'µs': 1e-6 }[t.trim().split(/\s+/).pop()] ?? NaN);
  assert.ok(seconds(deepep[5]) < seconds(a2a[5]), `${deepep[5]} < ${a2a[5]}`);
  await page.selectOption('#disp', 'alltoall');
  await settle(() => ![...document.querySelectorAll('#comm tbody tr')].some((r) => /DeepEP/.test(r.textContent)));
  // The load: the busiest rank's 1.5 × the mean share of routed tokens makes every rank wait for 1.5 ×
  // the all-to-all (Megatron pads to capacity: a factor of 2 sizes every buffer at twice the fair share).
  assert.equal(await page.isVisible('#imb'), true);
  assert.equal(await page.inputValue('#cap'), '');
  await setNumber('imb', 1.5);
  await settle(() => location.hash.includes('imb=1.5'));
  await settle((t) => { const r = [...document.querySelectorAll('#comm tbody tr')].find((x) => x.cells[0].textContent === 'EP');
    return r && r.cells[5].textContent !== t; }, a2a[5]);
  const busy = await epRow();
  const ratio = seconds(busy[5]) / seconds(a2a[5]);
  assert.ok(ratio > 1.3 && ratio < 1.6, `imbalance 1.5: all-to-all ${busy[5]} against ${a2a[5]}`);
  await setNumber('imb', 1);
  await setNumber('cap', 2);
  await settle(() => location.hash.includes('cap=2') && document.querySelector('#error').hidden);
  await settle((t) => { const r = [...document.querySelectorAll('#comm tbody tr')].find((x) => x.cells[0].textContent === 'EP');
    return r && !t.includes(r.cells[5].textContent); }, [busy[5], a2a[5]]);
  const padded = await epRow();
  assert.ok(seconds(padded[5]) > 1.6 * seconds(a2a[5]), `capacity 2: all-to-all ${padded[5]} against ${a2a[5]}`);
  // Out of range: the API names the field, the page shows it and plans nothing.
  await setNumber('cap', 0.001);
  await settle(() => /moe_capacity_factor/.test(document.querySelector('#error').textContent));
  await setNumber('cap', '');
  await settle(() => document.querySelector('#error').hidden && !location.hash.includes('cap=0.001'));
});

test('a MoE model\'s expert numbers are editable, and only a MoE model shows them', async () => {
  await page.goto(base + '#model=mixtral-8x7b&cluster=dgx-h100&gpus=64&tp=2&ep=8&gbs=64&seq=4096');
  await ready();
  await page.click('#advanced summary');
  assert.equal(await page.inputValue('#e-experts'), '8');
  assert.equal(await page.inputValue('#e-topk'), '2');
  // 16 experts of the same size: the routed-expert weights per GPU double (EP8 holds 2 instead of 1).
  const before = Number(await page.getAttribute('#memory-bar', 'data-total'));
  await setNumber('e-experts', 16);
  await settle(() => location.hash.includes('e-experts=16'));
  await settle((b) => Number(document.querySelector('#memory-bar').getAttribute('data-total')) > b, before);
  const plan = await page.evaluate(async () => {
    const r = await fetch('/api/plan', { method: 'POST', body: JSON.stringify({ model: { preset: 'mixtral-8x7b',
      moe: { experts: 16, top_k: 2, shared_experts: 0, expert_ffn_hidden: 14336, dense_layers: 0, layer_freq: 1 } },
      cluster: { preset: 'dgx-h100', gpus: 64 }, layout: { tp: 2, ep: 8, global_batch: 64, seq_len: 4096 } }) });
    return r.json();
  });
  assert.equal(plan.inputs.model.moe.experts, 16);
  // Editing DeepSeek-V3's experts keeps the rest of its MoE pattern: its three dense layers and its
  // group-limited routing (4 of 8 groups), which the edited request had dropped.
  await page.selectOption('#model', 'deepseek-v3');
  await setNumber('e-topk', 6);
  await settle(() => location.hash.includes('e-topk=6'));
  const moe = await page.evaluate(() => buildCase().model.moe);
  assert.deepEqual([moe.top_k, moe.dense_layers, moe.router_groups, moe.group_topk], [6, 3, 8, 4]);
  // A dense model hides them.
  await page.selectOption('#model', 'llama3-8b');
  await settle(() => document.querySelector('#e-experts').closest('label').hidden);
  await page.click('#advanced summary');
});

test('a Hugging Face config.json loads in the browser, plans, and travels in the link', async () => {
  await page.goto(base + '#model=llama3-8b&cluster=dgx-h100&gpus=64&tp=8&gbs=64&seq=8192');
  await ready();
  // Gemma 3 27B's config.json: its language model is read from text_config (tests/hf_families_test.cpp).
  const gemma = { architectures: ['Gemma3ForConditionalGeneration'], _name_or_path: 'google/gemma-3-27b-it',
    text_config: { head_dim: 128, hidden_size: 5376, intermediate_size: 21504, num_attention_heads: 32,
                   num_hidden_layers: 62, num_key_value_heads: 16, sliding_window: 1024 } };
  const preset = Number(await page.getAttribute('#memory-bar', 'data-total'));
  await page.setInputFiles('#hf-file', { name: 'config.json', mimeType: 'application/json',
                                         buffer: Buffer.from(JSON.stringify(gemma)) });
  // The link is written before the plan comes back: wait for the loaded model's plan as well.
  await settle(() => location.hash.includes('mj='));
  await settle((b) => Number(document.querySelector('#memory-bar').getAttribute('data-total')) !== b, preset);
  assert.equal(await page.inputValue('#model'), 'config.json');
  assert.match(await page.textContent('#model option[value="config.json"]'), /gemma-3-27b-it \(text model\) \(config\.json\)/);
  await page.click('#advanced summary');
  assert.equal(await page.inputValue('#m-layers'), '62');
  // Its numbers edit like a preset's: 31 layers hold about half the weights.
  const before = Number(await page.getAttribute('#memory-bar', 'data-total'));
  await setNumber('m-layers', 31);
  await settle((b) => Number(document.querySelector('#memory-bar').getAttribute('data-total')) < b, before);
  await page.click('#advanced summary');
  const link = await page.evaluate(() => location.href);
  const other = await browser.newPage({ viewport: VIEWPORT });
  await other.goto(link);
  await ready(other);
  assert.equal(await other.inputValue('#model'), 'config.json');
  assert.equal(await other.inputValue('#m-layers'), '31');
  await other.close();
  // A file that is not a config the planner reads is named on the error line; the plan stays as it was.
  await page.setInputFiles('#hf-file', { name: 'config.json', mimeType: 'application/json',
                                         buffer: Buffer.from('{"architectures": ["FalconForCausalLM"]}') });
  await settle(() => !document.querySelector('#error').hidden);
  assert.match(await page.textContent('#error'), /model\.architectures: expected a supported architecture, got "FalconForCausalLM"/);
  assert.equal(await page.inputValue('#model'), 'config.json');
  // Choosing a file plans nothing until it is read: the form does not re-plan the state as it was, whose
  // answer would clear the bad file's error.
  const plans = [];
  const count = (r) => { if (new URL(r.url()).pathname === '/api/plan') plans.push(r); };
  page.on('request', count);
  await page.setInputFiles('#hf-file', { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from('{oops') });
  await settle(() => document.querySelector('#error').textContent.startsWith('config.json: expected JSON'));
  await page.waitForTimeout(300);  // past the controls' debounce
  page.off('request', count);
  assert.equal(plans.length, 0);
  assert.match(await page.textContent('#error'), /^config\.json: expected JSON/);
  await page.selectOption('#model', 'llama3-8b');
  await settle(() => document.querySelector('#error').hidden);
});

test('a shared URL restores the whole state', async () => {
  const url = base + '#model=mixtral-8x7b&cluster=dgx-h100&gpus=32&tp=2&pp=2&ep=8&mb=2&gbs=128&seq=4096&zero=2&recompute=selective&sp=1&precision=fp8&schedule=1f1b';
  const other = await browser.newPage({ viewport: VIEWPORT });
  await other.goto(url);
  await ready(other);
  assert.equal(await other.inputValue('#model'), 'mixtral-8x7b');
  assert.equal(await other.inputValue('#tp'), '2');
  assert.equal(await other.inputValue('#pp'), '2');
  assert.equal(await other.inputValue('#ep'), '8');
  assert.equal(await other.inputValue('#mb'), '2');
  assert.equal(await other.inputValue('#zero'), '2');
  assert.equal(await other.inputValue('#recompute'), 'selective');
  assert.equal(await other.inputValue('#precision'), 'fp8');
  assert.equal(await other.textContent('#dp'), '8');
  assert.ok(await other.locator('#comm tr[data-axis="ep"]').count() >= 1, 'the EP all-to-all is listed');
  await other.screenshot({ path: shot('shared-url'), fullPage: true });
  await other.close();
});

test('find best layout, then load a result', async () => {
  await page.goto(base + '#model=llama3-8b&cluster=dgx-h100&gpus=16&tp=1&gbs=64&seq=4096');
  await ready();
  await page.click('#find-best');
  await page.waitForSelector('#search-results li button.load', { timeout: 20000 });
  assert.match(await page.textContent('#search-summary'), /layouts evaluated/);
  const first = await page.textContent('#search-results li:first-child');
  const m = first.match(/TP(\d+)·CP(\d+)·PP(\d+)·DP(\d+)/);
  assert.ok(m, first);
  await page.click('#search-results li:first-child button.load');
  await settle((tp) => document.querySelector('#tp').value === tp, m[1]);
  assert.equal(await page.inputValue('#tp'), m[1]);
  assert.equal(await page.inputValue('#cp'), m[2]);
  assert.equal(await page.inputValue('#pp'), m[3]);
  assert.match(page.url(), new RegExp(`tp=${m[1]}`));
  // Each Load button says which layout it loads; every row shows its rank order.
  const names = await page.$$eval('#search-results button.load', (bs) => bs.map((b) => b.getAttribute('aria-label')));
  assert.equal(new Set(names).size, names.length);
  assert.match(names[0], /^Load layout 1: TP\d+·CP\d+·PP\d+·DP\d+/);
  assert.match(first, /order tp-/);
  // Load keeps the rank order (and ETP and gradient dtype) of the result.
  assert.equal(await page.inputValue('#order'), first.match(/order (tp-[a-z-]+)/)[1]);
  await page.screenshot({ path: shot('search'), fullPage: true });
  // Results answer for one model: a model change takes them away.
  await page.selectOption('#model', 'llama3-8b');
  await settle(() => document.querySelectorAll('#search-results li').length === 0);
  assert.equal(await page.isVisible('#search-title'), false);
});

test('a pipelined plan shows its simulated timeline, one pass at a time per rank', async () => {
  // 64 H100, TP8 · PP4 · DP2, 16 sequences: m = 16 / 2 = 8 micro-batches; ZB-H1 runs F, B and W of
  // each on every rank, 3 · 8 · 4 = 96 passes.
  await page.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=4&gbs=16&seq=4096&schedule=zb');
  await ready();
  await settle(() => document.querySelectorAll('#timeline rect.pass').length > 0);
  assert.equal(await page.locator('#timeline-section').isVisible(), true);
  const passes = await page.$$eval('#timeline rect.pass', (rs) => rs.map((r) => ({
    rank: Number(r.dataset.rank), kind: r.dataset.kind, start: Number(r.dataset.start), end: Number(r.dataset.end) })));
  assert.equal(passes.length, 96);
  for (const k of ['F', 'B', 'W']) assert.equal(passes.filter((p) => p.kind === k).length, 32);
  for (let r = 0; r < 4; ++r) {
    const mine = passes.filter((p) => p.rank === r).sort((a, b) => a.start - b.start);
    for (let i = 1; i < mine.length; ++i) assert.ok(mine[i - 1].end <= mine[i].start + 1e-3, `rank ${r} overlaps`);
  }
  assert.match(await page.textContent('#timeline-caption'), /zb · 8 micro-batches/);
  // ZB-H1 holds pp micro-batches on every stage: the last one, with the loss on top, is the fullest.
  assert.match(await page.textContent('#mem-stage'), /^stage 3 \(fullest\), at a micro-batch's loss · /);
  assert.ok(await smallestLabelPx('#timeline') >= 10, 'timeline labels readable');
  assert.match(await page.textContent('#time'), /pipeline bubble \(simulated\)/);
  await page.screenshot({ path: shot('timeline'), fullPage: true });
  // DualPipe: 4 micro-batches enter at each end; every rank still runs 8 forwards and 8 backwards.
  // While the next timeline is simulated the old one is marked out of date; then replaced.
  let sawStale = false;
  const watch = setInterval(async () => {
    if (await page.evaluate(() => document.querySelector('#timeline').classList.contains('stale'))) sawStale = true;
  }, 5);
  await page.route('**/api/trace', async (route) => { await new Promise((r) => setTimeout(r, 300)); await route.continue(); });
  await page.selectOption('#schedule', 'dualpipe');
  await settle(() => /dualpipe · 8 micro-batches/.test(document.querySelector('#timeline-caption').textContent));
  clearInterval(watch);
  await page.unroute('**/api/trace');
  assert.ok(sawStale, 'the old timeline was not marked while the new one was simulated');
  assert.equal(await page.evaluate(() => document.querySelector('#timeline').classList.contains('stale')), false);
  const dual = await page.$$eval('#timeline rect.pass', (rs) => rs.map((r) => r.dataset.kind));
  for (const k of ['F', 'B']) assert.equal(dual.filter((x) => x === k).length, 32);
  await page.screenshot({ path: shot('timeline-dualpipe'), fullPage: true });
  await page.selectOption('#schedule', '1f1b');
  await setNumber('pp', 1);
  await settle(() => document.querySelector('#timeline-section').hidden);
});

test('on a phone the answer comes first and the page never scrolls sideways', async () => {
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await phone.goto(base + '#model=deepseek-v3&cluster=dgx-h100&gpus=256&tp=8&pp=4&ep=8&gbs=256&seq=4096&recompute=full');
  await ready(phone);
  const layout = await phone.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    results: document.querySelector('#results').getBoundingClientRect().top,
    controls: document.querySelector('#controls').getBoundingClientRect().top,
    model: document.querySelector('#model').getBoundingClientRect().width,
    comm: document.querySelector('#comm').closest('.scroll').getBoundingClientRect().right,
  }));
  assert.ok(layout.page <= 390, `the page is ${layout.page} px wide on a 390 px screen`);
  assert.ok(layout.results < layout.controls, 'results above the controls');
  assert.ok(layout.model > 300, `the model select is ${layout.model} px wide`);
  assert.ok(layout.comm <= 390);
  await phone.screenshot({ path: `${SHOTS}/phone.png`, fullPage: false });
  await phone.close();
});

test('on a phone: make it fit, compare and export work and stay inside the screen', async () => {
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
  phone.on('pageerror', (e) => { throw e; });
  await phone.goto(base + '#model=llama3-70b&cluster=dgx-h100&gpus=64&tp=8&pp=1&gbs=64&seq=8192&zero=0&mb=2');
  await ready(phone);
  await phone.waitForFunction(() => document.querySelectorAll('#fit-changes li').length > 0);
  await phone.click('#fit-changes li:first-child button.apply');
  await phone.waitForFunction(() => document.querySelector('#zero').value === '2' && document.querySelector('#fit-box').hidden);
  await phone.click('#pin');
  await phone.fill('#tp', '4');
  await phone.dispatchEvent('#tp', 'input');
  await phone.waitForFunction(() => document.querySelector('#compare tbody tr td:nth-child(3)')?.textContent.startsWith('TP4'));
  // ZeRO 2 (the fix applied above) is DeepSpeed's to run: Megatron has no ZeRO-2. Its AutoTP keeps the
  // norms' activations whole, so sequence parallelism goes off first (the export refuses it otherwise).
  await phone.uncheck('#sp');
  await phone.click('button.export[data-format="deepspeed"]');
  await phone.waitForFunction(() => document.querySelector('#export-text').textContent.includes('"autotp_size": 4'));
  const widths = await phone.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    compare: document.querySelector('#compare').closest('.scroll').getBoundingClientRect().right,
    exportText: document.querySelector('#export-text').getBoundingClientRect().right,
  }));
  assert.ok(widths.page <= 390 && widths.compare <= 390 && widths.exportText <= 390, JSON.stringify(widths));
  await phone.close();
});

test('a narrow window still shows the controls and results', async () => {
  const narrow = await browser.newPage({ viewport: { width: 420, height: 900 } });
  await narrow.goto(base + '#model=llama3-70b&cluster=nvl72&gpus=144&tp=8&gbs=144&seq=4096');
  await ready(narrow);
  assert.equal(await narrow.locator('#topology g.group.tp.crossing').count(), 0);  // TP8 inside an NVL72 rack
  assert.ok(await narrow.isVisible('#tp'));
  assert.ok(await narrow.isVisible('#memory-bar'));
  await narrow.screenshot({ path: shot('narrow'), fullPage: true });
  await narrow.close();
});
