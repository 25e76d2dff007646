// configmap.well-known: the ConfigMaps every pod may name whoever's they are
// (`template.wellKnownConfigMaps`, configmap-references.ts) are exempt from the reference
// rules because a system controller keeps them. Where none keeps one (OpenShift's service CA
// on another distribution), an environment that created it under that name would hand every
// other environment's pod that names it its own CA bundle or settings, unjudged: so no
// environment creates one. The system controllers, the platform and principals of no
// environment are not stamped and never reach this check.
import type { KubeObject } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { isWellKnownConfigMap } from '../pod/configmap-references.js';
import type { Policy } from '../policy.js';
import { RULES } from './catalog.js';

/** A ConfigMap an environment creates (or, for `deed audit`, holds) under a well-known name. */
export function wellKnownConfigMap(obj: KubeObject, environment: string, policy: Policy): Finding[] {
  const name = obj.metadata.name;
  if (name === undefined || !isWellKnownConfigMap(name, policy)) return [];
  return [
    {
      rule: RULES.configMapWellKnown.id,
      path: 'metadata.name',
      message: `ConfigMap ${name} is one every pod may name unjudged (template.wellKnownConfigMaps), kept by a system controller; environment "${environment}" may not create one: choose another name, or remove it from template.wellKnownConfigMaps where no controller keeps it`,
    },
  ];
}
