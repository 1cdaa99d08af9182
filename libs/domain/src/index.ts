export * from './runs';
