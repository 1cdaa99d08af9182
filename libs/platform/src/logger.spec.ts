import { JsonLogger, stdoutByTurn } from './logger';

describe('stdoutByTurn (issue 28: a service log written once a turn)', () => {
  function harness() {
    const writes: string[] = [];
    let atExit: () => void = () => undefined;
    const write = stdoutByTurn({ write: (text: string) => writes.push(text) }, (flush) => (atExit = flush));
    return { writes, write, exit: () => atExit() };
  }

  it('writes the lines of one turn in one write, in order, at the end of that turn - none held longer', async () => {
    const { writes, write } = harness();
    const logger = new JsonLogger('worker', 'info', write);
    logger.event('info', 'run scored', { run_id: 'r1' });
    logger.event('info', 'run scored', { run_id: 'r2' });
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    expect(writes[0].split('\n').map((l) => (l ? JSON.parse(l).run_id : l))).toEqual(['r1', 'r2', '']);
    logger.event('info', 'run scored', { run_id: 'r3' });
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1]).run_id).toBe('r3');
  });

  it('writes what the last turn logged when the process exits', () => {
    const { writes, write, exit } = harness();
    write('{"msg":"fatal"}');
    exit();
    expect(writes).toEqual(['{"msg":"fatal"}\n']);
    exit();
    expect(writes).toHaveLength(1);
  });
});
