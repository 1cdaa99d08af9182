import { Client } from 'pg';

/**
 * The statements every `pg` client of this process sends while `fn` runs, one per round trip, in order: what a
 * test of a round-trip count asserts on (issue 28), never a time. The `pg` module is the one TypeORM loads.
 * `clients[i]` sent `sent[i]`: one connection's statements - a transaction's - apart from the others'.
 */
export async function statementsSent<T>(fn: () => Promise<T>): Promise<{ result: T; sent: string[]; clients: Client[] }> {
  const sent: string[] = [];
  const clients: Client[] = [];
  const original = Client.prototype.query;
  const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
    const text = args[0];
    sent.push(typeof text === 'string' ? text : String((text as { text?: string } | null)?.text));
    clients.push(this);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as never);
  try {
    return { result: await fn(), sent, clients };
  } finally {
    spy.mockRestore();
  }
}
