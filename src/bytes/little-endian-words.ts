/*
 * Bytes read as little-endian u32 words through a Uint32Array, for decoders whose fields are all
 * 4-aligned (an indexed typed-array read is cheaper than a DataView call in a hot loop).
 *
 * Word i holds bytes [4i, 4i + 4). Without copying when the bytes start 4-aligned in their buffer
 * and the host is little-endian (x86-64, arm64); otherwise a copy, byte-swapped on a big-endian
 * host. A trailing partial word is not included: decoders check ranges before reading.
 */

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

export function littleEndianWords(bytes: Uint8Array): Uint32Array {
  const count = bytes.byteLength >>> 2;
  if (HOST_LITTLE_ENDIAN && (bytes.byteOffset & 3) === 0) return new Uint32Array(bytes.buffer, bytes.byteOffset, count);
  const words = new Uint32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < count; i++) words[i] = view.getUint32(4 * i, true);
  return words;
}
