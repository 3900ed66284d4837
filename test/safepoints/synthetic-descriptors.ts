import { encodeLocationWord0 } from "../../src/location/location-word.js";
import { FrameDescriptorBuilder, type FrameDescriptors, NO_CFA_RULE } from "../../src/safepoints/frame-descriptors.js";

/** Descriptors for the given return addresses: frame size and one Indirect root derived from the address. */
export function syntheticDescriptors(returnAddresses: readonly number[]): FrameDescriptors {
  const builder = new FrameDescriptorBuilder();
  const fn = builder.addFunction({ name: "synthetic", address: 0, stackSizeBytes: 16 });
  returnAddresses.forEach((ra, i) => {
    const locStart = builder.addLocation(encodeLocationWord0(3, 0, 7, 8), (ra % 64) * 8);
    const pairStart = builder.nextPairIndex;
    builder.addPair(locStart, locStart);
    builder.addSafepoint({
      returnAddress: ra,
      frameSizeBytes: 16 + (ra % 7) * 8,
      stackSizeBytes: 16,
      cfaRegister: NO_CFA_RULE,
      cfaOffsetBytes: 0,
      savedRegOffsets: [],
      flags: 0,
      functionIndex: fn,
      blobIndex: 0,
      recordIndex: i,
      locStart,
      deoptCount: 0,
      pairStart,
      pairCount: 1,
      allocaCount: 0,
    });
  });
  return builder.finish();
}
