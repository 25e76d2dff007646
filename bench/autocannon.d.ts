// The part of autocannon's API the bench and fault scripts use (it ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';
  import type { ConnectionOptions } from 'node:tls';

  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p99: number;
    max: number;
    total: number;
  }
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    pipelining?: number;
    duration?: number;
    amount?: number;
    overallRate?: number;
    timeout?: number;
    servername?: string;
    tlsOptions?: ConnectionOptions;
    verifyBody?: (body: string) => boolean;
    bailout?: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }
  interface Instance extends EventEmitter {
    stop(): void;
  }
  function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
  export type { Options, Result, Instance };
}
