// stamp.template, on the metadata a controller copies: a ResourceClaimTemplate's
// `spec.metadata` becomes the metadata of each ResourceClaim the resourceclaim controller
// makes from it (kube-system: Deed never reviews that create), a Certificate's
// `spec.secretTemplate` and an ExternalSecret's `spec.target.template.metadata` those of the
// Secret their operators write (on every update too, which Deed does not judge). Deed's stamps written there,
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
    // A path that is the metadata itself under another name (cert-manager's `spec.secretTemplate`) is named as it is.
    const named = /(^|\.)metadata$/.test(path);
    const at = named ? path.replace(/\.?metadata$/, '') : path;
    const template = isRec(metadata) ? metadata : undefined;
    const findings = [...foreignTemplateStamps(template, at, policy.keys, `its controller copies ${path} onto the objects it makes, where the copy would verify as whoever's stamps these are`), ...templateTerminalMark(template, at, policy.keys)];
    return named ? findings : findings.map((f) => (f.path?.startsWith(`${path}.metadata.`) ? { ...f, path: `${path}.${f.path.slice(path.length + '.metadata.'.length)}` } : f));
  });
}
