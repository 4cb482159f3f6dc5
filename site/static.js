// The static site: the page's requests to .../api/... are answered in the browser by shardplan's API
// function compiled to WebAssembly, running in a Web Worker (site/worker.js), so no shardplan server is
// needed and a long search leaves the page responsive. Loaded before panels.js and app.js, which are
// unchanged: they call fetch() as they would against `shardplan serve`.
(function () {
  const worker = new Worker('worker.js');
  const waiting = new Map();
  let next = 0;
  worker.onmessage = (event) => {
    const { id, status, body } = event.data;
    const resolve = waiting.get(id);
    waiting.delete(id);
    resolve(new Response(body, { status, headers: { 'Content-Type': 'application/json' } }));
  };
  const networkFetch = window.fetch.bind(window);
  window.fetch = function (input, init) {
    const options = init || {};
    const url = new URL(typeof input === 'string' ? input : input.url, window.location.href);
    const at = url.pathname.indexOf('/api/');
    if (url.origin !== window.location.origin || at < 0) return networkFetch(input, init);
    const id = ++next;
    const method = (options.method || 'GET').toUpperCase();
    const body = typeof options.body === 'string' ? options.body : '';
    return new Promise((resolve) => {
      waiting.set(id, resolve);
      worker.postMessage({ id, method, path: url.pathname.slice(at), body });
    });
  };
})();
