import { CONSUMERS } from '@evals/bus';
import { Module, type DynamicModule } from '@nestjs/common';
import { InfrastructureModule, type JsonLogger } from '@evals/platform';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { InboundConsumer } from './inbound.consumer';
import { RunIntakeService } from './run-intake.service';
import { RunsController } from './runs.controller';
import { StreamedRunsController } from './streamed-runs.controller';
import { SuitesController } from './suites.controller';
import { SuiteCatalogService } from './suite-catalog.service';
import { MonitorService } from './monitor.service';
import { GateController } from './gate.controller';
import { GatesListController } from './gates-list.controller';
import { GateService } from './gate.service';
import { RunWaiter } from './run-waiter';
import { BudgetRepository, EventStore, GateRepository, JudgeStatusRepository, RunExpiryQueries, SuiteRepository } from '@evals/persistence';
import { GateJudgePolicy } from './gate-judge-policy';
import { GateBudget } from './gate-budget';
import { BudgetsController } from './budgets.controller';
import { GateRuns } from './gate-runs';
import { GateVerdicts } from './gate-verdicts';
import { RunStreams } from './run-streams';
import { WorkPublisher } from './work-publisher';
import { RunExpiryService } from './run-expiry.service';

@Module({})
export class IngestionModule {
  /** The ingestion app as its own process: its features on the shared infrastructure. */
  static forRoot(config: IngestionConfig, logger: JsonLogger): DynamicModule {
    return {
      ...IngestionModule.features(config),
      imports: [InfrastructureModule.forRoot({ app: 'ingestion', config, logger, consumers: [CONSUMERS.ingestion], keyManagement: true })],
    };
  }

  /** Controllers and services only; the infrastructure (a global module) comes from whoever composes it. */
  static features(config: IngestionConfig): DynamicModule {
    return {
      module: IngestionModule,
      controllers: [RunsController, StreamedRunsController, SuitesController, GateController, GatesListController, BudgetsController],
      providers: [
        { provide: INGESTION_CONFIG, useValue: config },
        // Adapters as providers, so the services get them injected (and tests their fakes).
        EventStore,
        SuiteRepository,
        RunExpiryQueries,
        GateRepository,
        BudgetRepository,
        JudgeStatusRepository,
        RunStreams,
        WorkPublisher,
        RunIntakeService,
        RunExpiryService,
        RunWaiter,
        GateRuns,
        GateJudgePolicy,
        GateBudget,
        GateVerdicts,
        GateService,
        SuiteCatalogService,
        MonitorService,
        InboundConsumer,
      ],
    };
  }
}
