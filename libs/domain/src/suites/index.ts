export * from './suite.model';
export * from './suite-error';
export * from './suite.limits';
export { validateSuite, formatPath, type SuiteCheck, type SuiteCheckOptions, type SuiteValidation } from './suite.validator';
export { parseSuiteYaml, parseFieldPath, streamSuiteYaml, type StreamedSuite, type SuiteCasesSink } from './suite.parser';
export { canonicalJson } from './canonical-json';
export { suiteContentHash, suiteHashInput, SuiteContentHasher, SUITE_HASH_SCHEME, SUITE_HASH_PATTERN } from './suite-hash';
export { nextSuiteVersion, type StoredSuiteVersion, type SuiteVersionDecision } from './suite-version';
export { SuiteStreamValidator, type SuiteHead, type SuiteStreamResult, type StreamedCases } from './suite.stream-validator';
export * from './suite-events';
export { decodeSuiteEvent, type SuiteEventDecoding } from './suite-event.codec';
/** A suite version folded from its stream (issue 27): `SuiteStreamModel.evolve`, `finish`, `foldSuite`. */
export * as SuiteStreamModel from './suite-stream.model';
export { SUITE_STREAM_CODES, SuiteStreamError, type PublishedCase, type PublishedSuiteVersion, type SuiteStreamCode, type SuiteStreamState } from './suite-stream.model';
