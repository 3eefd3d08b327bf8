// The Web Worker: loads the same WebAssembly module as the page. Its entry point sees no
// `window`, installs the job handler (src/worker.rs) and posts "Ready".
import init from './orthomask-web.js';

init().catch((error) => {
  // One line for the page (Reply::Broken); never any data.
  self.postMessage(JSON.stringify({ Broken: { message: `the background worker could not start: ${error}` } }));
});
