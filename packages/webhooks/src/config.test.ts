import { parseConfig } from '@platform/core';
import { WebhooksConfig } from './config';

describe('WebhooksConfig', () => {
  test('defaults: queue prefix "platform", private targets refused, the contract schedule, 10 s timeout, published outbox rows kept 7 days, delivery records 30', () => {
    expect(parseConfig(WebhooksConfig, {})).toEqual({
      QUEUE_PREFIX: 'platform',
      WEBHOOKS_ALLOW_PRIVATE: false,
      WEBHOOKS_TIMEOUT_MS: 10_000,
      WEBHOOKS_RELAY_POLL_MS: 1000,
      WEBHOOKS_LOCK_DURATION_MS: 30_000,
      WEBHOOKS_STALLED_INTERVAL_MS: 30_000,
      WEBHOOKS_OUTBOX_RETENTION_DAYS: 7,
      WEBHOOKS_DELIVERY_RETENTION_DAYS: 30,
      WEBHOOKS_REQUEUE_AFTER_MS: 30_000,
      WEBHOOKS_REQUEUE_INTERVAL_MS: 15_000,
      WEBHOOKS_REQUEUE_LOOKBACK_MS: 900_000,
      WEBHOOKS_REQUEUE_BATCH: 100,
    });
  });

  test('the requeue of lost jobs: by default a lost job is added again within 60 s (30 s old, looked for every 15 s); it looks back at most a day and always further than it waits', () => {
    const defaults = parseConfig(WebhooksConfig, {});
    expect(defaults.WEBHOOKS_REQUEUE_AFTER_MS + defaults.WEBHOOKS_REQUEUE_INTERVAL_MS).toBeLessThan(60_000);
    expect(parseConfig(WebhooksConfig, { WEBHOOKS_REQUEUE_AFTER_MS: '200', WEBHOOKS_REQUEUE_INTERVAL_MS: '100' })).toMatchObject({
      WEBHOOKS_REQUEUE_AFTER_MS: 200,
      WEBHOOKS_REQUEUE_INTERVAL_MS: 100,
    });
    // Delivery records are kept at least a day: within the lookback, a delivered event always shows its record.
    expect(() => parseConfig(WebhooksConfig, { WEBHOOKS_REQUEUE_LOOKBACK_MS: String(86_400_000 + 1) })).toThrow(/WEBHOOKS_REQUEUE_LOOKBACK_MS/);
    // The longest wait (2 min) is shorter than the shortest lookback (5 min): the window is never empty.
    expect(() => parseConfig(WebhooksConfig, { WEBHOOKS_REQUEUE_AFTER_MS: '120001' })).toThrow(/WEBHOOKS_REQUEUE_AFTER_MS/);
    expect(() => parseConfig(WebhooksConfig, { WEBHOOKS_REQUEUE_LOOKBACK_MS: '299999' })).toThrow(/WEBHOOKS_REQUEUE_LOOKBACK_MS/);
    expect(() => parseConfig(WebhooksConfig, { WEBHOOKS_REQUEUE_BATCH: '0' })).toThrow(/WEBHOOKS_REQUEUE_BATCH/);
  });

  test('retention periods are whole days, at least 1', () => {
    expect(parseConfig(WebhooksConfig, { WEBHOOKS_OUTBOX_RETENTION_DAYS: '1', WEBHOOKS_DELIVERY_RETENTION_DAYS: '90' })).toMatchObject({
      WEBHOOKS_OUTBOX_RETENTION_DAYS: 1,
      WEBHOOKS_DELIVERY_RETENTION_DAYS: 90,
    });
    for (const days of ['0', '-1', '1.5', 'week']) {
      expect(() => parseConfig(WebhooksConfig, { WEBHOOKS_OUTBOX_RETENTION_DAYS: days })).toThrow(/WEBHOOKS_OUTBOX_RETENTION_DAYS/);
      expect(() => parseConfig(WebhooksConfig, { WEBHOOKS_DELIVERY_RETENTION_DAYS: days })).toThrow(/WEBHOOKS_DELIVERY_RETENTION_DAYS/);
    }
  });

  test('QUEUE_PREFIX: a name, or a Redis Cluster hash tag; never a ":" (it would reach into another prefix\'s keys)', () => {
    for (const prefix of ['acme-prod', 'platform.eu_1', '{acme}']) expect(parseConfig(WebhooksConfig, { QUEUE_PREFIX: prefix }).QUEUE_PREFIX).toBe(prefix);
    for (const prefix of ['', 'a:b', 'bull:', 'has space', '{a}b', 'x'.repeat(65)]) {
      expect(() => parseConfig(WebhooksConfig, { QUEUE_PREFIX: prefix })).toThrow(/QUEUE_PREFIX/);
    }
  });

  test('reads WEBHOOKS_ALLOW_PRIVATE and a retry schedule in milliseconds', () => {
    expect(parseConfig(WebhooksConfig, { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_SCHEDULE_MS: '50,100,200' })).toMatchObject({
      WEBHOOKS_ALLOW_PRIVATE: true,
      WEBHOOKS_RETRY_SCHEDULE_MS: [50, 100, 200],
    });
  });

  test('a bad variable is named', () => {
    expect(() => parseConfig(WebhooksConfig, { WEBHOOKS_ALLOW_PRIVATE: 'yes' })).toThrow(/WEBHOOKS_ALLOW_PRIVATE/);
    expect(() => parseConfig(WebhooksConfig, { WEBHOOKS_RETRY_SCHEDULE_MS: '5s,5m' })).toThrow(
      /WEBHOOKS_RETRY_SCHEDULE_MS: must be comma-separated milliseconds/,
    );
  });
});
