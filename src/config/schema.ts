import type { SchemaObject } from 'ajv';

// The interfaces describe a config after defaults are applied; the schema is what a file may say.

export interface PoolConfig {
  min: number;
  max: number;
  maxInFlight: number;
  queueSize: number;
  queueTimeoutMs: number;
  idleTimeoutMs: number;
}

export interface StdioUpstreamConfig {
  name: string;
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  mode: 'shared' | 'per-session';
  pool: PoolConfig;
  timeoutMs: number;
  maxTimeoutMs: number;
  prefix?: string;
}

export type UpstreamConfig = StdioUpstreamConfig;

export interface GatewayConfig {
  listen: { host: string; port: number };
  path: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  limits: { bodyBytes: number };
  security: { allowedOrigins: string[] };
  sessions: { store: 'memory' | 'redis'; redisUrl?: string; keyPrefix: string; ttlSeconds: number };
  sse: { keepAliveMs: number };
  pagination: { pageSize: number };
  shutdown: { drainMs: number };
  upstreams: UpstreamConfig[];
}

const pool: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  properties: {
    min: { type: 'integer', minimum: 0, default: 1 },
    max: { type: 'integer', minimum: 1, default: 4 },
    maxInFlight: { type: 'integer', minimum: 1, default: 32 },
    queueSize: { type: 'integer', minimum: 0, default: 1000 },
    queueTimeoutMs: { type: 'integer', minimum: 1, default: 5000 },
    idleTimeoutMs: { type: 'integer', minimum: 1000, default: 300000 },
  },
  required: [],
};

const stdioUpstream: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9-]+$', maxLength: 64 },
    transport: { type: 'string', const: 'stdio' },
    command: { type: 'string', minLength: 1 },
    args: { type: 'array', items: { type: 'string' }, default: [] },
    env: { type: 'object', additionalProperties: { type: 'string' }, required: [], default: {} },
    cwd: { type: 'string', nullable: true },
    mode: { type: 'string', enum: ['shared', 'per-session'], default: 'shared' },
    pool: { ...pool, default: {} },
    timeoutMs: { type: 'integer', minimum: 1, default: 60000 },
    maxTimeoutMs: { type: 'integer', minimum: 1, default: 600000 },
    prefix: { type: 'string', pattern: '^[A-Za-z0-9_-]*$', maxLength: 64, nullable: true },
  },
  required: ['name', 'transport', 'command'],
};

export const configSchema: SchemaObject = {
  type: 'object',
  additionalProperties: false,
  properties: {
    listen: {
      type: 'object',
      additionalProperties: false,
      properties: {
        host: { type: 'string', minLength: 1, default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
      },
      required: [],
      default: {},
    },
    path: { type: 'string', pattern: '^/', default: '/mcp' },
    logLevel: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    limits: {
      type: 'object',
      additionalProperties: false,
      properties: { bodyBytes: { type: 'integer', minimum: 1024, default: 4 * 1024 * 1024 } },
      required: [],
      default: {},
    },
    security: {
      type: 'object',
      additionalProperties: false,
      properties: {
        // Exact origins ("https://app.example.com"). Localhost origins on any port are always allowed.
        allowedOrigins: { type: 'array', items: { type: 'string' }, default: [] },
      },
      required: [],
      default: {},
    },
    sessions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        store: { type: 'string', enum: ['memory', 'redis'], default: 'memory' },
        redisUrl: { type: 'string', pattern: '^rediss?://' },
        // No "{" or "}": the session id is the key's Cluster hash tag.
        keyPrefix: { type: 'string', pattern: '^[^{}]*$', maxLength: 128, default: 'mcpgw:' },
        ttlSeconds: { type: 'integer', minimum: 1, default: 3600 },
      },
      required: [],
      default: {},
    },
    sse: {
      type: 'object',
      additionalProperties: false,
      properties: { keepAliveMs: { type: 'integer', minimum: 1000, default: 15000 } },
      required: [],
      default: {},
    },
    pagination: {
      type: 'object',
      additionalProperties: false,
      properties: { pageSize: { type: 'integer', minimum: 1, maximum: 10000, default: 500 } },
      required: [],
      default: {},
    },
    shutdown: {
      type: 'object',
      additionalProperties: false,
      properties: { drainMs: { type: 'integer', minimum: 0, default: 10000 } },
      required: [],
      default: {},
    },
    upstreams: { type: 'array', items: stdioUpstream, minItems: 1 },
  },
  required: ['upstreams'],
};
