/**
 * Hand-assembles `.eh_frame` sections for edge cases the compilers do not produce. Records are
 * laid out back to back; `cie()`/`fde()` return the record's section offset.
 */
export function uleb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

export function sleb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = ((value % 128) + 128) % 128;
    value = Math.floor(value / 128);
    const done = (value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

export function u16(value: number): number[] {
  return [value & 0xff, (value >>> 8) & 0xff];
}

export function u32(value: number): number[] {
  return [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff];
}

export function u64(value: number): number[] {
  const lo = value % 0x1_0000_0000;
  return [...u32(lo >>> 0), ...u32(Math.floor(value / 0x1_0000_0000))];
}

/** Two's complement 64-bit of a (possibly negative) safe integer. */
export function i64(value: number): number[] {
  const big = BigInt.asUintN(64, BigInt(value));
  return [...u32(Number(big & 0xffffffffn)), ...u32(Number(big >> 32n))];
}

export interface CieSpec {
  version?: number;
  augmentation?: string;
  codeAlignmentFactor?: number;
  dataAlignmentFactor?: number;
  returnAddressRegister?: number;
  /** Bytes after the length of the augmentation data (the builder writes the length). */
  augmentationData?: number[];
  /** Explicit augmentation data length (defaults to augmentationData.length). */
  augmentationDataLength?: number;
  instructions?: number[];
}

/** x86-64 defaults: "zR" with pcrel|sdata4, CFA = rsp + 8, RA at CFA - 8. */
export const X86_64_CIE: Required<Omit<CieSpec, "augmentationDataLength">> = {
  version: 1,
  augmentation: "zR",
  codeAlignmentFactor: 1,
  dataAlignmentFactor: -8,
  returnAddressRegister: 16,
  augmentationData: [0x1b],
  instructions: [0x0c, 0x07, 0x08, 0x90, 0x01],
};

export class EhFrameBuilder {
  readonly bytes: number[] = [];

  get offset(): number {
    return this.bytes.length;
  }

  raw(bytes: number[]): this {
    this.bytes.push(...bytes);
    return this;
  }

  cie(spec: CieSpec = {}): number {
    const s = { ...X86_64_CIE, ...spec };
    const body = [
      ...u32(0),
      s.version,
      ...[...s.augmentation].map((c) => c.charCodeAt(0)),
      0,
      ...uleb(s.codeAlignmentFactor),
      ...sleb(s.dataAlignmentFactor),
      ...(s.version === 1 ? [s.returnAddressRegister] : uleb(s.returnAddressRegister)),
      ...(s.augmentation.startsWith("z") ? [...uleb(spec.augmentationDataLength ?? s.augmentationData.length), ...s.augmentationData] : []),
      ...s.instructions,
    ];
    return this.record(body);
  }

  /**
   * An FDE whose fields after the CIE pointer are `fields` verbatim (pc_begin, pc_range and the
   * augmentation data in whatever encoding the test wants), then `instructions`.
   */
  fde(cieOffset: number, fields: number[], instructions: number[] = []): number {
    const start = this.offset;
    const ciePointer = start + 4 - cieOffset;
    return this.record([...u32(ciePointer), ...fields, ...instructions]);
  }

  /** An FDE for the default CIE encoding (pcrel sdata4) covering [pcBegin, pcBegin + pcRange). */
  pcrelFde(cieOffset: number, sectionAddress: number, pcBegin: number, pcRange: number, instructions: number[] = []): number {
    const fieldAddress = sectionAddress + this.offset + 8;
    return this.fde(cieOffset, [...u32((pcBegin - fieldAddress) >>> 0), ...u32(pcRange), 0], instructions);
  }

  terminator(): this {
    return this.raw(u32(0));
  }

  build(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }

  private record(body: number[]): number {
    const start = this.offset;
    this.bytes.push(...u32(body.length), ...body);
    return start;
  }
}
