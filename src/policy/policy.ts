// A policy compiled once from the validated configuration: lookup tables instead of
// scans on the hot path, and the stamp vocabulary for the configured prefix.
import type { Config } from '../config/schema.js';
import type { KeyRing } from './key-ring.js';
import { stampKeys, type StampKeys } from './keys.js';

export interface Policy {
  config: Config;
  keys: StampKeys;
  envByServiceAccount: Map<string, string>;
  envByNamespaceWildcard: Map<string, string>;
  envsByGroup: Map<string, string[]>;
  breakGlassUsers: Set<string>;
  breakGlassGroups: Set<string>;
  systemUsers: Set<string>;
  systemGroups: Set<string>;
}

export function compilePolicy(config: Config): Policy {
  const envByServiceAccount = new Map<string, string>();
  const envByNamespaceWildcard = new Map<string, string>();
  const envsByGroup = new Map<string, string[]>();
  for (const env of config.environments) {
    for (const sa of env.serviceAccounts) {
      const [ns, name] = sa.split(':') as [string, string];
      if (name === '*') envByNamespaceWildcard.set(ns, env.id);
      else envByServiceAccount.set(sa, env.id);
    }
    for (const group of env.groups) envsByGroup.set(group, [...(envsByGroup.get(group) ?? []), env.id]);
  }
  return {
    config,
    keys: stampKeys(config.labelPrefix),
    envByServiceAccount,
    envByNamespaceWildcard,
    envsByGroup,
    breakGlassUsers: new Set(config.breakGlass.users),
    breakGlassGroups: new Set(config.breakGlass.groups),
    systemUsers: new Set(config.systemPrincipals.users),
    systemGroups: new Set(config.systemPrincipals.groups),
  };
}

/** Everything a decision may depend on besides the request: no I/O behind any of it. */
export interface DecisionContext {
  policy: Policy;
  /** The attestation keys: one signs, all verify. */
  keyRing: KeyRing;
  /** Milliseconds since the epoch. */
  now: () => number;
  randomBytes: (size: number) => Buffer;
}
