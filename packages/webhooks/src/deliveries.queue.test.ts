import { deliveryJobOptions } from './deliveries.queue';

describe('deliveryJobOptions: a delivery queue is bounded', () => {
  test('completed and failed jobs are removed by age and by count, whatever the rate of failures', () => {
    const options = deliveryJobOptions('evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W', '2e4c6a8b-0d1f-4e3a-9b5c-7d9f1b3d5f7a');
    expect(options.removeOnComplete).toEqual({ age: 24 * 3600, count: 10_000 });
    expect(options.removeOnFail).toEqual({ age: 7 * 24 * 3600, count: 10_000 });
  });
});
