// An object whose operator would authenticate with its own identity (rules/operator-identity.ts):
// External Secrets' providers and generators without a credential of the writer's, KEDA's
// HashiCorp Vault authentication without a service account of the namespace. Only the
// platform's principals may write one. In a real API server: test/e2e/cases/pointers.ts and
// test/e2e/cases/scale-targets.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, type Webhook } from '../src/admission/decide.js';
import type { AdmissionResponse, KubeObject, UserInfo } from '../src/admission/types.js';
import type { ConfigInput } from '../src/config/schema.js';
import { kindRows } from '../src/policy/kinds.js';
import { fixture, testContext, type Review } from './helpers.js';

const POLICY: ConfigInput = {
  environments: [
    { id: 'alpha', serviceAccounts: ['sandbox-a:runner'], namespaces: ['sandbox-a'] },
    { id: 'beta', serviceAccounts: ['sandbox-b:*'] },
  ],
  platform: { users: ['system:serviceaccount:argocd:argocd-application-controller'], groups: [] },
  breakGlass: { groups: [] },
};
const sa = (ns: string, name: string): UserInfo => ({ username: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'], extra: {} });
const ALPHA = sa('sandbox-a', 'runner');
const BETA = sa('sandbox-b', 'lab');
const TENANT = sa('tools', 'deployer'); // acts for no environment
const PLATFORM = sa('argocd', 'argocd-application-controller');

const RESOURCES = {
  SecretStore: { group: 'external-secrets.io', version: 'v1', resource: 'secretstores' },
  ECRAuthorizationToken: { group: 'generators.external-secrets.io', version: 'v1alpha1', resource: 'ecrauthorizationtokens' },
  ACRAccessToken: { group: 'generators.external-secrets.io', version: 'v1alpha1', resource: 'acraccesstokens' },
  VaultDynamicSecret: { group: 'generators.external-secrets.io', version: 'v1alpha1', resource: 'vaultdynamicsecrets' },
  TriggerAuthentication: { group: 'keda.sh', version: 'v1alpha1', resource: 'triggerauthentications' },
  AnalysisTemplate: { group: 'argoproj.io', version: 'v1alpha1', resource: 'analysistemplates' },
} as const;
type Kind = keyof typeof RESOURCES;

function answer(who: UserInfo, kind: Kind, spec: Record<string, unknown>, o: { namespace?: string; old?: Record<string, unknown>; webhook?: Webhook } = {}): AdmissionResponse {
  const resource = RESOURCES[kind];
  const namespace = o.namespace ?? 'shared';
  const obj = (s: Record<string, unknown>) => ({ apiVersion: `${resource.group}/${resource.version}`, kind, metadata: { name: 'x', namespace }, spec: s }) as KubeObject;
  const body: Review = fixture('validate-create-pod-by-runner.json');
  body.request = { ...body.request, kind: { group: resource.group, version: resource.version, kind }, resource, requestKind: undefined, requestResource: undefined, name: 'x', namespace, userInfo: who, subResource: undefined, operation: o.old ? 'UPDATE' : 'CREATE', object: obj(spec), oldObject: o.old ? obj(o.old) : null };
  const d = decide(o.webhook ?? (o.old ? 'validate' : 'admit'), body, testContext(POLICY));
  if (d.kind !== 'review') throw new Error(d.message);
  return d.response.response;
}
const refusal = (r: AdmissionResponse) => (/\[guard\.operator-identity\]/.test(r.status?.message ?? '') ? r.status!.message! : undefined);

const vaultStore = (auth: Record<string, unknown>) => ({ provider: { vault: { server: 'https://vault.beta.example', path: 'secret', auth } } });

describe("an operator authenticates with its own identity only for the platform's objects", () => {
  test("the kind table's operatorIdentity rows are External Secrets' store and credential generators and KEDA's TriggerAuthentication", () => {
    assert.deepEqual(kindRows().filter((r) => r.operatorIdentity !== undefined).map((r) => r.kind).sort(), ['ACRAccessToken', 'AnalysisRun', 'AnalysisTemplate', 'ECRAuthorizationToken', 'GCRAccessToken', 'STSSessionToken', 'SecretStore', 'TriggerAuthentication', 'VaultDynamicSecret']);
  });

  test("a store whose Vault Kubernetes auth names no account or token has External Secrets send its own token to the store's server: refused to an environment, in its bound namespace too, and to a tenant of none", () => {
    for (const [who, namespace] of [[BETA, 'shared'], [ALPHA, 'sandbox-a'], [TENANT, 'shared']] as const) {
      const message = refusal(answer(who, 'SecretStore', vaultStore({ kubernetes: { mountPath: 'kubernetes', role: 'reader' } }), { namespace }));
      assert.match(message ?? '', /spec\.provider\.vault\.auth\.kubernetes as written: the External Secrets controller would send its own service account token to the Vault server, which acts for every environment and the platform; name a service account \(serviceAccountRef\) or a token Secret \(secretRef\) of your own/, `${who.username} in ${namespace}`);
    }
    for (const auth of [{ serviceAccountRef: { name: 'reader' } }, { secretRef: { name: 'token', key: 'jwt' } }]) assert.equal(refusal(answer(BETA, 'SecretStore', vaultStore({ kubernetes: { role: 'reader', ...auth } }))), undefined);
    assert.equal(refusal(answer(BETA, 'SecretStore', vaultStore({ tokenSecretRef: { name: 'token', key: 't' } }))), undefined, 'another auth method is not this rule');
    assert.equal(refusal(answer(PLATFORM, 'SecretStore', vaultStore({ kubernetes: { role: 'reader' } }))), undefined, "the platform's may");
  });

  test("the cloud providers' ambient identities: AWS without auth, GCP without a key or account, Azure's managed identity and an unnamed workload identity, Vault's IAM and GCP methods", () => {
    const refused = (spec: Record<string, unknown>) => refusal(answer(BETA, 'SecretStore', spec));
    assert.match(refused({ provider: { aws: { service: 'SecretsManager', region: 'eu-west-1' } } }) ?? '', /spec\.provider\.aws as written: the External Secrets controller would fetch with its own AWS identity/);
    assert.match(refused({ provider: { aws: { service: 'SecretsManager', region: 'eu-west-1', role: 'arn:aws:iam::1:role/x', auth: {} } } }) ?? '', /its own AWS identity/);
    assert.equal(refused({ provider: { aws: { service: 'SecretsManager', region: 'eu-west-1', auth: { jwt: { serviceAccountRef: { name: 'reader' } } } } } }), undefined);
    assert.match(refused({ provider: { gcpsm: { projectID: 'p' } } }) ?? '', /spec\.provider\.gcpsm as written: the External Secrets controller would fetch with its own Google credentials/);
    assert.match(refused({ provider: { gcpsm: { projectID: 'p', auth: { workloadIdentityFederation: { credConfig: { name: 'cfg', key: 'c' } } } } } }) ?? '', /its own Google credentials/, 'a credential configuration may point at the controller\'s own token file');
    assert.equal(refused({ provider: { gcpsm: { projectID: 'p', auth: { workloadIdentity: { serviceAccountRef: { name: 'reader' }, clusterLocation: 'eu', clusterName: 'c' } } } } }), undefined);
    assert.match(refused({ provider: { azurekv: { vaultUrl: 'https://v.vault.azure.net', authType: 'ManagedIdentity' } } }) ?? '', /its own \(or its node's\) managed identity/);
    assert.match(refused({ provider: { azurekv: { vaultUrl: 'https://v.vault.azure.net', authType: 'WorkloadIdentity' } } }) ?? '', /its own federated token/);
    assert.equal(refused({ provider: { azurekv: { vaultUrl: 'https://v.vault.azure.net', authType: 'WorkloadIdentity', serviceAccountRef: { name: 'reader' } } } }), undefined);
    assert.equal(refused({ provider: { azurekv: { vaultUrl: 'https://v.vault.azure.net', authSecretRef: { clientId: { name: 'c', key: 'id' }, clientSecret: { name: 'c', key: 's' } } } } }), undefined, 'a service principal (the default) of its own Secret');
    assert.match(refused(vaultStore({ iam: { region: 'eu-west-1', vaultRole: 'r' } })) ?? '', /spec\.provider\.vault\.auth\.iam as written: the External Secrets controller would sign in to the Vault server with its own AWS identity/);
    assert.match(refused(vaultStore({ gcp: { role: 'r' } })) ?? '', /spec\.provider\.vault\.auth\.gcp as written/);
    assert.match(refused(vaultStore({ kubernetes: { role: 'r', serviceAccountRef: {}, secretRef: {} } })) ?? '', /spec\.provider\.vault\.auth\.kubernetes as written/, 'empty references name nothing');
    assert.equal(refused(vaultStore({ kubernetes: null, tokenSecretRef: { name: 't', key: 'k' } })), undefined, 'null is absent to the operator');
    // A kubeconfig's tokenFile or exec plugin is in the Secret's data, which Deed does not read.
    assert.match(refused({ provider: { kubernetes: { remoteNamespace: 'x', authRef: { name: 'kubeconfig', key: 'config' } } } }) ?? '', /spec\.provider\.kubernetes\.authRef as written: the External Secrets controller would use the kubeconfig in the Secret as written, whose tokenFile may name its own service account token.*use auth\.token or auth\.cert/);
    assert.equal(refused({ provider: { kubernetes: { remoteNamespace: 'x', server: { url: 'https://k.example' }, auth: { token: { bearerToken: { name: 'tok', key: 't' } } } } } }), undefined);
    // Providers whose other logins take the controller's own token or cloud identity (helper-61).
    for (const at of ['kubernetesAuthCredentials', 'azureAuthCredentials', 'awsAuthCredentials', 'gcpIdTokenAuthCredentials', 'gcpIamAuthCredentials'])
      assert.match(refused({ provider: { infisical: { hostAPI: 'https://evil.example/api', auth: { [at]: { identityId: { name: 'beta-id', key: 'id' } } } } } }) ?? '', new RegExp(`spec\\.provider\\.infisical\\.auth\\.${at} as written: the External Secrets controller would sign in to the store's Infisical server with its own`), at);
    assert.equal(refused({ provider: { infisical: { hostAPI: 'https://i.example/api', auth: { universalAuthCredentials: { clientId: { name: 'c', key: 'i' }, clientSecret: { name: 'c', key: 's' } } } } } }), undefined);
    assert.match(refused({ provider: { ibm: { serviceUrl: 'https://sm.example', auth: { containerAuth: { profile: 'p', iamEndpoint: 'https://evil.example', tokenLocation: '/var/run/secrets/kubernetes.io/serviceaccount/token' } } } } }) ?? '', /spec\.provider\.ibm\.auth\.containerAuth as written: the External Secrets controller would read a token file of its own pod/);
    assert.match(refused({ provider: { oracle: { vault: 'ocid1.vault.x', region: 'r' } } }) ?? '', /spec\.provider\.oracle as written: the External Secrets controller would fetch as its node's instance principal/);
    assert.match(refused({ provider: { oracle: { vault: 'ocid1.vault.x', region: 'r', principalType: 'InstancePrincipal', auth: { user: 'u', tenancy: 't', secretRef: { privatekey: { name: 'k', key: 'k' }, fingerprint: { name: 'k', key: 'f' } } } } } }) ?? '', /instance principal/);
    assert.match(refused({ provider: { oracle: { vault: 'ocid1.vault.x', region: 'r', principalType: 'Workload' } } }) ?? '', /its own pod's service account/);
    assert.equal(refused({ provider: { oracle: { vault: 'ocid1.vault.x', region: 'r', auth: { user: 'u', tenancy: 't', secretRef: { privatekey: { name: 'k', key: 'k' }, fingerprint: { name: 'k', key: 'f' } } } } } }), undefined, 'a user principal of its own key');
    assert.match(refused({ provider: { volcengine: { region: 'r' } } }) ?? '', /spec\.provider\.volcengine as written: the External Secrets controller would fetch with its own OIDC identity/);
  });

  test('the generators that sign in as the controller: an ECR token without auth, an ACR token of the managed identity, a Vault dynamic secret of the Kubernetes auth', () => {
    assert.match(refusal(answer(BETA, 'ECRAuthorizationToken', { region: 'eu-west-1' })) ?? '', /may not create ECRAuthorizationToken shared\/x with spec as written: the External Secrets controller would fetch with its own AWS identity/);
    assert.equal(refusal(answer(BETA, 'ECRAuthorizationToken', { region: 'eu-west-1', auth: { jwt: { serviceAccountRef: { name: 'reader' } } } })), undefined);
    assert.match(refusal(answer(BETA, 'ACRAccessToken', { registry: 'r.azurecr.io', auth: { managedIdentity: {} } })) ?? '', /spec\.auth\.managedIdentity as written/);
    assert.match(refusal(answer(BETA, 'VaultDynamicSecret', { path: '/aws/creds/r', provider: { server: 'https://vault.beta.example', auth: { kubernetes: { role: 'r' } } } })) ?? '', /spec\.provider\.auth\.kubernetes as written: the External Secrets controller would send its own service account token/);
  });

  test("a TriggerAuthentication whose Vault Kubernetes auth names no service account of the namespace has KEDA send its own token to the address", () => {
    const vault = (credential?: Record<string, unknown>, authentication = 'kubernetes') => ({ hashiCorpVault: { address: 'https://vault.beta.example', authentication, role: 'keda', mount: 'kubernetes', ...(credential !== undefined ? { credential } : {}), secrets: [] } });
    assert.match(refusal(answer(BETA, 'TriggerAuthentication', vault())) ?? '', /spec\.hashiCorpVault as written: the KEDA operator would send its own service account token .*name a service account of your namespace in credential\.serviceAccountName/);
    assert.match(refusal(answer(BETA, 'TriggerAuthentication', vault({ serviceAccount: '/var/run/secrets/eks.amazonaws.com/serviceaccount/token' }))) ?? '', /the KEDA operator would send its own service account token/);
    // KEDA takes an empty serviceAccountName for unset, and reads the file.
    assert.match(refusal(answer(BETA, 'TriggerAuthentication', vault({ serviceAccountName: '', serviceAccount: '/var/run/secrets/kubernetes.io/serviceaccount/token' }))) ?? '', /the KEDA operator would send its own service account token/);
    assert.equal(refusal(answer(BETA, 'TriggerAuthentication', vault({ serviceAccountName: 'reader' }))), undefined);
    assert.equal(refusal(answer(BETA, 'TriggerAuthentication', vault({ token: 'hvs.x' }, 'token'))), undefined, 'token auth sends what the writer gives');
    assert.match(refusal(answer(BETA, 'TriggerAuthentication', vault(undefined, 'token'))) ?? '', /the KEDA operator would send its own Vault token/, 'without one, the operator\'s VAULT_TOKEN');
    // KEDA's own cloud identity (helper-61).
    assert.match(refusal(answer(BETA, 'TriggerAuthentication', { podIdentity: { provider: 'gcp' } })) ?? '', /spec\.podIdentity as written: the KEDA operator would hand its own cloud token to the trigger's scaler/);
    assert.match(refusal(answer(BETA, 'TriggerAuthentication', { podIdentity: { provider: 'azure-workload' } })) ?? '', /its own cloud token/);
    assert.match(refusal(answer(BETA, 'TriggerAuthentication', { awsSecretManager: { podIdentity: { provider: 'aws' }, secrets: [{ parameter: 'p', name: 'platform/db' }] } })) ?? '', /spec\.awsSecretManager\.podIdentity as written: the KEDA operator would fetch the secrets with its own cloud identity/);
    assert.equal(refusal(answer(BETA, 'TriggerAuthentication', { podIdentity: { provider: 'none' } })), undefined);
  });

  test("an analysis's metrics that query with the Argo Rollouts controller's own credentials, each of them", () => {
    const web = { name: 'health', provider: { web: { url: 'https://beta.example/health' } } };
    const datadog = (secretRef?: Record<string, unknown>) => ({ name: 'errors', provider: { datadog: { apiVersion: 'v2', query: 'avg:errors{*}', ...(secretRef !== undefined ? { secretRef } : {}) } } });
    const analysis = (...metrics: unknown[]) => ({ metrics });
    assert.match(refusal(answer(BETA, 'AnalysisTemplate', analysis(web, datadog()))) ?? '', /with spec\.metrics\[1\]\.provider\.datadog as written: the Argo Rollouts controller would query Datadog with its own credentials.*secretRef\.namespaced: true/);
    assert.match(refusal(answer(BETA, 'AnalysisTemplate', analysis(datadog({ name: 'dd', namespaced: false })))) ?? '', /its own credentials/);
    assert.equal(refusal(answer(BETA, 'AnalysisTemplate', analysis(web, datadog({ name: 'beta-dd', namespaced: true })))), undefined);
    for (const provider of [{ newRelic: { query: 'x' } }, { wavefront: { query: 'x' } }, { influxdb: { query: 'x' } }, { cloudWatch: { metricDataQueries: [] } }, { prometheus: { address: 'https://aps-workspaces.eu-west-1.amazonaws.com/x', query: 'up', authentication: { sigv4: { region: 'eu-west-1' } } } }])
      assert.match(refusal(answer(BETA, 'AnalysisTemplate', analysis({ name: 'm', provider }))) ?? '', /with spec\.metrics\[0\]\.provider\.\w+/, JSON.stringify(provider));
    // An UPDATE judges each metric against what the stored analysis held at the same place.
    assert.equal(refusal(answer(BETA, 'AnalysisTemplate', analysis(datadog(), web), { old: analysis(datadog()) })), undefined, 'the stored metric kept, a web metric added');
    assert.ok(refusal(answer(BETA, 'AnalysisTemplate', analysis(web, datadog()), { old: analysis(datadog()) })), 'moved to another place it is new there');
  });

  test('an UPDATE is judged when it changes the configuration, not when it keeps one stored before', () => {
    const ambient = vaultStore({ kubernetes: { role: 'reader' } });
    assert.equal(refusal(answer(BETA, 'SecretStore', ambient, { old: ambient })), undefined, 'kept as stored');
    assert.ok(refusal(answer(BETA, 'SecretStore', ambient, { old: vaultStore({ kubernetes: { role: 'reader', serviceAccountRef: { name: 'reader' } } }) })), 'the account dropped');
    assert.ok(refusal(answer(BETA, 'SecretStore', vaultStore({ kubernetes: { role: 'admin' } }), { old: ambient })), 'the role changed');
  });
});
