/** Injection tokens of the shared infrastructure (libs/platform). */
export const DATA_SOURCE = Symbol('DATA_SOURCE');
/** The MessageBus port (libs/bus): JetStream in a deployment, the in-process bus when embedded. */
export const MESSAGE_BUS = Symbol('MESSAGE_BUS');
export const BUS_NAMES = Symbol('BUS_NAMES');
export const COMMON_CONFIG = Symbol('COMMON_CONFIG');
export const LOGGER = Symbol('LOGGER');
export const CLOCK = Symbol('CLOCK');
export const ID_GENERATOR = Symbol('ID_GENERATOR');

/** The clock and id source of the process; pure code receives their values, never calls them. */
export interface Clock {
  now(): Date;
}
export interface IdGenerator {
  uuid(): string;
}
