import { createHash } from 'node:crypto';

// Fixed namespace so the same record id always maps to the same point id, in any process.
const NAMESPACE = 'agentflow.memory.record';

/**
 * Qdrant point ids must be unsigned integers or UUIDs; record ids are free strings. This maps
 * a record id to a name-based UUID (RFC 9562 version 5 layout: SHA-1 of namespace and name).
 * The record id itself is kept in the payload.
 */
export function toPointId(recordId: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update('\u0000').update(recordId, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50; // version 5
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
