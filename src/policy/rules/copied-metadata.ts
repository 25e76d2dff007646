// stamp.template, on the metadata a controller copies: a ResourceClaimTemplate's
// `spec.metadata` becomes the metadata of each ResourceClaim the resourceclaim controller
// makes from it (kube-system: Deed never reviews that create). Deed's stamps written there,
// copied from another environment's claim, would make the new claim verify as that
// environment's, and no later door could tell it apart. So a kind whose row names
// `metadataTemplates` (kinds.ts) may carry none of Deed's stamps there, from anyone.
import type { AdmissionRequest } from '../../admission/types.js';
import type { Finding } from '../../admission/verdict.js';
import { kindRow } from '../kinds.js';
import { foreignTemplateStamps, templateTerminalMark } from '../pod/claim-templates.js';
import type { Policy } from '../policy.js';
import { field, isRec } from '../unstructured.js';

export function copiedMetadataStamps(req: AdmissionRequest, policy: Policy): Finding[] {
  const paths = kindRow(req.resource)?.metadataTemplates;
  const obj = req.object;
  if (paths === undefined || !obj || req.subResource !== undefined || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return [];
  return paths.flatMap((path) => {
    const metadata = path.split('.').reduce<unknown>((node, key) => (isRec(node) ? field(node, key) : undefined), obj);
    // The template is what holds the metadata (`spec` for `spec.metadata`): findings name `spec.metadata.labels[...]`.
    const at = path.replace(/\.?metadata$/, '');
    const template = isRec(metadata) ? metadata : undefined;
    return [...foreignTemplateStamps(template, at, policy.keys, `its controller copies ${path} onto the objects it makes, unreviewed, where the copy would verify as whoever's stamps these are`), ...templateTerminalMark(template, at, policy.keys)];
  });
}
