import { ConfigError, commonConfigSpec, loadConfig } from './config';

const base = { DATABASE_URL: 'postgres://u@h/db', NATS_URL: 'nats://h:4222' };

describe('DATABASE_POOL_WARM (issue 28: connections open before the first burst)', () => {
  it('warms the whole pool by default, whatever its size', () => {
    expect(loadConfig(commonConfigSpec(3001), base)).toMatchObject({ databasePoolSize: 10, databasePoolWarm: 10 });
    expect(loadConfig(commonConfigSpec(3001), { ...base, DATABASE_POOL_SIZE: '4' })).toMatchObject({ databasePoolSize: 4, databasePoolWarm: 4 });
  });

  it('takes 0 to DATABASE_POOL_SIZE', () => {
    expect(loadConfig(commonConfigSpec(3001), { ...base, DATABASE_POOL_SIZE: '6', DATABASE_POOL_WARM: '0' }).databasePoolWarm).toBe(0);
    expect(loadConfig(commonConfigSpec(3001), { ...base, DATABASE_POOL_SIZE: '6', DATABASE_POOL_WARM: '6' }).databasePoolWarm).toBe(6);
    expect(() => loadConfig(commonConfigSpec(3001), { ...base, DATABASE_POOL_SIZE: '6', DATABASE_POOL_WARM: '7' })).toThrow(/DATABASE_POOL_WARM: must be an integer from 0 to 6/);
    expect(() => loadConfig(commonConfigSpec(3001), { ...base, DATABASE_POOL_WARM: '-1' })).toThrow(/DATABASE_POOL_WARM: must be an integer from 0 to 10/);
  });

  it('an invalid pool size is one problem, under its own name', () => {
    let error: unknown;
    try {
      loadConfig(commonConfigSpec(3001), { ...base, DATABASE_POOL_SIZE: 'many', DATABASE_POOL_WARM: '3' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([expect.stringMatching(/^DATABASE_POOL_SIZE: /)]);
  });
});
