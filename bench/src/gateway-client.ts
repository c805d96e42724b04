import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';

export interface Answer {
  status: number;
  text: string;
  wireBytes: number;
  decodedBytes: number;
  ms: number;
}

/** Requests to the gateway as an app sends them (a scanner, a shop): keep-alive, gzip accepted, body bytes counted as they come. */
export class GatewayClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  request(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = { authorization: `Bearer ${this.token}`, 'accept-encoding': 'gzip', ...extraHeaders };
    if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.baseUrl}${path}`, { method, agent: this.agent, headers, timeout: 60_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const wire = Buffer.concat(chunks);
          const decoded = res.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire;
          const ms = performance.now() - started;
          resolve({ status: res.statusCode ?? 0, text: decoded.toString('utf8'), wireBytes: wire.length, decodedBytes: decoded.length, ms });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 60 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  async expect(status: number, method: string, path: string, body?: unknown): Promise<Answer> {
    const answer = await this.request(method, path, body);
    if (answer.status !== status) throw new Error(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 500)}`);
    return answer;
  }

  close(): void {
    this.agent.destroy();
  }
}
