import { request, type Agent, type IncomingMessage } from 'node:http';

export interface HalfSentPost {
  /** Sends the rest of the body. */
  finish(): void;
  /** The answer's status and body, once it has all arrived. */
  answer: Promise<{ status: number; body: string }>;
  /** Resolves once the headers and the first half of the body are handed to the connection. */
  sent: Promise<void>;
}

/**
 * A JSON POST sent with only the first half of its body, so that it is provably in flight (headers
 * read, body awaited) until `finish()`: what a shutdown that must drain requests is tested with.
 */
export function halfSentPost(url: string, headers: Record<string, string>, body: string, agent: Agent): HalfSentPost {
  const bytes = Buffer.from(body);
  const half = Math.floor(bytes.length / 2);
  const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(bytes.length) } });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('response', (res: IncomingMessage) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.once('end', () => resolve({ status: res.statusCode!, body: text }));
      res.once('error', reject);
    });
    req.once('error', reject);
  });
  answer.catch(() => undefined);
  const sent = new Promise<void>((resolve, reject) => {
    req.once('error', reject);
    req.write(bytes.subarray(0, half), () => resolve());
  });
  sent.catch(() => undefined);
  return { finish: () => req.end(bytes.subarray(half)), answer, sent };
}
