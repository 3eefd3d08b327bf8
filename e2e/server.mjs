// A static server for dist/ and fixtures, plus a mock of the masking service provider's upload
// API (the real services replace it later). Loopback only; the tests start and stop it.
//
// API mocked (the contract of src/services/http.rs):
//   POST /api/surveys/:id/uploads, POST /api/right/:i/uploads
//     body Upload {survey, cohort, token, values} -> 201 Receipt {survey, cohort, upload_hash, received_at}
//     a retry with the same token returns the same receipt; errors are {"error": "one line"}.
// Test controls:
//   POST /__mock/mode {"fail_next": N} -> the next N uploads answer 503; {"down": true|false}
//   GET  /__mock/uploads -> every upload request received (bodies as parsed JSON)
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json', '.csv': 'text/csv',
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

function validUpload(u) {
  if (typeof u !== 'object' || u === null) return 'body is not an upload';
  if (typeof u.survey !== 'string' || !Number.isInteger(u.cohort)) return 'survey or cohort missing';
  if (typeof u.token !== 'string' || !/^[A-Za-z0-9_-]{16,128}$/.test(u.token)) return 'bad idempotency token';
  if (!Array.isArray(u.values) || u.values.some((v) => typeof v !== 'number' || !Number.isFinite(v))) return 'values must be finite numbers';
  const keys = Object.keys(u).sort().join(',');
  if (keys !== 'cohort,survey,token,values') return `unexpected fields: ${keys}`;
  return null;
}

export async function startServer({ dist, fixtures }) {
  const state = { failNext: 0, down: false, uploads: [], receipts: new Map(), requests: 0 };
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const send = (status, body, type = 'application/json') => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
    };
    const readBody = () => new Promise((resolve) => { let d = ''; req.on('data', (c) => { d += c; }); req.on('end', () => resolve(d)); });
    try {
      if (url.pathname === '/__mock/mode' && req.method === 'POST') {
        const m = JSON.parse(await readBody());
        if ('fail_next' in m) state.failNext = m.fail_next;
        if ('down' in m) state.down = m.down;
        return send(200, { ok: true });
      }
      if (url.pathname === '/__mock/uploads') return send(200, state.uploads);
      const api = url.pathname.match(/^\/api\/(surveys\/[a-z0-9_-]+|right\/[0-9]+)\/uploads$/);
      if (api && req.method === 'POST') {
        const text = await readBody();
        let body;
        try { body = JSON.parse(text); } catch { return send(400, { error: 'body is not JSON' }); }
        state.uploads.push({ endpoint: api[1], body });
        if (state.down) return send(503, { error: 'the service is down for maintenance' });
        if (state.failNext > 0) { state.failNext -= 1; return send(503, { error: 'temporarily overloaded' }); }
        const problem = validUpload(body);
        if (problem) return send(422, { error: problem });
        const key = `${api[1]}/${body.token}`;
        if (!state.receipts.has(key)) {
          state.receipts.set(key, { survey: body.survey, cohort: body.cohort, upload_hash: uploadHash(body), received_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
        }
        return send(201, state.receipts.get(key));
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
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base, state,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
