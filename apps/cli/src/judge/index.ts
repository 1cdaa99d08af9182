/**
 * The judge's CLI commands (J4, J5): `evals label` (build a human-labelled set), `evals calibrate` (measure
 * and certify the judge against it), `evals compare` (pairwise A/B of two runs). Each is a `Command` of the
 * registry in ../commands.
 */
export { labelCommand, type KeyInput, type LabelIo } from './label.command';
export { calibrateCommand, formatCalibration } from './calibrate.command';
export { compareCommand, formatComparison } from './compare.command';

import { calibrateCommand } from './calibrate.command';
import { compareCommand } from './compare.command';
import { labelCommand } from './label.command';

export const JUDGE_COMMANDS = [labelCommand, calibrateCommand, compareCommand] as const;
