import { DEFAULT_QUOTA_LIMITS, DEFAULT_WORKSPACE_LIMITS, MAX_IDEMPOTENCY_BYTES_QUOTA, MAX_QUOTA_VALUE, parseConfig } from '@platform/core';
import { GatewayConfig, quotaDefaults } from './config';

const required = { PLATFORM_ADMIN_TOKEN: 'a'.repeat(16), PLATFORM_INTERNAL_SECRET: 'b'.repeat(16) };

describe('WORKSPACE_QUOTA_* (contract section 20)', () => {
  test("unset, the platform defaults are the contract's (core's DEFAULT_QUOTA_LIMITS)", () => {
    expect(quotaDefaults(parseConfig(GatewayConfig, required))).toEqual(DEFAULT_QUOTA_LIMITS);
  });

  test('each variable sets its quota, 0 and the maximum included', () => {
    const config = parseConfig(GatewayConfig, {
      ...required,
      WORKSPACE_QUOTA_PIPELINES: '0',
      WORKSPACE_QUOTA_SCHEDULED_PIPELINES: String(MAX_QUOTA_VALUE),
      WORKSPACE_QUOTA_WEBHOOK_ENDPOINTS: '5',
      WORKSPACE_QUOTA_IDEMPOTENCY_BYTES: String(MAX_IDEMPOTENCY_BYTES_QUOTA),
    });
    expect(quotaDefaults(config)).toEqual({
      pipelines: 0,
      scheduled_pipelines: MAX_QUOTA_VALUE,
      webhook_endpoints: 5,
      idempotency_bytes: MAX_IDEMPOTENCY_BYTES_QUOTA,
    });
  });

  test('an empty, negative, fractional or too large value stops the start, naming the variable', () => {
    for (const [variable, value] of [
      ['WORKSPACE_QUOTA_PIPELINES', ''],
      ['WORKSPACE_QUOTA_PIPELINES', '-1'],
      ['WORKSPACE_QUOTA_SCHEDULED_PIPELINES', '1.5'],
      ['WORKSPACE_QUOTA_WEBHOOK_ENDPOINTS', String(MAX_QUOTA_VALUE + 1)],
      ['WORKSPACE_QUOTA_IDEMPOTENCY_BYTES', '64MiB'],
      ['WORKSPACE_QUOTA_IDEMPOTENCY_BYTES', String(MAX_IDEMPOTENCY_BYTES_QUOTA + 1)],
    ]) {
      expect(() => parseConfig(GatewayConfig, { ...required, [variable!]: value })).toThrow(new RegExp(`${variable}:`));
    }
  });
});

describe('GATEWAY_WORKSPACE_MAX_API_KEYS', () => {
  test("unset: core's DEFAULT_WORKSPACE_LIMITS.api_keys; set: a whole number from 0 to MAX_QUOTA_VALUE", () => {
    expect(parseConfig(GatewayConfig, required).GATEWAY_WORKSPACE_MAX_API_KEYS).toBe(DEFAULT_WORKSPACE_LIMITS.api_keys);
    for (const value of [0, 3, MAX_QUOTA_VALUE]) {
      expect(parseConfig(GatewayConfig, { ...required, GATEWAY_WORKSPACE_MAX_API_KEYS: String(value) }).GATEWAY_WORKSPACE_MAX_API_KEYS).toBe(value);
    }
  });

  test('an empty, negative, fractional or too large value stops the start, naming the variable', () => {
    for (const value of ['', '-1', '1.5', '1e3', String(MAX_QUOTA_VALUE + 1)])
      expect(() => parseConfig(GatewayConfig, { ...required, GATEWAY_WORKSPACE_MAX_API_KEYS: value })).toThrow(/GATEWAY_WORKSPACE_MAX_API_KEYS:/);
  });
});

describe('REDIS_COMMAND_TIMEOUT_MS', () => {
  test('unset: 100 ms, the fail-fast production value; set: whole milliseconds from 1 to 10000', () => {
    expect(parseConfig(GatewayConfig, required).REDIS_COMMAND_TIMEOUT_MS).toBe(100);
    expect(parseConfig(GatewayConfig, { ...required, REDIS_COMMAND_TIMEOUT_MS: '2000' }).REDIS_COMMAND_TIMEOUT_MS).toBe(2000);
    for (const value of ['', '0', '1.5', '10001', '2s'])
      expect(() => parseConfig(GatewayConfig, { ...required, REDIS_COMMAND_TIMEOUT_MS: value })).toThrow(/REDIS_COMMAND_TIMEOUT_MS:/);
  });
});
