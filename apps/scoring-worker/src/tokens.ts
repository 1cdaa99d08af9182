/** Injection tokens of the scoring worker app. */
export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
export const WORKER_SETTINGS = Symbol('WORKER_SETTINGS');
export const WORKER_JUDGE = Symbol('WORKER_JUDGE');
