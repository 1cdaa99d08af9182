import { Module, type DynamicModule } from '@nestjs/common';
import { CONSUMERS, type MessageBus } from '@evals/bus';
import type { LangChainJudge } from '@evals/judge';
import { InfrastructureModule, type JsonLogger } from '@evals/platform';
// Each app's public entry (its src/index.ts), never its internals.
import { IngestionModule, type IngestionConfig } from '../../../ingestion/src';
import { ReadModelModule, type ReadModelConfig } from '../../../read-model/src';
import { RegressionModule } from '../../../regression/src';
import { WorkerModule, type WorkerConfig } from '../../../scoring-worker/src';

export interface AllInOneConfigs {
  readonly ingestion: IngestionConfig;
  readonly worker: WorkerConfig;
  readonly readModel: ReadModelConfig;
  readonly regressionJudge: LangChainJudge | null;
}

/**
 * Ingestion, scoring, regression and the read model in one process (docs/embedded.md): the four apps'
 * features unchanged, on ONE shared infrastructure - one data source (a pool of one on PGlite), one bus,
 * one /health - so what runs here is the code a deployment runs, only composed differently.
 */
@Module({})
export class AllInOneModule {
  static forRoot(configs: AllInOneConfigs, logger: JsonLogger, adapters: { bus?: () => Promise<MessageBus>; poolSize?: number }): DynamicModule {
    return {
      module: AllInOneModule,
      imports: [
        InfrastructureModule.forRoot({
          app: 'all-in-one',
          config: configs.ingestion,
          logger,
          consumers: Object.values(CONSUMERS),
          keyManagement: true,
          ...(adapters.bus ? { bus: adapters.bus } : {}),
          ...(adapters.poolSize ? { poolSize: adapters.poolSize } : {}),
        }),
        IngestionModule.features(configs.ingestion),
        WorkerModule.features(configs.worker),
        ReadModelModule.features(configs.readModel),
        RegressionModule.features(configs.regressionJudge),
      ],
    };
  }
}
