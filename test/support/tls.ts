/**
 * Certificates for a TLS-verified test engine, made with openssl in the test's own directory:
 * a CA, a server certificate for 127.0.0.1 / localhost, and a client certificate, laid out as the
 * docker CLI expects a cert directory (ca.pem, cert.pem, key.pem).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TlsFiles {
  /** The client's directory: ca.pem, cert.pem, key.pem. */
  clientDir: string;
  /** Another client directory, signed by a CA the server does not trust. */
  strangerDir: string;
  server: { ca: string; cert: string; key: string };
}

function openssl(cwd: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function ca(dir: string, name: string): void {
  openssl(
    dir,
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
  );
}

function signed(dir: string, caDir: string, name: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    join(caDir, 'ca.pem'),
    '-CAkey',
    join(caDir, 'ca-key.pem'),
    '-CAcreateserial',
    '-out',
    `${name}-cert.pem`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  );
}

export function makeTlsFiles(root: string): TlsFiles {
  const serverDir = join(root, 'server');
  const clientDir = join(root, 'client');
  const strangerDir = join(root, 'stranger');
  for (const d of [serverDir, clientDir, strangerDir]) mkdirSync(d, { recursive: true });
  ca(serverDir, 'toolbox-test-ca');
  signed(serverDir, serverDir, 'server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  signed(serverDir, serverDir, 'client', 'extendedKeyUsage=clientAuth\n');
  ca(strangerDir, 'toolbox-test-other-ca');
  signed(strangerDir, strangerDir, 'client', 'extendedKeyUsage=clientAuth\n');
  const copy = (from: string, to: string) => execFileSync('cp', [from, to]);
  copy(join(serverDir, 'ca.pem'), join(clientDir, 'ca.pem'));
  copy(join(serverDir, 'client-cert.pem'), join(clientDir, 'cert.pem'));
  copy(join(serverDir, 'client-key.pem'), join(clientDir, 'key.pem'));
  // The stranger trusts the right server CA but presents a certificate from another CA.
  copy(join(serverDir, 'ca.pem'), join(strangerDir, 'ca-server.pem'));
  copy(join(strangerDir, 'client-cert.pem'), join(strangerDir, 'cert.pem'));
  copy(join(strangerDir, 'client-key.pem'), join(strangerDir, 'key.pem'));
  copy(join(strangerDir, 'ca-server.pem'), join(strangerDir, 'ca.pem'));
  return {
    clientDir,
    strangerDir,
    server: { ca: join(serverDir, 'ca.pem'), cert: join(serverDir, 'server-cert.pem'), key: join(serverDir, 'server-key.pem') },
  };
}
