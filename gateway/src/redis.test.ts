import { DEFAULT_QUEUE_PREFIX, parseConfig } from '@platform/core';
import { GatewayConfig } from './config';
import { DEFAULT_REDIS_PREFIX, gatewayRedisPrefix } from './redis';

const required = { PLATFORM_ADMIN_TOKEN: 'a'.repeat(16), PLATFORM_INTERNAL_SECRET: 'b'.repeat(16) };

test('under the default QUEUE_PREFIX the gateway keeps its keys where it always has: platform:gateway:', () => {
  expect(parseConfig(GatewayConfig, required).QUEUE_PREFIX).toBe(DEFAULT_QUEUE_PREFIX);
  expect(gatewayRedisPrefix(DEFAULT_QUEUE_PREFIX)).toBe('platform:gateway:');
  expect(DEFAULT_REDIS_PREFIX).toBe('platform:gateway:');
});

test('the gateway prefix follows QUEUE_PREFIX without its hash-tag braces, so its keys spread over every Cluster master', () => {
  expect(gatewayRedisPrefix(parseConfig(GatewayConfig, { ...required, QUEUE_PREFIX: 'acme-prod' }).QUEUE_PREFIX)).toBe('acme-prod:gateway:');
  expect(gatewayRedisPrefix(parseConfig(GatewayConfig, { ...required, QUEUE_PREFIX: '{acme}' }).QUEUE_PREFIX)).toBe('acme:gateway:');
});

test('a QUEUE_PREFIX the queues refuse stops the gateway too, naming the variable', () => {
  for (const prefix of ['', 'a:b', '{a}b', 'x'.repeat(65)])
    expect(() => parseConfig(GatewayConfig, { ...required, QUEUE_PREFIX: prefix })).toThrow(/QUEUE_PREFIX/);
});
