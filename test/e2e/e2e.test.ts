// The end-to-end suite: Deed in a real kube-apiserver. One control plane for the whole
// suite, started here; each file under cases/ registers its tests against it. Without
// KUBEBUILDER_ASSETS the suite is skipped with one line that says how to fill it.
import { after, before, describe } from 'node:test';
import { assets } from './control-plane.js';
import { startSuite, type Suite } from './suite.js';
import { admissionCases } from './cases/admission.js';
import { policyCases } from './cases/policy.js';
import { clusterCases } from './cases/cluster.js';
import { reaperCases, reaperScaleCases } from './cases/reaper.js';
import { runEndCases } from './cases/run-end.js';
import { installCases } from './cases/install.js';
import { credentialCases } from './cases/credentials.js';
import { doorCases } from './cases/doors.js';
import { rotationCases } from './cases/rotation.js';
import { connectionCases } from './cases/connections.js';
import { reviewScopeCases } from './cases/review-scope.js';
import { controllerCases } from './cases/controllers.js';
import { cronJobStatusCases } from './cases/cronjob-status.js';
import { workloadCases } from './cases/workloads.js';
import { controllerMadeCases } from './cases/controller-made.js';
import { defaultRowCases } from './cases/default-row.js';
import { stampedKindsCases } from './cases/stamped-kinds.js';
import { scopeCases } from './cases/scope.js';
import { auditCases } from './cases/audit.js';
import { referenceCases } from './cases/references.js';
import { hostNetworkCases } from './cases/host-network.js';
import { podEvasionCases } from './cases/pod-evasions.js';
import { adoptionCases } from './cases/adoption.js';
import { fromClusterCases } from './cases/from-cluster.js';
import { connectCases } from './cases/connect.js';
import { scopeSwitchCases } from './cases/scope-switch.js';
import { selectorCases } from './cases/selectors.js';
import { affinityCases } from './cases/affinity.js';
import { configMapCases } from './cases/configmaps.js';
import { devCases } from './cases/dev.js';
import { throttlingCases } from './cases/throttling.js';
import { lookupCacheCases } from './cases/lookup-cache.js';
import { oneCallCases } from './cases/one-call.js';
import { pointerCases } from './cases/pointers.js';
import { claimTemplateCases } from './cases/claim-templates.js';
import { blockingOwnerCases } from './cases/blocking-owners.js';
import { namespaceWideCases } from './cases/namespace-wide.js';
import { realWorkloadCases } from './cases/real-workloads.js';
import { coverageCases } from './cases/coverage.js';
import { runnerOwnerCases } from './cases/runner-owners.js';
import { scaleTargetCases } from './cases/scale-targets.js';
import { statusReferenceCases } from './cases/status-references.js';
import { largeMetadataCases } from './cases/large-metadata.js';
import { keptReferrerCases } from './cases/kept-referrers.js';
import { gatewayParentCases } from './cases/gateway-parents.js';

const found = assets();
const skip =
  'missing' in found
    ? `${found.missing}: export KUBEBUILDER_ASSETS=$(../shared/envtest/install.sh), or a folder from setup-envtest (see test/e2e/README.md)`
    : false;

describe('Deed in a real API server', { skip }, () => {
  let suite: Suite | undefined;
  const get = (): Suite => {
    if (!suite) throw new Error('the control plane did not start');
    return suite;
  };
  before(async () => {
    if ('missing' in found) return;
    suite = await startSuite(found.bin, found.controllers);
  });
  after(async () => {
    await suite?.stop();
  });
  const tools = 'missing' in found ? { controllers: false, helm: false } : found;
  admissionCases(get);
  policyCases(get);
  credentialCases(get);
  doorCases(get);
  reaperCases(get);
  reaperScaleCases(get);
  largeMetadataCases(get);
  runEndCases(get);
  installCases(get, tools);
  clusterCases(get, tools);
  rotationCases(get);
  connectionCases(get);
  reviewScopeCases(get);
  controllerCases(get, tools);
  workloadCases(get, tools);
  controllerMadeCases(get, tools);
  selectorCases(get, tools);
  affinityCases(get);
  defaultRowCases(get);
  stampedKindsCases(get);
  scopeCases(get);
  auditCases(get, tools);
  referenceCases(get);
  hostNetworkCases(get);
  podEvasionCases(get);
  adoptionCases(get, tools);
  fromClusterCases(get, tools);
  connectCases(get);
  scopeSwitchCases(get);
  configMapCases(get);
  throttlingCases(get);
  lookupCacheCases(get, tools);
  oneCallCases(get);
  pointerCases(get);
  claimTemplateCases(get, tools);
  blockingOwnerCases(get, tools);
  namespaceWideCases(get, tools);
  realWorkloadCases(get, tools);
  runnerOwnerCases(get);
  scaleTargetCases(get);
  keptReferrerCases(get);
  gatewayParentCases(get);
  statusReferenceCases(get, tools);
  cronJobStatusCases(get, tools);
  // After every case that installs a CRD: their kinds must classify too.
  coverageCases(get);
  // Last: the suite's own webhooks are away while it runs.
  devCases(get);
});
