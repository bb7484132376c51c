import { MemorySessionStore } from '../../src/session/memory-store.js';
import { sessionStoreContract } from './store-contract.js';

sessionStoreContract(
  'MemorySessionStore',
  ({ ttlSeconds }) => new MemorySessionStore({ ttlSeconds, sweepIntervalMs: 100 }),
);
