import { CONSUMERS } from '@evals/bus';
import { Module, type DynamicModule } from '@nestjs/common';
import type { LangChainJudge } from '@evals/judge';
import { InfrastructureModule, type CommonConfig, type JsonLogger } from '@evals/platform';
import { SuiteVersions } from '@evals/persistence';
import { BaselinesController } from './baselines.controller';
import { CalibrationSetsController, CalibrationsController, JudgesController } from './calibration.controller';
import { REGRESSION_JUDGE, loadRegressionJudge } from './calibration.judge';
import { CalibrationService } from './calibration.service';
import { ComparisonsController } from './comparison.controller';
import { FindingsController } from './findings.controller';
import { ComparisonService } from './comparison.service';
import { RegressionService } from './regression.service';
import { RunScoredConsumer } from './run-scored.consumer';
import { JudgesListController } from './judges-list.controller';

@Module({})
export class RegressionModule {
  /**
   * `judge`: the judge of calibration (J4) and pairwise comparison (J5); by default built from the `JUDGE_*`
   * variables (a bad one throws ConfigError naming it), null when JUDGE_PROVIDER is unset.
   */
  static forRoot(config: CommonConfig, logger: JsonLogger, judge: LangChainJudge | null = loadRegressionJudge(process.env)): DynamicModule {
    return {
      ...RegressionModule.features(judge),
      imports: [InfrastructureModule.forRoot({ app: 'regression', config, logger, consumers: [CONSUMERS.regression] })],
    };
  }

  /** Controllers and providers only; the infrastructure (a global module) comes from whoever composes it. */
  static features(judge: LangChainJudge | null): DynamicModule {
    return {
      module: RegressionModule,
      controllers: [BaselinesController, CalibrationSetsController, CalibrationsController, JudgesController, JudgesListController, ComparisonsController, FindingsController],
      providers: [
        RegressionService,
        RunScoredConsumer,
        { provide: REGRESSION_JUDGE, useValue: judge },
        // One cache of folded suite versions for calibration and comparison.
        { provide: SuiteVersions, useFactory: () => new SuiteVersions() },
        CalibrationService,
        ComparisonService,
      ],
    };
  }
}
