/*
 * The part of the WebAssembly JS API rootwalk uses (Node 20 has it all; @types/node declares none
 * of it and the project does not load lib.dom). Kept to what the scan kernel needs.
 */
declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer | SharedArrayBuffer;
    grow(deltaPages: number): number;
  }
  class Module {
    constructor(bytes: BufferSource);
  }
  type ExportValue = ((...args: never[]) => unknown) | Memory | Global;
  type Exports = Record<string, ExportValue>;
  type ImportValue = ((...args: never[]) => unknown) | Memory | Global | number;
  type Imports = Record<string, Record<string, ImportValue>>;
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Exports;
  }
  class Global {
    value: number | bigint;
  }
  class RuntimeError extends Error {}
  class CompileError extends Error {}
  class LinkError extends Error {}
}
