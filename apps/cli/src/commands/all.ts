import type { Command } from '../command';
import { importDatasetCommand } from '../import/import-dataset.command';
import { importOpenAiEvalsCommand } from '../import/import-openai-evals.command';
import { importPromptfooCommand } from '../import/import-promptfoo.command';
import { JUDGE_COMMANDS } from '../judge';
import { baselineListCommand } from './baseline-list.command';
import { baselinePinCommand } from './baseline-pin.command';
import { demoCommand } from './demo.command';
import { gateStatusCommand } from './gate-status.command';
import { gateCommand } from './gate.command';
import { overrideCommand } from './override.command';
import { projectCreateCommand, projectListCommand } from './project.command';
import { runCommand } from './run.command';
import { scoreCommand } from './score.command';
import { scorecardCommand } from './scorecard.command';
import { serveCommand } from './serve.command';
import { suitePushCommand } from './suite-push.command';
import { suiteValidateCommand } from './suite-validate.command';

/**
 * Every command loaded, in the order of the registry (./index.ts). Only for tests and tools that need all
 * of them: the CLI itself loads the one command it runs (issue 15, a lazy CLI).
 */
export const COMMANDS: readonly Command[] = [
  suiteValidateCommand,
  suitePushCommand,
  scoreCommand,
  runCommand,
  gateCommand,
  gateStatusCommand,
  overrideCommand,
  baselinePinCommand,
  baselineListCommand,
  scorecardCommand,
  projectCreateCommand,
  projectListCommand,
  ...JUDGE_COMMANDS,
  importPromptfooCommand,
  importOpenAiEvalsCommand,
  importDatasetCommand,
  demoCommand,
  serveCommand,
];
