import { randomInt } from 'node:crypto';

const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';

function randomString(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet.charAt(randomInt(alphabet.length));
  return out;
}

// service.md §1.5: identifier shapes, so that logs and payloads look like the service's.
export const newExecutionId = (): string => `we-${randomString(LOWER_ALNUM, 24)}`;
export const newCanvasId = (): string => `c-${randomString(LOWER_ALNUM, 24)}`;
export const newMessageId = (): string => `am-${randomString(LOWER_ALNUM, 24)}`;
export const newDriveFileId = (): string => `df-${randomString(LOWER_ALNUM, 24)}`;
export const newApiKey = (): string => `rf_${randomString(BASE62, 32)}`;
export const newTraceId = (): string => randomString(HEX, 32);
