export * from './runs';
export * from './suites';
export * from './regression';
