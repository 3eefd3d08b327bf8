// A static server for dist/ and fixtures, plus a mock deployment (issue 10 §3): the collector
// that serves the app, its masking service provider and its right-masking services, all on one
// loopback origin. The tests start and stop it; its Ed25519 key is made afresh for every run.
//
// API mocked (the contract of src/services/http.rs, src/services/participation.rs and
// src/services/fate.rs; docs/openapi.yaml is the real one):
//   GET  /api/deployment -> {collector_public_key, collector, msp, rights, build, builds}:
//        collector = msp = base, rights = [base/right/0, base/right/1, base/right/2]; build = the
//        build digest of the served dist/ (`appBuild` below, computed here independently of the
//        app's Rust), builds = [build] unless a test publishes another list
//   POST /api/surveys/:id/definition, Content-Type: application/json, body {"invite": T} or {}
//        -> DefinitionOffer {signed: {definition, signature}, credential}: the bundled
//        surveys/:id.json (planned parameters, which meet the policy's floors) pointed at this
//        server, in the survey's current cohort, signed, with a fresh credential (one nonce per
//        offer); 415 for another content type, 400 for another body; GET answers 405 (taking a
//        place is never a GET, issue 20 §7)
//   POST /api/surveys/:id/cohorts/:k/fate, Content-Type: application/json, body {"nonce": N}
//        -> {survey, cohort, fate, answer_again}: "spoilt" or "regrouped" (and answer_again) for
//        a cohort the test spoilt or regrouped, else "open" — told only for N the nonce of a
//        credential this deployment issued with a place in cohort k of :id (issue 43 §6): an
//        unknown survey or cohort, a wrong nonce or none ({}) are all answered 404 with one
//        line, the same; 415 for another content type, 400 for another body; GET answers 405
//   POST /api/surveys/:id/uploads (provider), POST /right/:i/api/surveys/:id/uploads (share i)
//     body Upload {survey, cohort, token, values, credential, definition} -> 201 Receipt {survey,
//     cohort, upload_hash, received_at}; 401 without a credential this deployment signed for this
//     survey and cohort, unexpired; a nonce counts once per service (a retry with the same token
//     returns the same receipt); `definition` (the template's SHA-256) is checked for its form
//     only; `build` must be one of the published builds (403 otherwise, issue 27 §2); errors are
//     {"error": "one line"}.
//   Answers of /api/ are `Cache-Control: no-store`, the app's files `no-cache` (as the real
//   collector's).
// Test controls:
//   POST /__mock/mode {"fail_next": N} -> the next N uploads answer 503; {"down": true|false};
//        {"offer": "genuine" | "other_key" | "foreign_upload" | "foreign_share" | "weak_p2"} ->
//        the offers served from now on: signed by another key, signed by this deployment's key
//        but uploading (or sending one share) to http://evil.example, or signed by this
//        deployment's key with no noise columns (masking.p2 = 0, below the policy's floors);
//        {"spoil": {"survey": ID, "cohort": K}} -> cohort K is spoilt (someone sent invalid
//        data): its fate says so, and new places of ID go to cohort K + 1;
//        {"regroup": {"survey": ID, "cohort": K}} -> cohort K is regrouped (closed with too few
//        records to be masked while the survey takes participants, issue 43 §3): its fate says
//        so, and new places of ID go to cohort K + 1;
//        {"fate_busy": N} -> the next N fate requests answer 429 with Retry-After: 1;
//        {"place_busy": N} -> the next N place requests answer 503 with Retry-After: 1;
//        {"upload_busy": N} -> the next N uploads answer as a service at its connection limit
//        does: 503 with Retry-After: 1 and Connection: close, nothing stored;
//        {"builds": [DIGEST, …]} -> the deployment publishes these accepted builds instead
//   GET  /__mock/uploads -> every upload request received (bodies as parsed JSON)
//   GET  /__mock/offers -> every place request received ({method, survey, invite, cohort})
//   GET  /__mock/fates -> every fate request received ({method, survey, cohort, status, nonce,
//        holder}: `nonce` as sent or null, `holder` whether it is one this deployment issued
//        for that cohort)
//   GET  /__mock/receipts -> how many uploads the services stored (one per token and service)
import { createServer } from 'node:http';
import { createHash, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json', '.csv': 'text/csv',
  '.webmanifest': 'application/manifest+json', '.svg': 'image/svg+xml',
};

