/** What a composition root (the embedded all-in-one, apps/cli/src/embedded) may use of this app. */
export { RegressionModule } from './regression.module';
export { loadRegressionJudge } from './calibration.judge';
