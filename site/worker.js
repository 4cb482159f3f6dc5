// The static site's planner thread: shardplan's API function compiled to WebAssembly (site/wasm_api.cpp),
// run in a Web Worker so a long search never freezes the page. site/static.js posts each /api/ request
// here as { id, method, path, body } and gets back { id, status, body }.
var Module = {};
const started = new Promise((resolve) => { Module.onRuntimeInitialized = resolve; });
importScripts('shardplan.js');

onmessage = async (event) => {
  const { id, method, path, body } = event.data;
  await started;
  const out = Module.ccall('shardplan_api', 'number', ['string', 'string', 'string'], [method, path, body]);
  const text = Module.UTF8ToString(out);
  Module.ccall('shardplan_free', null, ['number'], [out]);
  const newline = text.indexOf('\n');
  postMessage({ id, status: Number(text.slice(0, newline)), body: text.slice(newline + 1) });
};
