export * from './suite.model';
export * from './suite-error';
export * from './suite.limits';
export { validateSuite, formatPath, type SuiteCheck, type SuiteCheckOptions, type SuiteValidation } from './suite.validator';
export { parseSuiteYaml, parseFieldPath, streamSuiteYaml, type StreamedSuite, type SuiteCasesSink } from './suite.parser';
export { canonicalJson } from './canonical-json';
export { suiteContentHash, suiteHashInput, SuiteContentHasher, SUITE_HASH_SCHEME, SUITE_HASH_PATTERN } from './suite-hash';
export { nextSuiteVersion, type StoredSuiteVersion, type SuiteVersionDecision } from './suite-version';
export { SuiteStreamValidator, type SuiteHead, type SuiteStreamResult, type StreamedCases } from './suite.stream-validator';
