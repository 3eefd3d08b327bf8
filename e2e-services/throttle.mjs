// A throttled link for the page-load benchmark (issue 25): a TCP proxy in front of the collector
// that delivers every byte as a slow mobile network would — one link shared by all of the
// browser's connections (the page, the service worker and any worker alike, which a page's
// DevTools throttling would not reach), a bandwidth per direction shared equally by the
// connections with bytes waiting, and a one-way delay — and counts the bytes that cross it each
// way. It measures; it never decides anything.
import { createServer, connect } from 'node:net';
import { performance } from 'node:perf_hooks';

/** Chrome DevTools' "Fast 3G" as the issue states it: 1.6 Mbit/s down, 150 ms round trip. */
export const FAST_3G = { downBitsPerSecond: 1.6e6, upBitsPerSecond: 0.75e6, rttMs: 150 };

/**
 * One direction of the link. Its bandwidth is shared equally by the connections that have bytes
 * waiting (as TCP flows share a bottleneck, and as DevTools' throttling shares its throughput among
 * requests), each connection's bytes leave in order, and every byte then takes the one-way delay.
 */
class Direction {
  constructor(bitsPerSecond, delayMs) {
    this.bytesPerMs = bitsPerSecond / 8 / 1000;
    this.delayMs = delayMs;
    this.bytes = 0;
    this.queues = new Map(); // connection → [{ data, deliver }]
    this.timer = null;
    this.last = 0;
  }

  /** Queue `data` of `connection`; `deliver(part)` receives it, in order, in parts. */
  send(connection, data, deliver) {
    this.bytes += data.length;
    if (!this.queues.has(connection)) this.queues.set(connection, []);
    this.queues.get(connection).push({ data, deliver });
    if (!this.timer) {
      this.last = performance.now();
      this.timer = setInterval(() => this.tick(), 5);
    }
  }

  tick() {
    const now = performance.now();
    let budget = (now - this.last) * this.bytesPerMs;
    this.last = now;
    // Round robin in small parts: each waiting connection gets an equal share.
    while (budget > 0 && this.queues.size > 0) {
      const share = Math.max(1, Math.floor(budget / this.queues.size));
      for (const [connection, queue] of this.queues) {
        const head = queue[0];
        const part = head.data.subarray(0, Math.min(share, head.data.length));
        head.data = head.data.subarray(part.length);
        budget -= Math.max(part.length, 1);
        const { deliver } = head;
        const whole = head.data.length === 0;
        if (whole) queue.shift();
        if (queue.length === 0) this.queues.delete(connection);
        setTimeout(() => deliver(part, whole), this.delayMs);
        if (budget <= 0) break;
      }
    }
    if (this.queues.size === 0) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}

/**
 * Listen on a free loopback port and forward to `target` (host:port) through a link of
 * `profile`. Answers `{ url, counts(), reset(), close() }`; counts are `{ down, up, connections }`.
 */
export async function throttledProxy(target, profile = FAST_3G) {
  const [host, port] = target.split(':');
  const down = new Direction(profile.downBitsPerSecond, profile.rttMs / 2);
  const up = new Direction(profile.upBitsPerSecond, profile.rttMs / 2);
  let connections = 0;
  const sockets = new Set();
  const server = createServer((client) => {
    connections += 1;
    client.pause();
    const upstream = connect(Number(port), host);
    sockets.add(client).add(upstream);
    // The handshake costs a round trip before the first byte can go.
    setTimeout(() => client.resume(), profile.rttMs);
    client.on('data', (d) => up.send(client, d, (part) => upstream.writable && upstream.write(part)));
    upstream.on('data', (d) => down.send(client, d, (part) => client.writable && client.write(part)));
    // A close goes through the link after the bytes before it.
    client.on('end', () => up.send(client, Buffer.alloc(0), (part, whole) => whole && upstream.end()));
    upstream.on('end', () => down.send(client, Buffer.alloc(0), (part, whole) => whole && client.end()));
    for (const s of [client, upstream]) {
      s.on('error', () => { client.destroy(); upstream.destroy(); });
      s.on('close', () => sockets.delete(s));
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    counts: () => ({ down: down.bytes, up: up.bytes, connections }),
    reset() { down.bytes = 0; up.bytes = 0; connections = 0; },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