/** Upload::hash() of crates/formats/src/survey.rs: SHA-256 over a canonical little-endian encoding. */
export function uploadHash(u) {
  const h = createHash('sha256');
  const u64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); h.update(b); };
  const survey = Buffer.from(u.survey, 'utf8');
  u64(survey.length); h.update(survey);
  const c = Buffer.alloc(4); c.writeUInt32LE(u.cohort); h.update(c);
  const token = Buffer.from(u.token, 'utf8');
  u64(token.length); h.update(token);
  u64(u.values.length);
  for (const v of u.values) { const b = Buffer.alloc(8); b.writeDoubleLE(v); h.update(b); }
  return h.digest('hex');
}

const DEFINITION_CONTEXT = Buffer.from('orthomask/signed-definition/v1\0', 'utf8');
const CREDENTIAL_CONTEXT = Buffer.from('orthomask/upload-credential/v1\0', 'utf8');
export const EVIL = 'http://evil.example';

/** A collector's Ed25519 key pair: sign(bytes) as 128 hex digits, the public key as 64. */
export function collectorKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicHex: Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url').toString('hex'),
    sign: (context, bytes) => sign(null, Buffer.concat([context, bytes]), privateKey).toString('hex'),
    verify: (context, bytes, hex) => /^[0-9a-f]{128}$/.test(hex) && verify(null, Buffer.concat([context, bytes]), publicKey, Buffer.from(hex, 'hex')),
  };
}

/** The canonical bytes of a credential (crates/survey/src/trust.rs, UploadCredential). */
function credentialBytes({ survey, cohort, nonce, expires_at: expires, key_digest: digest }) {
  const u64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
  const s = Buffer.from(survey, 'utf8'); const n = Buffer.from(nonce, 'utf8');
  const c = Buffer.alloc(4); c.writeUInt32LE(cohort);
  const parts = [u64(s.length), s, c, u64(n.length), n, u64(expires)];
  // The device key's digest, appended length-prefixed when the credential names one (issue 43).
  if (digest !== undefined) { const d = Buffer.from(digest, 'utf8'); parts.push(u64(d.length), d); }
  return Buffer.concat(parts);
}

/**
 * A credential for one upload; `rightMaskKey` (a basic-protocol definition's device key, 64 hex
 * digits) makes it name the key's digest — SHA-256 of its hex text — as the collector's do.
 */
export function issueCredential(key, survey, cohort, expiresAt, rightMaskKey) {
  const c = { survey, cohort, nonce: randomBytes(16).toString('hex'), expires_at: expiresAt };
  if (rightMaskKey) c.key_digest = createHash('sha256').update(rightMaskKey, 'utf8').digest('hex');
  return { ...c, signature: key.sign(CREDENTIAL_CONTEXT, credentialBytes(c)) };
}

/** Why a credential does not admit an upload to survey/cohort, or null. */
function credentialProblem(key, c, survey, cohort) {
  if (typeof c !== 'object' || c === null) return 'this upload carries no upload credential';
  const keys = Object.keys(c).sort().join(',');
  if (keys !== 'cohort,expires_at,nonce,signature,survey' && keys !== 'cohort,expires_at,key_digest,nonce,signature,survey') return `credential fields: ${keys}`;
  if (!/^[0-9a-f]{32}$/.test(c.nonce)) return 'credential nonce malformed';
  if (!key.verify(CREDENTIAL_CONTEXT, credentialBytes(c), c.signature)) return 'the upload credential is not signed by this survey\'s collector';
  if (c.survey !== survey || c.cohort !== cohort) return 'the upload credential is for another survey or cohort';
  if (Date.now() / 1000 >= c.expires_at) return 'the upload credential expired';
  return null;
}

function validUpload(u) {
  if (typeof u !== 'object' || u === null) return 'body is not an upload';
  if (typeof u.survey !== 'string' || !Number.isInteger(u.cohort)) return 'survey or cohort missing';
  if (typeof u.token !== 'string' || !/^[A-Za-z0-9_-]{16,128}$/.test(u.token)) return 'bad idempotency token';
  if (!Array.isArray(u.values) || u.values.some((v) => typeof v !== 'number' || !Number.isFinite(v))) return 'values must be finite numbers';
  if ('definition' in u && !/^[0-9a-f]{64}$/.test(u.definition)) return 'definition must be 64 hex digits';
  const keys = Object.keys(u).filter((k) => !['credential', 'definition', 'build'].includes(k)).sort().join(',');
  if (keys !== 'cohort,survey,token,values') return `unexpected fields: ${keys}`;
  return null;
}

