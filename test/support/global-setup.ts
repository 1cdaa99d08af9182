import { ensureTestServers } from './servers';

export default async function globalSetup(): Promise<void> {
  await ensureTestServers();
}
