import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("the public index", () => {
  it("wires loaders, walker and collector together under one import", () => {
    for (const name of [
      "parseStackMapSection",
      "SafepointRegistry",
      "registerObjectFile",
      "registerFile",
      "loadStackMapFile",
      "StackMapFormatError",
      "loadPlimmixFromElf",
      "Unwinder",
      "StackRootScanner",
      "ImmixCollector",
      "compileProgram",
    ]) {
      expect(typeof (api as Record<string, unknown>)[name], name).toBe("function");
    }
  });
});
