import { CONSUMERS } from '@evals/bus';
import { Module, type DynamicModule } from '@nestjs/common';
import { InfrastructureModule, OutboxRelayService, type CommonConfig, type JsonLogger } from '@evals/platform';
import { BaselinesController } from './baselines.controller';
import { RegressionService } from './regression.service';
import { RunScoredConsumer } from './run-scored.consumer';

@Module({})
export class RegressionModule {
  static forRoot(config: CommonConfig, logger: JsonLogger): DynamicModule {
    return {
      module: RegressionModule,
      imports: [InfrastructureModule.forRoot({ app: 'regression', config, logger, consumers: [CONSUMERS.regression] })],
      controllers: [BaselinesController],
      providers: [RegressionService, OutboxRelayService, RunScoredConsumer],
    };
  }
}
