import { DeliveryJob, deliveryJobOptions, priorAttempts } from './deliveries.queue';

describe('deliveryJobOptions: a delivery queue is bounded', () => {
  test('completed and failed jobs are removed by age and by count, whatever the rate of failures', () => {
    const options = deliveryJobOptions('evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W', '2e4c6a8b-0d1f-4e3a-9b5c-7d9f1b3d5f7a');
    expect(options.removeOnComplete).toEqual({ age: 24 * 3600, count: 10_000 });
    expect(options.removeOnFail).toEqual({ age: 7 * 24 * 3600, count: 10_000 });
  });
});

describe('DeliveryJob', () => {
  const job = {
    endpoint_id: '2e4c6a8b-0d1f-4e3a-9b5c-7d9f1b3d5f7a',
    event: {
      id: 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W',
      type: 'ticket.validated',
      created_at: '2024-12-01T09:30:00.000Z',
      workspace_id: '7d9f1b3d-5f7a-4e3a-9b5c-2e4c6a8b0d1f',
      data: { id: 'x' },
    },
  };

  test('a job from a producer one version ahead is delivered here: an envelope field this version does not know is dropped', () => {
    expect(DeliveryJob.parse({ ...job, added_later: 1 })).toEqual(job);
  });

  test('the event stays strict: it is the body every receiver gets, so an unknown field in it fails the job', () => {
    expect(DeliveryJob.safeParse({ ...job, event: { ...job.event, extra: true } }).success).toBe(false);
    expect(DeliveryJob.safeParse({ ...job, endpoint_id: 'nope' }).success).toBe(false);
  });
});

describe('attempts_made: a requeued retry continues the schedule', () => {
  const job = {
    endpoint_id: '2e4c6a8b-0d1f-4e3a-9b5c-7d9f1b3d5f7a',
    event: {
      id: 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W',
      type: 'ticket.validated',
      created_at: '2024-12-01T09:30:00.000Z',
      workspace_id: '7d9f1b3d-5f7a-4e3a-9b5c-2e4c6a8b0d1f',
      data: { id: 'x' },
    },
  };

  test('a job of the previous version (no attempts_made) still parses, and counts no earlier attempt', () => {
    expect(DeliveryJob.parse(job)).toEqual(job);
    expect(priorAttempts(job)).toBe(0);
  });

  test('the attempts recorded before the job was added travel with it', () => {
    expect(DeliveryJob.parse({ ...job, attempts_made: 3 })).toEqual({ ...job, attempts_made: 3 });
    expect(priorAttempts({ ...job, attempts_made: 3 })).toBe(3);
  });

  test('a malformed count fails the parse, and counts as none where the payload is not parsed yet', () => {
    for (const bad of [-1, 1.5, '2']) {
      expect(DeliveryJob.safeParse({ ...job, attempts_made: bad }).success).toBe(false);
      expect(priorAttempts({ ...job, attempts_made: bad })).toBe(0);
    }
    expect(priorAttempts(null)).toBe(0);
  });
});
