// The static site (make site → build-site/site): the page with the planner compiled to WebAssembly,
// served by a plain static file server, in headless Chromium. Its plan must be the server's, field for field
// (numbers to the last bits libm rounds).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';

const BIN = process.env.SHARDPLAN_BIN;
const SITE = process.env.SHARDPLAN_SITE_DIR;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SHOTS = process.env.SHOTS_DIR;
// Run twice by CTest: VIEWPORT=desktop (1440×900) and VIEWPORT=phone (390×844).
const VIEW = process.env.VIEWPORT || 'desktop';
const VIEWPORT = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } }[VIEW];
if (!VIEWPORT) throw new Error(`VIEWPORT: expected desktop or phone, got ${VIEW}`);
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
let files, server, api, siteBase, apiBase, browser, page;

before(async () => {
  assert.ok(BIN, 'SHARDPLAN_BIN must point at the shardplan binary');
  assert.ok(SITE && existsSync(join(SITE, 'shardplan.wasm')), `no static site in ${SITE} (make site builds it)`);
  // A static file server: GET of a file in the site folder, 404 for anything else (no /api behind it).
  files = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^\/+/, '') || 'index.html';
    const file = join(SITE, path);
    if (!file.startsWith(SITE) || !existsSync(file)) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] || 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise((resolve) => files.listen(0, '127.0.0.1', resolve));
  siteBase = `http://127.0.0.1:${files.address().port}/`;
  api = spawn(BIN, ['serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  apiBase = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('server did not start')), 10000);
    api.stdout.on('data', (d) => {
      const m = String(d).match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) { clearTimeout(t); resolve(`http://127.0.0.1:${m[1]}/`); }
    });
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  page = await browser.newPage({ viewport: VIEWPORT });
  page.on('pageerror', (e) => { throw e; });
});

after(async () => {
  await browser?.close();
  api?.kill('SIGTERM');
  files?.close();
});

// Field for field, numbers to a relative 1e-12: the WebAssembly build's libm (emscripten's musl exp, log,
// pow) may round a last bit differently from the server's glibc (874.849093296447 against
// 874.8490932964472 for one range bound), which no model difference comes near.
function assertSamePlan(actual, expected, path = '') {
  if (typeof expected === 'number' && typeof actual === 'number') {
    const scale = Math.max(Math.abs(actual), Math.abs(expected));
    assert.ok(Math.abs(actual - expected) <= 1e-12 * scale, `${path}: ${actual} against ${expected}`);
  } else if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${path}: ${JSON.stringify(actual)} against an object`);
    assert.equal(Array.isArray(actual), Array.isArray(expected), `${path}: array against object`);
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${path}: keys`);
    for (const k of Object.keys(expected)) assertSamePlan(actual[k], expected[k], `${path}.${k}`);
  } else {
    assert.equal(actual, expected, path);
  }
}

const CASE = { model: 'llama3-70b', cluster: { preset: 'dgx-h100', gpus: 512 },
               layout: { tp: 8, pp: 4, vpp: 5, global_batch: 512, seq_len: 8192, recompute: 'selective' } };

test('the static page plans in the browser, and its plan is the server\'s', async () => {
  await page.goto(siteBase + '#model=llama3-70b&cluster=dgx-h100&gpus=512&tp=8&pp=4&gbs=512&seq=8192');
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 });
  await page.waitForFunction(() => Number(document.querySelector('#memory-bar')?.getAttribute('data-total')) > 0);
  assert.equal(await page.locator('#error').isVisible(), false);
  if (SHOTS) {
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, VIEW === 'phone' ? 'static-site-phone.png' : 'static-site.png'), fullPage: false });
  }
  // The same request through the page's fetch (answered by WebAssembly) and through the server.
  const inBrowser = await page.evaluate(async (c) => {
    const r = await fetch('/api/plan', { method: 'POST', body: JSON.stringify(c) });
    return { status: r.status, body: await r.json() };
  }, CASE);
  const fromServer = await (await fetch(apiBase + 'api/plan', { method: 'POST', body: JSON.stringify(CASE) })).json();
  assert.equal(inBrowser.status, 200);
  assert.equal(inBrowser.body.layout_string, 'TP8·CP1·PP4·DP16·EP1·VPP5');
  assertSamePlan(inBrowser.body, fromServer);
  // Bad input is the same one-line 400 as the server's.
  const wrong = '{"model": "llama9", "cluster": "dgx-h100", "layout": {}}';
  const bad = await page.evaluate(async (b) => {
    const r = await fetch('/api/plan', { method: 'POST', body: b });
    return { status: r.status, body: await r.json() };
  }, wrong);
  const serverBad = await fetch(apiBase + 'api/plan', { method: 'POST', body: wrong });
  assert.equal(bad.status, 400);
  assert.equal(serverBad.status, 400);
  assert.match(bad.body.error, /^model: expected/);
  assert.deepEqual(bad.body, await serverBad.json());
});

test('search and the timeline run in the browser too', async () => {
  const search = await page.evaluate(async () => {
    const body = { model: 'llama3-8b', cluster: { preset: 'dgx-h100', gpus: 16 }, layout: { global_batch: 64, seq_len: 4096 }, top: 3 };
    const r = await fetch('/api/search', { method: 'POST', body: JSON.stringify(body) });
    return r.json();
  });
  assert.ok(search.best.length >= 1 && search.evaluated > 0);
  // The planner runs in a Web Worker: while a long search runs, the page's own thread keeps running
  // (a timer set after the request fires long before the answer), and the page's script sees no Module.
  const timing = await page.evaluate(async () => {
    const body = { model: 'llama3-405b', cluster: { preset: 'dgx-h100', gpus: 4096 }, layout: { global_batch: 2048, seq_len: 8192 }, top: 3 };
    const t0 = performance.now();
    const answer = fetch('/api/search', { method: 'POST', body: JSON.stringify(body) }).then(() => performance.now());
    const tick = await new Promise((resolve) => setTimeout(() => resolve(performance.now()), 0));
    return { tick: tick - t0, done: (await answer) - t0, module: typeof window.Module };
  });
  assert.equal(timing.module, 'undefined');
  assert.ok(timing.tick < 100 && timing.done > timing.tick, JSON.stringify(timing));
  const trace = await page.evaluate(async () => {
    const body = { model: 'llama3-8b', cluster: { preset: 'dgx-h100', gpus: 16 }, layout: { pp: 2, global_batch: 16, seq_len: 4096 } };
    const r = await fetch('/api/trace', { method: 'POST', body: JSON.stringify(body) });
    return r.json();
  });
  assert.ok(trace.traceEvents.length > 0);
  // A Hugging Face config.json the visitor loads is read in the browser, as the server reads it.
  const config = { architectures: ['Llama4ForConditionalGeneration'], text_config: { num_local_experts: 128,
                   interleave_moe_layer_step: 2 } };  // the rest: Llama4TextConfig's defaults (Scout's shape)
  const model = await page.evaluate(async (c) => {
    const r = await fetch('/api/model', { method: 'POST', body: JSON.stringify({ model: c }) });
    return r.json();
  }, config);
  const served = await (await fetch(apiBase + 'api/model', { method: 'POST', body: JSON.stringify({ model: config }) })).json();
  assert.deepEqual(model, served);
  assert.equal(model.layers.moe, 24);
});
