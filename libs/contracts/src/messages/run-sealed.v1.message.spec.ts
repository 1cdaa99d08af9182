import { RUN_SEALED_V1 } from './run-sealed.v1.message';
import { describeContract } from './message-contract.testing';

describeContract(RUN_SEALED_V1, {
  required: ['run_id'],
  wrong: [
    ['run_id', 12, 'isSafeId'],
    ['run_id', '', 'isSafeId'],
    ['run_id', 'has space', 'isSafeId'],
    ['run_id', 'a/b', 'isSafeId'],
    ['run_id', '-flag', 'isSafeId'],
    ['run_id', 'x'.repeat(201), 'isSafeId'],
  ],
});
