export * from './runs';
export * from './suites';
export * from './regression';
export * from './judge';
export * from './scorecards';
export * from './monitor';
export * from './gate';
