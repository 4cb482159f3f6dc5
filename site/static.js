// The static site: the page's requests to .../api/... are answered in the browser by shardplan's API
// function compiled to WebAssembly (site/wasm_api.cpp), so no shardplan server is needed. Loaded before
// shardplan.js, which picks up this Module object; app.js is unchanged.
var Module = {};
(function () {
  let started;
  const ready = new Promise((resolve) => { started = resolve; });
  Module.onRuntimeInitialized = () => started();
  const networkFetch = window.fetch.bind(window);
  window.fetch = async function (input, init) {
    const options = init || {};
    const url = new URL(typeof input === 'string' ? input : input.url, window.location.href);
    const at = url.pathname.indexOf('/api/');
    if (url.origin !== window.location.origin || at < 0) return networkFetch(input, init);
    await ready;
    const method = (options.method || 'GET').toUpperCase();
    const body = typeof options.body === 'string' ? options.body : '';
    const out = Module.ccall('shardplan_api', 'number', ['string', 'string', 'string'],
                             [method, url.pathname.slice(at), body]);
    const text = Module.UTF8ToString(out);
    Module.ccall('shardplan_free', null, ['number'], [out]);
    const newline = text.indexOf('\n');
    return new Response(text.slice(newline + 1), {
      status: Number(text.slice(0, newline)),
      headers: { 'Content-Type': 'application/json' },
    });
  };
})();
