import koffi from "koffi";
import type { LibraryHandle } from "koffi";

/*
 * Renders an SVG to pixels (and a PNG file) with librsvg and cairo, through koffi: the libraries
 * are there wherever librsvg2-2 is installed (a dependency of most desktops; .ci/run installs it
 * when missing), no converter program is needed. Tests look at heap maps as a person would: a
 * picture, not only the markup.
 */

export interface Raster {
  width: number;
  height: number;
  /** RGBA, 8 bits each, not premultiplied, row after row. */
  rgba: Uint8Array;
  /** [r, g, b, a] of pixel (x, y). */
  at(x: number, y: number): [number, number, number, number];
}

interface Libraries {
  newFromData: (data: Uint8Array, length: number, error: null) => unknown;
  renderDocument: (handle: unknown, cr: unknown, viewport: { x: number; y: number; width: number; height: number }, error: null) => number;
  unref: (object: unknown) => void;
  surfaceCreate: (format: number, width: number, height: number) => unknown;
  create: (surface: unknown) => unknown;
  destroy: (cr: unknown) => void;
  surfaceDestroy: (surface: unknown) => void;
  surfaceFlush: (surface: unknown) => void;
  writePng: (surface: unknown, path: string) => number;
  data: (surface: unknown) => unknown;
  stride: (surface: unknown) => number;
  fromPng: (path: string) => unknown;
  width: (surface: unknown) => number;
  height: (surface: unknown) => number;
  status: (surface: unknown) => number;
}

let libraries: Libraries | undefined;

function load(): Libraries {
  if (libraries !== undefined) return libraries;
  let rsvg: LibraryHandle;
  let cairo: LibraryHandle;
  try {
    rsvg = koffi.load("librsvg-2.so.2");
    cairo = koffi.load("libcairo.so.2");
  } catch (e) {
    throw new Error(`rendering SVG needs librsvg and cairo (Debian: apt-get install librsvg2-2): ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  koffi.struct("RsvgRectangle", { x: "double", y: "double", width: "double", height: "double" });
  libraries = {
    newFromData: rsvg.func("void *rsvg_handle_new_from_data(const uint8_t *data, size_t length, void *error)") as Libraries["newFromData"],
    renderDocument: rsvg.func(
      "int rsvg_handle_render_document(void *handle, void *cr, const RsvgRectangle *viewport, void *error)",
    ) as Libraries["renderDocument"],
    unref: rsvg.func("void g_object_unref(void *object)") as Libraries["unref"],
    surfaceCreate: cairo.func("void *cairo_image_surface_create(int format, int width, int height)") as Libraries["surfaceCreate"],
    create: cairo.func("void *cairo_create(void *surface)") as Libraries["create"],
    destroy: cairo.func("void cairo_destroy(void *cr)") as Libraries["destroy"],
    surfaceDestroy: cairo.func("void cairo_surface_destroy(void *surface)") as Libraries["surfaceDestroy"],
    surfaceFlush: cairo.func("void cairo_surface_flush(void *surface)") as Libraries["surfaceFlush"],
    writePng: cairo.func("int cairo_surface_write_to_png(void *surface, const char *path)") as Libraries["writePng"],
    data: cairo.func("void *cairo_image_surface_get_data(void *surface)") as Libraries["data"],
    stride: cairo.func("int cairo_image_surface_get_stride(void *surface)") as Libraries["stride"],
    fromPng: cairo.func("void *cairo_image_surface_create_from_png(const char *path)") as Libraries["fromPng"],
    width: cairo.func("int cairo_image_surface_get_width(void *surface)") as Libraries["width"],
    height: cairo.func("int cairo_image_surface_get_height(void *surface)") as Libraries["height"],
    status: cairo.func("int cairo_surface_status(void *surface)") as Libraries["status"],
  };
  return libraries;
}

const CAIRO_FORMAT_ARGB32 = 0;

/**
 * Renders `svg` onto a transparent canvas of `width` x `height` pixels (the document drawn at
 * its own size in the top left corner: pass the SVG's size, or more to see what lies outside it)
 * and writes the PNG to `pngPath` if given.
 */
export function renderSvg(svg: string, width: number, height: number, pngPath?: string): Raster {
  const lib = load();
  const bytes = new TextEncoder().encode(svg);
  const handle = lib.newFromData(bytes, bytes.length, null);
  if (handle === null) throw new Error("librsvg could not parse the SVG");
  const surface = lib.surfaceCreate(CAIRO_FORMAT_ARGB32, width, height);
  const cr = lib.create(surface);
  try {
    const size = /<svg[^>]* width="(\d+(?:\.\d+)?)" height="(\d+(?:\.\d+)?)"/.exec(svg);
    if (size === null) throw new Error("the SVG has no width and height");
    if (lib.renderDocument(handle, cr, { x: 0, y: 0, width: Number(size[1]), height: Number(size[2]) }, null) === 0)
      throw new Error("librsvg could not render the SVG");
    lib.surfaceFlush(surface);
    if (pngPath !== undefined && lib.writePng(surface, pngPath) !== 0) throw new Error(`cairo could not write ${pngPath}`);
    return rasterOf(lib, surface, width, height);
  } finally {
    lib.destroy(cr);
    lib.surfaceDestroy(surface);
    lib.unref(handle);
  }
}

/** The pixels of a cairo image surface of `width` x `height` (ARGB32) as a Raster. */
function rasterOf(lib: Libraries, surface: unknown, width: number, height: number): Raster {
  const stride = lib.stride(surface);
  const argb = new Uint8Array(koffi.view(lib.data(surface), stride * height));
  // Cairo ARGB32: native-endian premultiplied words, bytes B G R A on x86-64.
  const rgba = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const s = y * stride + x * 4;
      const d = (y * width + x) * 4;
      const a = argb[s + 3]!;
      const un = (v: number): number => (a === 0 ? 0 : Math.min(255, Math.round((v * 255) / a)));
      rgba[d] = un(argb[s + 2]!);
      rgba[d + 1] = un(argb[s + 1]!);
      rgba[d + 2] = un(argb[s]!);
      rgba[d + 3] = a;
    }
  }
  return {
    width,
    height,
    rgba,
    at: (x, y) => {
      const d = (y * width + x) * 4;
      return [rgba[d]!, rgba[d + 1]!, rgba[d + 2]!, rgba[d + 3]!];
    },
  };
}

/** Reads a PNG file (a browser's screenshot) into pixels, with cairo. */
export function readPng(path: string): Raster {
  const lib = load();
  const surface = lib.fromPng(path);
  try {
    if (lib.status(surface) !== 0) throw new Error(`cairo could not read the PNG ${path} (status ${lib.status(surface)})`);
    lib.surfaceFlush(surface);
    return rasterOf(lib, surface, lib.width(surface), lib.height(surface));
  } finally {
    lib.surfaceDestroy(surface);
  }
}
