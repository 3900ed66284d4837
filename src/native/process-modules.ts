import { ModuleMap } from "../unwind/module-map.js";
import { readProcSelfMapsText } from "../unwind/proc-maps.js";
import { vdsoImageOfThisProcess } from "./vdso-image.js";

/**
 * Every ELF mapped in this process, for native frames by CFI: re-read from /proc/self/maps when a
 * stop's walk first needs a module (a frame without a safepoint) and the mappings changed (the
 * program is mapped by rw_run_main), parsed modules kept. A stop whose frames are all at
 * safepoints reads nothing.
 */
export class ProcessModules {
  readonly modules = new ModuleMap([]);
  private mapsText = "";
  private readonly refresh = (): void => {
    const text = readProcSelfMapsText();
    if (text === this.mapsText) return;
    this.mapsText = text;
    this.modules.replaceWith(ModuleMap.fromMappings(ModuleMap.parseProcMaps(text), { previous: this.modules, pseudoImage: vdsoImageOfThisProcess }));
  };

  /** Marks the map stale: the next lookup re-reads the mappings (once, and only if it comes). */
  refreshBeforeNextLookup(): void {
    this.modules.refreshBeforeNextLookup(this.refresh);
  }
}
