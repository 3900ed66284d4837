import { ByteView } from "../bytes/byte-view.js";
import { MalformedInputError, UnsupportedInputError, hex } from "../errors.js";
import { DwarfCursor } from "./dwarf-cursor.js";
import { DW_EH_PE_OMIT, readEncodedPointer, readEncodedValue } from "./pointer-encoding.js";

/*
 * `.eh_frame_hdr` (LSB 5.0 §10.6.2), the index the linker writes beside `.eh_frame`
 * (PT_GNU_EH_FRAME points at it):
 *
 *   +0  u8  version            1
 *   +1  u8  eh_frame_ptr_enc   encoding of the next field (GNU ld / lld: 0x1b pcrel sdata4)
 *   +2  u8  fde_count_enc      encoding of fde_count (0x03 udata4), 0xff = no table
 *   +3  u8  table_enc          encoding of the table entries (0x3b datarel sdata4), 0xff = none
 *   +4      eh_frame_ptr       address of .eh_frame
 *           fde_count
 *           table              fde_count pairs (initial_location, fde_address), sorted by
 *                              initial_location; datarel = relative to the start of this section
 *
 * Only the 0x3b table (fixed 8-byte entries) is searched; it is what every linker writes. A
 * header without a searchable table is an UnsupportedInputError: the caller then parses the
 * whole `.eh_frame` instead.
 */

const DW_EH_PE_DATAREL_SDATA4 = 0x3b;
const TABLE_ENTRY_BYTES = 8;

export class EhFrameHdr {
  private constructor(
    /** Address of the header section (link-time). */
    readonly sectionAddress: number,
    /** Address of `.eh_frame` the header points to. */
    readonly ehFrameAddress: number,
    readonly fdeCount: number,
    private readonly view: ByteView,
    private readonly tableOffset: number,
  ) {}

  static parse(bytes: Uint8Array, sectionAddress: number): EhFrameHdr {
    const view = new ByteView(bytes);
    const cursor = new DwarfCursor(view);
    const version = cursor.u8("eh_frame_hdr version");
    if (version !== 1) throw new UnsupportedInputError("eh_frame_hdr version", 0, version, "1");
    const ehFramePtrEnc = cursor.u8("eh_frame_hdr eh_frame_ptr_enc");
    const fdeCountEnc = cursor.u8("eh_frame_hdr fde_count_enc");
    const tableEnc = cursor.u8("eh_frame_hdr table_enc");
    const ehFrameAddress = readEncodedPointer(cursor, ehFramePtrEnc, sectionAddress, "eh_frame_hdr eh_frame_ptr").address;
    if (fdeCountEnc === DW_EH_PE_OMIT || tableEnc !== DW_EH_PE_DATAREL_SDATA4) {
      throw new UnsupportedInputError("eh_frame_hdr table encoding", 3, hex(tableEnc), "a binary search table (0x3b, datarel sdata4)");
    }
    const fdeCount = readEncodedValue(cursor, fdeCountEnc, "eh_frame_hdr fde_count");
    const tableOffset = cursor.pos;
    if (fdeCount < 0) throw new MalformedInputError("eh_frame_hdr fde_count", 4, fdeCount, "a count");
    view.need(tableOffset, fdeCount * TABLE_ENTRY_BYTES, "eh_frame_hdr table");
    return new EhFrameHdr(sectionAddress, ehFrameAddress, fdeCount, view, tableOffset);
  }

  /**
   * Address of the FDE of the last table entry whose initial location is <= `address`, or
   * undefined when `address` lies before every entry. The FDE's own range still has to be
   * checked: the address can be in a gap after it.
   */
  fdeAddressFor(address: number): number | undefined {
    let lo = 0;
    let hi = this.fdeCount;
    const rel = address - this.sectionAddress;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.view.i32(this.tableOffset + mid * TABLE_ENTRY_BYTES) <= rel) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return undefined;
    return this.sectionAddress + this.view.i32(this.tableOffset + (lo - 1) * TABLE_ENTRY_BYTES + 4);
  }
}
