// A client CA and a certificate it signs, for tests of `deed serve --client-ca`: what a
// cluster's API server presents to its webhooks.
import { generate } from 'selfsigned';

export interface Pem {
  cert: string;
  key: string;
}

/** A client CA and a client certificate it signs, as a cluster's API-server client PKI would have. */
export async function clientPki(commonName: string): Promise<{ ca: Pem; client: Pem }> {
  const now = Date.now();
  const ca = await generate([{ name: 'commonName', value: `${commonName}-ca` }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const client = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  return { ca: { cert: ca.cert, key: ca.private }, client: { cert: client.cert, key: client.private } };
}
