/**
 * Writes StackMap v3 blobs from a description, for tests that need shapes the compiler does not
 * produce on demand (several blobs, odd location counts, boundary values). The layout is the one
 * documented in src/stackmap/llvm-stackmap.ts; the encoder is deliberately written independently
 * of the decoder (plain DataView writes in field order).
 */
export interface EncLocation {
  kind: 1 | 2 | 3 | 4 | 5;
  size?: number;
  reg?: number;
  offset?: number;
}
export interface EncRecord {
  id: bigint;
  instructionOffset: number;
  locations: EncLocation[];
  liveOuts?: { reg: number; size: number }[];
}
export interface EncFunction {
  address: bigint;
  stackSize: bigint;
  records: EncRecord[];
}
export interface EncBlob {
  functions: EncFunction[];
  constants?: bigint[];
}

export function encodeBlob(blob: EncBlob): Uint8Array {
  const constants = blob.constants ?? [];
  const records = blob.functions.flatMap((f) => f.records);
  let size = 16 + 24 * blob.functions.length + 8 * constants.length;
  for (const r of records) {
    size += 16 + 12 * r.locations.length;
    size = (size + 7) & ~7;
    size += 4 + 4 * (r.liveOuts?.length ?? 0);
    size = (size + 7) & ~7;
  }
  const bytes = new Uint8Array(size);
  const dv = new DataView(bytes.buffer);
  dv.setUint8(0, 3);
  dv.setUint32(4, blob.functions.length, true);
  dv.setUint32(8, constants.length, true);
  dv.setUint32(12, records.length, true);
  let at = 16;
  for (const f of blob.functions) {
    dv.setBigUint64(at, f.address, true);
    dv.setBigUint64(at + 8, f.stackSize, true);
    dv.setBigUint64(at + 16, BigInt(f.records.length), true);
    at += 24;
  }
  for (const c of constants) {
    dv.setBigUint64(at, c, true);
    at += 8;
  }
  for (const r of records) {
    dv.setBigUint64(at, r.id, true);
    dv.setUint32(at + 8, r.instructionOffset, true);
    dv.setUint16(at + 14, r.locations.length, true);
    at += 16;
    for (const l of r.locations) {
      dv.setUint8(at, l.kind);
      dv.setUint16(at + 2, l.size ?? 8, true);
      dv.setUint16(at + 4, l.reg ?? 0, true);
      dv.setInt32(at + 8, l.offset ?? 0, true);
      at += 12;
    }
    at = (at + 7) & ~7;
    const liveOuts = r.liveOuts ?? [];
    dv.setUint16(at + 2, liveOuts.length, true);
    at += 4;
    for (const lo of liveOuts) {
      dv.setUint16(at, lo.reg, true);
      dv.setUint8(at + 3, lo.size);
      at += 4;
    }
    at = (at + 7) & ~7;
  }
  if (at !== size) throw new Error(`encoder size mismatch ${at} != ${size}`);
  return bytes;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A statepoint record: cc 0, flags 0, the deopt locations, the pairs, then the allocas. */
export function statepointRecord(
  instructionOffset: number,
  deopt: EncLocation[],
  pairs: [EncLocation, EncLocation][],
  allocas: EncLocation[] = [],
  id = 0xabcdef00n,
): EncRecord {
  return {
    id,
    instructionOffset,
    locations: [{ kind: 4, offset: 0 }, { kind: 4, offset: 0 }, { kind: 4, offset: deopt.length }, ...deopt, ...pairs.flat(), ...allocas],
  };
}
