// Waiting for a condition: shared by the web suite (e2e/tests, through e2e/lib.mjs) and the
// services' end-to-end scripts (e2e-services/lib.mjs). Plain Node: no test runner, no browser.

/**
 * Ask `predicate` every `everyMs` milliseconds until it answers something truthy, and answer
 * that; throw once `seconds` have passed (a deadline against hangs, not a timing).
 */
export async function waitFor(predicate, what, seconds = 60, everyMs = 100) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
