import type { KeyStore } from '../store/key-store';

export interface ProvisionedKey {
  keyId: string;
  key: string;
  subject: string;
}

/**
 * Keys at start: makes the configured keys (VISION_API_KEYS) the only valid configuration keys (a key removed
 * from it stops working; one whose subject changed stops the start), and in standalone mode
 * with no key configured or stored creates one development key for subject `dev`, answered once (only its hash is
 * kept). Distributed deployments manage keys with the CLI (keys-cli.ts).
 */
export async function provisionKeys(
  keys: KeyStore,
  configured: readonly { key: string; subject: string }[],
  standalone: boolean,
): Promise<ProvisionedKey | undefined> {
  await keys.syncConfigured(configured);
  if (!standalone || configured.length > 0 || (await keys.count()) > 0) return undefined;
  const created = await keys.create('dev', 'dev');
  return { ...created, subject: 'dev' };
}
