// `npm run manifests`: rewrites the generated install files from their one source.
//   manifests/kustomize/base/*            from src/install/manifests.ts
//   manifests/kustomize/components/*     from src/install/manifests.ts (audit), policy-report-crd.ts and cert-manager.ts
//   manifests/helm/deed/files/policyreport-crd.yaml from src/install/policy-report-crd.ts
//   manifests/helm/deed/templates/_kinds.tpl from src/policy/kinds.ts (src/install/kind-rules.ts)
//   manifests/helm/deed/templates/_tenant.tpl from src/install/tenant-role.ts
//   manifests/helm/deed/values.schema.json's `policy` property from src/config/schema.ts
//   manifests/helm/deed/README.md from Chart.yaml and values.yaml (src/install/helm-readme.ts)
//   the chart's PrometheusRule template and dashboard JSON from src/install/observability.ts
//   (and components/monitoring through kustomize.ts)
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_IMAGE } from '../src/cli/manifests.js';
import { HELM_README_FILE, helmReadme } from '../src/install/helm-readme.js';
import { HELM_SCHEMA_FILE, withPolicySchema } from '../src/install/helm-schema.js';
import { HELM_DASHBOARD_FILE, HELM_PROMETHEUS_RULE_TEMPLATE, helmDashboardJson, helmPrometheusRuleTemplate } from '../src/install/monitoring.js';
import { kustomizeBase, kustomizeComponents, KUSTOMIZE_BASE_DIR, KUSTOMIZE_COMPONENTS_DIR } from '../src/install/kustomize.js';
import { HELM_CRD_FILE, helmCrdFileText } from '../src/install/policy-report-crd.js';
import { HELM_KINDS_TEMPLATE, helmKindsTemplate } from '../src/install/kind-rules.js';
import { HELM_TENANT_TEMPLATE, helmTenantTemplate } from '../src/install/tenant-role.js';

const root = join(import.meta.dirname, '..');

const baseDir = join(root, KUSTOMIZE_BASE_DIR);
mkdirSync(baseDir, { recursive: true });
for (const old of readdirSync(baseDir)) if (old.endsWith('.yaml')) rmSync(join(baseDir, old));
for (const [file, text] of kustomizeBase(DEFAULT_IMAGE)) writeFileSync(join(baseDir, file), text);
console.log(`wrote ${KUSTOMIZE_BASE_DIR}/`);

for (const [name, files] of kustomizeComponents(DEFAULT_IMAGE)) {
  const dir = join(root, KUSTOMIZE_COMPONENTS_DIR, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of files) writeFileSync(join(dir, file), text);
}
console.log(`wrote ${KUSTOMIZE_COMPONENTS_DIR}/`);

mkdirSync(join(root, HELM_CRD_FILE, '..'), { recursive: true });
writeFileSync(join(root, HELM_CRD_FILE), helmCrdFileText());
console.log(`wrote ${HELM_CRD_FILE}`);

writeFileSync(join(root, HELM_KINDS_TEMPLATE), helmKindsTemplate());
console.log(`wrote ${HELM_KINDS_TEMPLATE}`);

writeFileSync(join(root, HELM_TENANT_TEMPLATE), helmTenantTemplate());
console.log(`wrote ${HELM_TENANT_TEMPLATE}`);

writeFileSync(join(root, HELM_SCHEMA_FILE), withPolicySchema(readFileSync(join(root, HELM_SCHEMA_FILE), 'utf8')));
console.log(`wrote ${HELM_SCHEMA_FILE}`);

mkdirSync(join(root, HELM_DASHBOARD_FILE, '..'), { recursive: true });
writeFileSync(join(root, HELM_DASHBOARD_FILE), helmDashboardJson());
writeFileSync(join(root, HELM_PROMETHEUS_RULE_TEMPLATE), helmPrometheusRuleTemplate());
console.log(`wrote ${HELM_DASHBOARD_FILE}, ${HELM_PROMETHEUS_RULE_TEMPLATE}`);

const chartDir = join(HELM_README_FILE, '..');
writeFileSync(join(root, HELM_README_FILE), helmReadme(readFileSync(join(root, chartDir, 'Chart.yaml'), 'utf8'), readFileSync(join(root, chartDir, 'values.yaml'), 'utf8'), readFileSync(join(root, HELM_SCHEMA_FILE), 'utf8')));
console.log(`wrote ${HELM_README_FILE}`);
