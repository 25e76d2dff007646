// `npm run manifests`: rewrites the generated install files from their one source.
//   manifests/kustomize/base/*            from src/install/manifests.ts
//   manifests/helm/deed/values.schema.json's `policy` property from src/config/schema.ts
//   manifests/kustomize/components/monitoring/*, the chart's PrometheusRule template and
//   dashboard JSON                               from src/install/observability.ts
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_IMAGE } from '../src/cli/manifests.js';
import { HELM_SCHEMA_FILE, withPolicySchema } from '../src/install/helm-schema.js';
import { kustomizeBase, KUSTOMIZE_BASE_DIR } from '../src/install/kustomize.js';
import { HELM_DASHBOARD_FILE, HELM_PROMETHEUS_RULE_TEMPLATE, helmDashboardJson, helmPrometheusRuleTemplate, kustomizeMonitoringComponent, KUSTOMIZE_MONITORING_DIR } from '../src/install/monitoring.js';

const root = join(import.meta.dirname, '..');

const baseDir = join(root, KUSTOMIZE_BASE_DIR);
mkdirSync(baseDir, { recursive: true });
for (const old of readdirSync(baseDir)) if (old.endsWith('.yaml')) rmSync(join(baseDir, old));
for (const [file, text] of kustomizeBase(DEFAULT_IMAGE)) writeFileSync(join(baseDir, file), text);
console.log(`wrote ${KUSTOMIZE_BASE_DIR}/`);

writeFileSync(join(root, HELM_SCHEMA_FILE), withPolicySchema(readFileSync(join(root, HELM_SCHEMA_FILE), 'utf8')));
console.log(`wrote ${HELM_SCHEMA_FILE}`);

const componentDir = join(root, KUSTOMIZE_MONITORING_DIR);
mkdirSync(componentDir, { recursive: true });
for (const old of readdirSync(componentDir)) if (old.endsWith('.yaml')) rmSync(join(componentDir, old));
for (const [file, text] of kustomizeMonitoringComponent()) writeFileSync(join(componentDir, file), text);
console.log(`wrote ${KUSTOMIZE_MONITORING_DIR}/`);

mkdirSync(join(root, HELM_DASHBOARD_FILE, '..'), { recursive: true });
writeFileSync(join(root, HELM_DASHBOARD_FILE), helmDashboardJson());
writeFileSync(join(root, HELM_PROMETHEUS_RULE_TEMPLATE), helmPrometheusRuleTemplate());
console.log(`wrote ${HELM_DASHBOARD_FILE}, ${HELM_PROMETHEUS_RULE_TEMPLATE}`);
