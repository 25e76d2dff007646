// Counts the calls a review makes into src/policy, without changing the code it counts:
// V8's precise coverage (call counts, block granularity) through the inspector.
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';

export interface FunctionCalls {
  /** Path under src/policy, e.g. `doors/door.ts`. */
  file: string;
  name: string;
  count: number;
}

const POLICY = '/src/policy/';

export async function startCounting(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  return session;
}

/** The calls into src/policy functions since the last take (taking resets the counts). */
export async function takeCalls(session: Session): Promise<FunctionCalls[]> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const out: FunctionCalls[] = [];
  for (const script of result) {
    if (!script.url.startsWith('file:')) continue;
    const path = fileURLToPath(script.url);
    const at = path.lastIndexOf(POLICY);
    if (at < 0) continue;
    for (const fn of script.functions) {
      const count = fn.ranges[0]?.count ?? 0;
      if (count > 0 && fn.functionName !== '') out.push({ file: path.slice(at + POLICY.length), name: fn.functionName, count });
    }
  }
  return out;
}
