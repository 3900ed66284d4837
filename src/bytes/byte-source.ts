import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { TruncatedInputError } from "../errors.js";

/**
 * Bytes read by position, without holding the whole input: a core file can be larger than memory
 * (or than the 2 GiB one Node buffer holds), and a walk reads a few of its pages. `readAt`
 * returns exactly `lengthBytes` bytes or throws a TruncatedInputError naming the offset.
 */
export interface ByteSource {
  readonly sizeBytes: number;
  readAt(offset: number, lengthBytes: number, what: string): Uint8Array;
  close(): void;
}

/** Bytes already in memory (tests, small inputs). */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    sizeBytes: bytes.length,
    readAt(offset, lengthBytes, what) {
      if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > bytes.length) throw new TruncatedInputError(what, offset, lengthBytes, bytes.length - offset);
      return bytes.subarray(offset, offset + lengthBytes);
    },
    close() {},
  };
}

/** A file opened for positioned reads (pread): memory is what the caller keeps of what it read. */
export class FileSource implements ByteSource {
  readonly sizeBytes: number;
  private fd: number | undefined;

  constructor(readonly path: string) {
    this.fd = openSync(path, "r");
    try {
      this.sizeBytes = fstatSync(this.fd).size;
    } catch (e) {
      this.close();
      throw e;
    }
  }

  readAt(offset: number, lengthBytes: number, what: string): Uint8Array {
    if (offset < 0 || lengthBytes < 0 || offset + lengthBytes > this.sizeBytes)
      throw new TruncatedInputError(what, offset, lengthBytes, this.sizeBytes - offset);
    const out = new Uint8Array(lengthBytes);
    let done = 0;
    while (done < lengthBytes) {
      const n = readSync(this.fd!, out, done, lengthBytes - done, offset + done);
      if (n === 0) throw new TruncatedInputError(what, offset, lengthBytes, done);
      done += n;
    }
    return out;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