/**
 * The offer for bundled survey `id` in `cohort`, pointed at `base` (or, forged, elsewhere). As a
 * collector's, its device key is the cohort's own (made from this run's `secret`), never the
 * bundled file's published teaching key.
 */
async function offer(dist, base, id, cohort, key, forger, mode, secret) {
  const def = JSON.parse(await readFile(join(dist, 'surveys', `${id}.json`), 'utf8'));
  def.masking.cohort = cohort;
  if (def.masking.right_mask_key) def.masking.right_mask_key = createHash('sha256').update(`${secret}/${id}/${cohort}`).digest('hex');
  def.upload_url = `${base}/api/surveys/${id}/uploads`;
  if (def.masking.share_mode) {
    def.masking.share_mode.providers = def.masking.share_mode.providers.map((_, i) => `${base}/right/${i}/api/surveys/${id}/uploads`);
  }
  if (mode === 'foreign_upload') def.upload_url = `${EVIL}/api/surveys/${id}/uploads`;
  if (mode === 'foreign_share') {
    if (!def.masking.share_mode) throw new Error('foreign_share needs a share-mode survey');
    def.masking.share_mode.providers[1] = `${EVIL}/right/1/api/surveys/${id}/uploads`;
  }
  if (mode === 'weak_p2') def.masking.p2 = 0;
  const text = JSON.stringify(def, null, 2);
  const signer = mode === 'other_key' ? forger : key;
  return {
    signed: { definition: text, signature: signer.sign(DEFINITION_CONTEXT, Buffer.from(text, 'utf8')) },
    credential: issueCredential(signer, id, def.masking.cohort, Math.floor(Date.now() / 1000) + 3600, def.masking.right_mask_key),
  };
}

/**
 * The build digest of the app in `dist` (issue 27), as `sha256sum` would give it: the service
 * worker and every file its APP_FILES names (`./` is index.html), one `sha256  path` line each,
 * sorted by path, hashed again. Written from the format's description, not from the app's code.
 */
