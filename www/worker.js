// The Web Worker of the whole app (src/app.rs): loads the whole app's WebAssembly module, whose
// entry point sees no `window`, installs the job handler (src/worker.rs) and posts "Ready". The
// participant's module starts no worker.
//
// Both files are fetched with their digests (issue 27 §2), as the page fetches them
// (index.html): scripts/build-web.sh writes the content-hashed name and the SHA-384 of each built
// file below, so a module or glue with one byte changed is refused by the browser before anything
// runs. A static `import`
// cannot carry an integrity attribute (import maps do not reach workers), so the glue is first
// fetched with its digest and only then imported (the browser answers that import from the same
// response: it is in its HTTP cache and, once installed, in the service worker's).
const GLUE = './{{name orthomask-web.js}}';
const MODULE = './{{name orthomask-web_bg.wasm}}';

(async () => {
  await fetch(GLUE, { integrity: '{{sri orthomask-web.js}}' });
  const { default: init } = await import(GLUE);
  await init({ module_or_path: fetch(MODULE, { integrity: '{{sri orthomask-web_bg.wasm}}' }) });
})().catch((error) => {
  // One line for the page (Reply::Broken); never any data.
  self.postMessage(JSON.stringify({ Broken: { message: `the background worker could not start: ${error}` } }));
});
