// What a write does to its object and which object it names, in the words a refusal uses:
// shared by the rules that judge a kind's writes whatever their door (namespace-wide.ts,
// mapped-account.ts).
import type { AdmissionRequest } from '../../admission/types.js';

const VERBS: Readonly<Record<string, string>> = { CREATE: 'create', UPDATE: 'change', DELETE: 'delete' };

/** The verb of a write ("create", "change", "delete"); undefined for anything else (a CONNECT). */
export function writeVerb(req: AdmissionRequest): string | undefined {
  return VERBS[req.operation];
}

/** The name the write's object has: the request's, else the object's (a DELETE carries only the old one); undefined before the API server gives a generateName'd object one. */
export function writtenName(req: AdmissionRequest): string | undefined {
  if (req.name !== undefined && req.name !== '') return req.name;
  const name = (req.object ?? req.oldObject)?.metadata.name;
  return name === '' ? undefined : name;
}