export async function appBuild(dist) {
  const sw = await readFile(join(dist, 'sw.js'), 'utf8');
  const list = sw.match(/const APP_FILES = \[([^\]]*)\];/)[1];
  const names = new Set(['sw.js', ...[...list.matchAll(/'([^']+)'/g)].map(([, f]) => (f === './' ? 'index.html' : f))]);
  const lines = [];
  for (const name of names) {
    lines.push(`${createHash('sha256').update(await readFile(join(dist, name))).digest('hex')}  ${name}\n`);
  }
  lines.sort((a, b) => (a.slice(66) < b.slice(66) ? -1 : 1));
  return createHash('sha256').update(lines.join('')).digest('hex');
}

export async function startServer({ dist, fixtures }) {
  const build = await appBuild(dist).catch(() => null);
  const state = {
    failNext: 0, uploadBusy: 0, down: false, offer: 'genuine', fateBusy: 0, placeBusy: 0, uploads: [], offers: [], fates: [],
    receipts: new Map(), nonces: new Map(), fateOf: new Map(), cohortOf: new Map(),
    // "ID/K" -> the nonces of the credentials this deployment issued with places in cohort K.
    issued: new Map(),
  };
  const key = collectorKey();
  const forger = collectorKey();
  const secret = randomBytes(32).toString('hex');
  let base = '';
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const send = (status, body, type = 'application/json', headers = {}) => {
      const cache = url.pathname.startsWith('/api/') || url.pathname.startsWith('/right/') ? 'no-store' : 'no-cache';
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': cache, ...headers });
      res.end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
    };
    const readBody = () => new Promise((resolve) => { let d = ''; req.on('data', (c) => { d += c; }); req.on('end', () => resolve(d)); });
    try {
      if (url.pathname === '/__mock/mode' && req.method === 'POST') {
        const m = JSON.parse(await readBody());
        if ('fail_next' in m) state.failNext = m.fail_next;
        if ('down' in m) state.down = m.down;
        if ('offer' in m) state.offer = m.offer;
        if ('fate_busy' in m) state.fateBusy = m.fate_busy;
        if ('place_busy' in m) state.placeBusy = m.place_busy;
        if ('upload_busy' in m) state.uploadBusy = m.upload_busy;
        if ('builds' in m) state.builds = m.builds;
        for (const [word, fate] of [['spoil', 'spoilt'], ['regroup', 'regrouped']]) {
          if (!(word in m)) continue;
          const { survey, cohort } = m[word];
          state.fateOf.set(`${survey}/${cohort}`, fate);
          state.cohortOf.set(survey, Math.max(state.cohortOf.get(survey) ?? 0, cohort + 1));
        }
        return send(200, { ok: true });
      }
      if (url.pathname === '/__mock/uploads') return send(200, state.uploads);
      if (url.pathname === '/__mock/offers') return send(200, state.offers);
      if (url.pathname === '/__mock/fates') return send(200, state.fates);
      if (url.pathname === '/__mock/receipts') return send(200, state.receipts.size);
      if (url.pathname === '/api/deployment' && req.method === 'GET') {
        const builds = state.builds ?? (build ? [build] : []);
        return send(200, {
          collector_public_key: key.publicHex, collector: base, msp: base, rights: [0, 1, 2].map((i) => `${base}/right/${i}`),
          ...(build ? { build } : {}), ...(builds.length ? { builds } : {}),
        });
      }
      const definition = url.pathname.match(/^\/api\/surveys\/([a-z0-9_-]+)\/definition$/);
      if (definition) {
        const id = definition[1];
        if (req.method !== 'POST') {
          state.offers.push({ method: req.method, survey: id });
          return send(405, { error: 'take a place with POST and a JSON body' }, 'application/json', { Allow: 'POST' });
        }
        if (!/^application\/json(;|$)/.test(req.headers['content-type'] ?? '')) return send(415, { error: 'the body must be application/json' });
        let body;
        try { body = JSON.parse(await readBody()); } catch { return send(400, { error: 'the body is not JSON' }); }
        const fields = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : null;
        if (!fields || fields.some((f) => f !== 'invite') || ('invite' in body && typeof body.invite !== 'string')) {
          return send(400, { error: 'the body is {"invite": "…"} or {}' });
        }
        const bundled = await stat(join(dist, 'surveys', `${id}.json`)).catch(() => null);
        const cohort = state.cohortOf.get(id) ?? 0;
        if (state.placeBusy > 0) {
          state.placeBusy -= 1;
          state.offers.push({ method: 'POST', survey: id, invite: body.invite ?? null, busy: 503 });
          return send(503, { error: 'busy: try again shortly' }, 'application/json', { 'Retry-After': '1' });
        }
        state.offers.push({ method: 'POST', survey: id, invite: body.invite ?? null, cohort });
        if (!bundled) return send(404, { error: `no survey ${id} at this collector` });
        const offered = await offer(dist, base, id, cohort, key, forger, state.offer, secret);
        // A credential signed by another key was not issued by this deployment.
        if (state.offer !== 'other_key') {
          const place = `${id}/${cohort}`;
          if (!state.issued.has(place)) state.issued.set(place, new Set());
          state.issued.get(place).add(offered.credential.nonce);
        }
        return send(200, offered);
      }
      const fate = url.pathname.match(/^\/api\/surveys\/([a-z0-9_-]+)\/cohorts\/([0-9]+)\/fate$/);
      if (fate) {
        const [id, cohort] = [fate[1], Number(fate[2])];
        const asked = { method: req.method, survey: id, cohort };
        if (req.method !== 'POST') {
          state.fates.push({ ...asked, status: 405, nonce: null, holder: false });
          return send(405, { error: 'ask a cohort\'s fate with POST and a JSON body' }, 'application/json', { Allow: 'POST' });
        }
        if (!/^application\/json(;|$)/.test(req.headers['content-type'] ?? '')) return send(415, { error: 'the body must be application/json' });
        let body;
        try { body = JSON.parse(await readBody()); } catch { return send(400, { error: 'the body is not JSON' }); }
        const fields = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : null;
        if (!fields || fields.some((f) => f !== 'nonce') || ('nonce' in body && typeof body.nonce !== 'string')) {
          return send(400, { error: 'the body is {"nonce": "…"} or {}' });
        }
        const nonce = body.nonce ?? null;
        const holder = nonce !== null && (state.issued.get(`${id}/${cohort}`)?.has(nonce) ?? false);
        if (state.fateBusy > 0) {
          state.fateBusy -= 1;
          state.fates.push({ ...asked, status: 429, nonce, holder });
          return send(429, { error: 'too many requests' }, 'application/json', { 'Retry-After': '1' });
        }
        // An unknown survey or cohort, a wrong nonce or none: one answer, as the collector's.
        const bundled = await stat(join(dist, 'surveys', `${id}.json`)).catch(() => null);
        if (!bundled || !holder) {
          state.fates.push({ ...asked, status: 404, nonce, holder });
          return send(404, { error: `no cohort ${cohort} of survey ${JSON.stringify(id)} is known to this device's credential` });
        }
        state.fates.push({ ...asked, status: 200, nonce, holder });
        const said = state.fateOf.get(`${id}/${cohort}`) ?? 'open';
        return send(200, { survey: id, cohort, fate: said, answer_again: said !== 'open' });
      }
      // Provider: /api/surveys/:id/uploads; right-masking service i: /right/:i/api/surveys/:id/uploads.
      const api = url.pathname.match(/^(?:\/(right\/[0-9]+))?\/api\/surveys\/([a-z0-9_-]+)\/uploads$/);
      if (api && req.method === 'POST') {
        const text = await readBody();
        let body;
        try { body = JSON.parse(text); } catch { return send(400, { error: 'body is not JSON' }); }
        const endpoint = api[1] ?? 'provider';
        if (state.uploadBusy > 0) {
          state.uploadBusy -= 1;
          state.uploads.push({ endpoint, body, busy: 503 });
          return send(503, { error: 'the service is serving as many connections as it may (1024); retry in 1 s' },
            'application/json', { 'Retry-After': '1', Connection: 'close' });
        }
        state.uploads.push({ endpoint, body });
        if (state.down) return send(503, { error: 'the service is down for maintenance' });
        if (state.failNext > 0) { state.failNext -= 1; return send(503, { error: 'temporarily overloaded' }); }
        const problem = validUpload(body);
        if (problem) return send(422, { error: problem });
        if (body.survey !== api[2]) return send(422, { error: `upload for survey ${body.survey} sent to survey ${api[2]}` });
        const refused = credentialProblem(key, body.credential, body.survey, body.cohort);
        if (refused) return send(401, { error: refused });
        const builds = state.builds ?? (build ? [build] : []);
        if (builds.length && !builds.includes(body.build ?? '')) return send(403, { error: `the upload was made by app build ${JSON.stringify(body.build ?? '')}, which this deployment does not accept` });
        // Each service takes a nonce once; the same token (a retry) gets the same receipt.
        const nonce = `${endpoint}/${body.credential.nonce}`;
        if (state.nonces.has(nonce) && state.nonces.get(nonce) !== body.token) return send(409, { error: 'this upload credential was used already' });
        state.nonces.set(nonce, body.token);
        const id = `${endpoint}/${body.token}`;
        if (!state.receipts.has(id)) {
          state.receipts.set(id, { survey: body.survey, cohort: body.cohort, upload_hash: uploadHash(body), received_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
        }
        return send(201, state.receipts.get(id));
      }
      // Static files: /fixtures/* from the fixtures directory, everything else from dist/.
      const [root, rel] = url.pathname.startsWith('/fixtures/') ? [fixtures, url.pathname.slice('/fixtures/'.length)] : [dist, url.pathname.slice(1) || 'index.html'];
      const path = normalize(join(root, decodeURIComponent(rel)));
      if (!path.startsWith(normalize(root))) return send(403, { error: 'forbidden' });
      const info = await stat(path).catch(() => null);
      if (!info || !info.isFile()) return send(404, { error: `not found: ${url.pathname}` });
      return send(200, await readFile(path), TYPES[extname(path)] ?? 'application/octet-stream');
    } catch (e) {
      return send(500, { error: String(e) });
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  return {
    base, state, build,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
