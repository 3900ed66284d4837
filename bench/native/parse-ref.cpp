// Reference for "Parse/index": a .llvm_stackmaps section registered as rootwalk's
// `registerStackMapBytes` registers it on gc_init's path (the scan kernel's index,
// walker/scan-kernel/assembly/parse-stackmap.ts), in C++ over the SAME bytes (a file).
//
// Contract of mode `index` (what the Parse cases' ratio is taken against since 2026-11-28): per
// registration, the same work and the same output as rootwalk's registration:
//   1. the registry's own copy of the section (rootwalk's caller may reuse its buffer; a malloc'd
//      copy here, freed when the registration is dropped, as rootwalk's is when its registry dies);
//   2. one pass over the blobs by their counts (record and location totals, every bound);
//   3. per record the kernel's checks (reserved fields, location kinds, DWARF registers below 256,
//      constant indices, padding and live-outs), the statepoint shape, the scan recipe (frame size
//      and the (base, derived) slot offsets under the fast-frame rule, shared with the previous
//      equal recipe or found by hash) and the insert into the same open-addressing table (keys
//      u64, values (module slot 0, record index), addresses as doubles; same hash and capacity);
//   4. the output columns the registry keeps: the table (3 columns of 2^k cells), recipe of each
//      safepoint, per recipe frame size / slot start / pair count, the slot words, and the two
//      saved-register columns (zeros: no unwind rows on this path). Freed with the registration.
// A section it would decline (rootwalk's general path then decides) makes it exit 3.
// It prints the record, recipe and slot-word counts and a checksum of the recipe columns; the bench
// compares them with rootwalk's index of the same bytes and stops (exit 4) when they differ.
//
// Mode `parse` (the reference before 2026-11-28, reported as `parserOnlyNsPerRecord`): LLVM's own
// StackMapParser (llvm/Object/StackMapParser.h) + std::unordered_map keyed by function address +
// instruction offset (reserved), values (stack size, record index, location count): no checks of
// the locations, no recipes, no copy of the section.
//
// usage: parse-ref <stackmap.bin> <iterations> <repeats> [index|parse]
// prints one JSON line: {"case":"parse","mode":M,"records":N,"samplesNsPerOp":[...],"checksum":C,...}
#include "llvm/Object/StackMapParser.h"
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/resource.h>
#include <unordered_map>
#include <vector>

using Parser = llvm::StackMapParser<llvm::support::little>;

// ---- mode parse: LLVM's parser and an unordered_map -------------------------------------------

struct Entry {
  uint64_t stackSize;
  uint32_t recordIndex;
  uint32_t numLocations;
};

static uint64_t parseAndIndex(llvm::ArrayRef<uint8_t> bytes) {
  Parser p(bytes);
  std::unordered_map<uint64_t, Entry> index;
  index.reserve(p.getNumRecords());
  uint32_t r = 0;
  for (const auto &f : p.functions()) {
    const uint64_t address = f.getFunctionAddress();
    const uint64_t stackSize = f.getStackSize();
    for (uint64_t k = 0; k < f.getRecordCount(); ++k, ++r) {
      const auto rec = p.getRecord(r);
      index.emplace(address + rec.getInstructionOffset(), Entry{stackSize, r, rec.getNumLocations()});
    }
  }
  return index.size() + index.bucket_count();
}

// ---- mode index: rootwalk's registration, in C -------------------------------------------------

// StackMap v3 layout (src/stackmap/stackmap-v3-layout.ts).
enum : uint32_t {
  HEADER_BYTES = 16, FUNCTION_BYTES = 24, CONSTANT_BYTES = 8, RECORD_LOCATIONS = 16, LOCATION_BYTES = 12,
  LIVE_OUTS_ARRAY = 4, LIVE_OUT_BYTES = 4, MIN_RECORD_BYTES = RECORD_LOCATIONS + LIVE_OUTS_ARRAY + 4,
  KIND_REGISTER = 1, KIND_DIRECT = 2, KIND_INDIRECT = 3, KIND_CONSTANT = 4, KIND_CONSTANT_INDEX = 5,
  DEOPT_START = 3, MAX_CALLING_CONVENTION = 1023, KNOWN_FLAGS = 3, DWARF_RSP = 7,
};
static const int64_t RA_CFA_OFFSET = -8;
static const uint64_t MAX_ADDRESS = 1ull << 53;
static const int32_t NOT_FAST = -1, DECLINED = -2;
static const uint32_t END_DECLINED = 0xffffffffu;

template <typename T> static T at(const uint8_t *p) { T v; std::memcpy(&v, p, sizeof v); return v; }
static uint64_t padTo8(uint64_t n) { return (n + 7) & ~7ull; }

/** What one registration keeps (rootwalk: the registry's section copy, SafepointTable, ScanRecipes). */
struct Index {
  uint8_t *section = nullptr;
  uint32_t length = 0, records = 0, locations = 0, logCapacity = 0, hashLog = 0;
  uint64_t *keys = nullptr, *values = nullptr;
  double *addresses = nullptr;
  int32_t *recipeOf = nullptr, *frameBytes = nullptr, *slots = nullptr;
  uint32_t *slotStart = nullptr, *saveMask = nullptr;
  uint16_t *pairCounts = nullptr;
  uint8_t *saveCount = nullptr;
  uint64_t *hashIndex = nullptr;  // per cell: hash (low word), recipe (high word, -1 empty)
  uint32_t recipeCount = 0, slotWords = 0, safepoint = 0, blobConstants = 0;
  int32_t previous = -1;
  // the last record whose locations were compiled (its bytes, count, size, recipe, shape)
  const uint8_t *lastLocations = nullptr;
  uint32_t lastCount = END_DECLINED;
  int32_t lastSize = 0, lastRecipe = 0;
  bool lastWasStatepoint = false;
  uint32_t shapeFirst = 0, shapePairs = 0, shapeAllocas = 0;
};

static void release(Index &x) {
  for (void *p : {(void *)x.section, (void *)x.keys, (void *)x.values, (void *)x.addresses, (void *)x.recipeOf, (void *)x.frameBytes,
                  (void *)x.slots, (void *)x.slotStart, (void *)x.saveMask, (void *)x.pairCounts, (void *)x.saveCount, (void *)x.hashIndex})
    std::free(p);
  x = Index();
}

/** Record and location totals by the counts (measureStackMap); false when a count reaches past the end. */
static bool measure(Index &x) {
  const uint8_t *s = x.section;
  uint64_t length = x.length, offset = 0, records = 0, locations = 0;
  if (length == 0) return false;
  while (offset < length) {
    if (offset + HEADER_BYTES > length) return false;
    const uint8_t *h = s + offset;
    const uint64_t numRecords = at<uint32_t>(h + 12);
    const uint64_t recordsAt = offset + HEADER_BYTES + (uint64_t)at<uint32_t>(h + 4) * FUNCTION_BYTES + (uint64_t)at<uint32_t>(h + 8) * CONSTANT_BYTES;
    if (recordsAt + numRecords * MIN_RECORD_BYTES > length) return false;
    uint64_t a = recordsAt;
    for (uint64_t r = 0; r < numRecords; r++) {
      if (a + RECORD_LOCATIONS > length) return false;
      const uint64_t n = at<uint16_t>(s + a + 14);
      const uint64_t liveOuts = a + padTo8(RECORD_LOCATIONS + n * LOCATION_BYTES);
      if (liveOuts + LIVE_OUTS_ARRAY > length) return false;
      a = liveOuts + padTo8(LIVE_OUTS_ARRAY + (uint64_t)at<uint16_t>(s + liveOuts + 2) * LIVE_OUT_BYTES);
      if (a > length) return false;
      locations += n;
    }
    records += numRecords;
    offset = a;
  }
  if (records > (1u << 26)) return false;
  x.records = (uint32_t)records;
  x.locations = (uint32_t)locations;
  return true;
}

static void allocate(Index &x) {
  x.logCapacity = 4;
  while ((1ull << x.logCapacity) < 2ull * x.records) x.logCapacity++;
  x.hashLog = 6;
  while ((1ull << x.hashLog) < 2ull * x.records) x.hashLog++;
  const size_t cells = (size_t)1 << x.logCapacity, r = x.records;
  x.keys = (uint64_t *)std::calloc(cells, 8);
  x.values = (uint64_t *)std::calloc(cells, 8);
  x.addresses = (double *)std::calloc(cells, 8);
  x.recipeOf = (int32_t *)std::malloc(r * 4 + 4);
  x.frameBytes = (int32_t *)std::malloc(r * 4 + 4);
  x.slotStart = (uint32_t *)std::malloc(r * 4 + 4);
  x.pairCounts = (uint16_t *)std::malloc(r * 2 + 2);
  x.slots = (int32_t *)std::malloc((size_t)x.locations * 8 + 8);
  x.hashIndex = (uint64_t *)std::malloc(((size_t)1 << x.hashLog) * 8);
  std::memset(x.hashIndex, 0xff, ((size_t)1 << x.hashLog) * 8);
}

static uint32_t hashGet(const Index &x, uint32_t hash) {
  const uint32_t mask = (1u << x.hashLog) - 1;
  uint32_t i = (hash * 0x9e3779b1u) >> (32 - x.hashLog);
  while ((int32_t)(x.hashIndex[i] >> 32) >= 0 && (uint32_t)x.hashIndex[i] != hash) i = (i + 1) & mask;
  return (uint32_t)(x.hashIndex[i] >> 32);
}

static void hashAdd(Index &x, uint32_t hash, int32_t recipe) {
  const uint32_t mask = (1u << x.hashLog) - 1;
  uint32_t i = (hash * 0x9e3779b1u) >> (32 - x.hashLog);
  while ((int32_t)(x.hashIndex[i] >> 32) >= 0) i = (i + 1) & mask;
  x.hashIndex[i] = ((uint64_t)(uint32_t)recipe << 32) | hash;
}

static bool sameRecipe(const Index &x, int32_t r, int32_t size, uint32_t slotsAt) {
  const uint32_t words = x.slotWords - slotsAt;
  if (x.frameBytes[r] != size || (uint32_t)x.pairCounts[r] * 2 != words) return false;
  return std::memcmp(x.slots + x.slotStart[r], x.slots + slotsAt, (size_t)words * 4) == 0;
}

/** The recipe for the slot words from `slotsAt`: the previous or the first equal one, else a new one. */
static int32_t shareRecipe(Index &x, int32_t size, uint32_t pairs, uint32_t slotsAt) {
  if (x.previous >= 0 && sameRecipe(x, x.previous, size, slotsAt)) {
    x.slotWords = slotsAt;
    return x.previous;
  }
  uint32_t hash = (uint32_t)(size ^ (int32_t)pairs) * 0x9e3779b1u;
  const bool neverFound = pairs == 0 && (int32_t)hash < 0;
  for (uint32_t w = slotsAt; w < x.slotWords; w++) hash = (hash ^ (uint32_t)x.slots[w]) * 0x9e3779b1u;
  const int32_t existing = neverFound ? -1 : (int32_t)hashGet(x, hash);
  if (existing >= 0 && sameRecipe(x, existing, size, slotsAt)) {
    x.slotWords = slotsAt;
    return x.previous = existing;
  }
  const int32_t index = (int32_t)x.recipeCount++;
  if (existing < 0) hashAdd(x, hash, index);
  x.frameBytes[index] = size;
  x.slotStart[index] = slotsAt;
  x.pairCounts[index] = (uint16_t)pairs;
  return x.previous = index;
}

/** The fast-frame rule (src/safepoints/fast-frame-rule.ts) per pair location; NOT_FAST or a shared recipe. */
static int32_t compileRecipe(Index &x, const uint8_t *locs, int32_t size, uint32_t first, uint32_t pairs, uint32_t stride, uint32_t allocas) {
  if (size < 0 || (size & 7) != 0 || allocas != 0) return NOT_FAST;
  const int64_t span = (int64_t)size - RA_CFA_OFFSET;
  const uint32_t slotsAt = x.slotWords;
  for (uint32_t p = 0; p < pairs; p++) {
    const uint32_t base = first + p * stride;
    for (uint32_t i = base; i < base + 2; i++) {
      const uint8_t *l = locs + (stride == 2 ? i : base) * LOCATION_BYTES;
      const int32_t offset = at<int32_t>(l + 8);
      const bool fast = l[0] == KIND_INDIRECT && at<uint16_t>(l + 4) == DWARF_RSP && at<uint16_t>(l + 6) == 0 && offset >= 0 &&
                        (int64_t)offset + 8 <= span && (offset & 7) == 0;
      if (!fast) {
        x.slotWords = slotsAt;
        return NOT_FAST;
      }
      x.slots[x.slotWords++] = offset;
    }
  }
  return shareRecipe(x, size, pairs, slotsAt);
}

/** The statepoint shape (src/stackmap/statepoint.ts shapeProblem). */
static bool matchShape(Index &x, const uint8_t *locs, uint32_t n) {
  if (n < DEOPT_START) return false;
  for (uint32_t i = 0; i < DEOPT_START; i++) if (locs[i * LOCATION_BYTES] != KIND_CONSTANT) return false;
  const int32_t cc = at<int32_t>(locs + 8), flags = at<int32_t>(locs + LOCATION_BYTES + 8);
  const int64_t deopt = at<int32_t>(locs + 2 * LOCATION_BYTES + 8);
  if (cc < 0 || cc > (int32_t)MAX_CALLING_CONVENTION || (flags & ~(int32_t)KNOWN_FLAGS) != 0) return false;
  if (deopt < 0 || DEOPT_START + deopt > (int64_t)n) return false;
  const uint32_t liveStart = DEOPT_START + (uint32_t)deopt;
  uint32_t allocasStart = n;
  while (allocasStart > liveStart && locs[(allocasStart - 1) * LOCATION_BYTES] == KIND_DIRECT) allocasStart--;
  if (((allocasStart - liveStart) & 1) != 0) allocasStart++;
  if (allocasStart > n) return false;
  x.shapeFirst = liveStart;
  x.shapePairs = (allocasStart - liveStart) >> 1;
  x.shapeAllocas = n - allocasStart;
  return true;
}

static int32_t recipeOfRecord(Index &x, const uint8_t *locs, uint32_t n, int32_t size, bool claimed) {
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *l = locs + i * LOCATION_BYTES;
    if ((uint32_t)(l[0] - KIND_REGISTER) > KIND_CONSTANT_INDEX - KIND_REGISTER || l[1] != 0 || at<uint32_t>(l + 4) > 0xff) return DECLINED;
    if (l[0] == KIND_CONSTANT_INDEX && at<uint32_t>(l + 8) >= x.blobConstants) return DECLINED;
  }
  x.lastWasStatepoint = matchShape(x, locs, n);
  if (x.lastWasStatepoint) return compileRecipe(x, locs, size, x.shapeFirst, x.shapePairs, 2, x.shapeAllocas);
  if (claimed) return DECLINED;
  return compileRecipe(x, locs, size, 0, n, 1, 0);
}

/** The padding and live-outs after the locations; the record's end or END_DECLINED. */
static uint32_t recordEnd(const Index &x, uint32_t a, uint32_t locationsEnd) {
  const uint8_t *s = x.section;
  const uint32_t liveOuts = a + (uint32_t)padTo8(locationsEnd - a);
  if (liveOuts > locationsEnd && at<uint32_t>(s + locationsEnd) != 0) return END_DECLINED;
  const uint32_t word = at<uint32_t>(s + liveOuts);
  if ((word & 0xffff) != 0) return END_DECLINED;
  const uint32_t count = word >> 16, list = liveOuts + LIVE_OUTS_ARRAY;
  for (uint32_t i = 0; i < count; i++) if (s[list + i * LIVE_OUT_BYTES + 2] != 0) return END_DECLINED;
  const uint32_t liveOutsEnd = list + count * LIVE_OUT_BYTES, end = a + (uint32_t)padTo8(liveOutsEnd - a);
  if (end > liveOutsEnd && at<uint32_t>(s + liveOutsEnd) != 0) return END_DECLINED;
  return end;
}

static bool insert(Index &x, uint64_t key, uint32_t descriptor) {
  const uint32_t lo = (uint32_t)key, hi = (uint32_t)(key >> 32), mask = (1u << x.logCapacity) - 1;
  uint32_t cell = ((lo ^ (hi * 0x85ebca6bu)) * 0x9e3779b1u) >> (32 - x.logCapacity);
  for (uint64_t k; (k = x.keys[cell]) != 0; cell = (cell + 1) & mask)
    if (k == key) return false;
  x.keys[cell] = key;
  x.values[cell] = (uint64_t)descriptor << 32;
  x.addresses[cell] = (double)key;
  return true;
}

static uint32_t indexRecord(Index &x, uint32_t a, uint64_t functionAddress, int32_t size) {
  const uint8_t *rec = x.section + a;
  const uint32_t counts = at<uint32_t>(rec + 12);
  if ((counts & 0xffff) != 0) return END_DECLINED;
  const uint32_t n = counts >> 16;
  const uint32_t end = recordEnd(x, a, a + RECORD_LOCATIONS + n * LOCATION_BYTES);
  if (end == END_DECLINED) return END_DECLINED;
  const uint64_t key = functionAddress + at<uint32_t>(rec + 8);
  if (key == 0 || key >= MAX_ADDRESS) return END_DECLINED;
  const uint64_t id = at<uint64_t>(rec);
  const bool claimed = id == 0xabcdef00u || id == 0xabcdef0fu;
  const uint8_t *locs = rec + RECORD_LOCATIONS;
  int32_t recipe;
  if (n == x.lastCount && size == x.lastSize && (x.lastWasStatepoint || !claimed) && std::memcmp(locs, x.lastLocations, n * LOCATION_BYTES) == 0) {
    recipe = x.lastRecipe;
  } else {
    recipe = recipeOfRecord(x, locs, n, size, claimed);
    if (recipe == DECLINED) return END_DECLINED;
    x.lastLocations = locs;
    x.lastCount = n;
    x.lastSize = size;
    x.lastRecipe = recipe;
  }
  x.recipeOf[x.safepoint] = recipe;
  if (!insert(x, key, x.safepoint)) return END_DECLINED;
  x.safepoint++;
  return end;
}

static uint32_t indexBlob(Index &x, uint32_t offset) {
  const uint8_t *h = x.section + offset;
  if (h[0] != 3 || h[1] != 0 || at<uint16_t>(h + 2) != 0) return END_DECLINED;
  const uint32_t numFunctions = at<uint32_t>(h + 4);
  const uint64_t numRecords = at<uint32_t>(h + 12);
  const uint8_t *fns = h + HEADER_BYTES;
  uint64_t claimed = 0;
  for (uint32_t f = 0; f < numFunctions; f++) {
    const uint8_t *e = fns + f * FUNCTION_BYTES;
    if (at<uint32_t>(e + 20) != 0) return END_DECLINED;
    claimed += at<uint32_t>(e + 16);
    const uint64_t stackSize = at<uint64_t>(e + 8);
    if (claimed > numRecords || at<uint64_t>(e) >= MAX_ADDRESS || (stackSize != UINT64_MAX && stackSize >= 0x80000000u)) return END_DECLINED;
  }
  if (claimed != numRecords) return END_DECLINED;
  x.blobConstants = at<uint32_t>(h + 8);
  x.lastCount = END_DECLINED;
  uint32_t a = offset + HEADER_BYTES + numFunctions * FUNCTION_BYTES + x.blobConstants * CONSTANT_BYTES;
  for (uint32_t f = 0; f < numFunctions; f++) {
    const uint8_t *e = fns + f * FUNCTION_BYTES;
    const uint64_t address = at<uint64_t>(e), stackSize = at<uint64_t>(e + 8);
    const int32_t size = stackSize == UINT64_MAX ? -1 : (int32_t)stackSize;
    for (uint32_t k = 0, count = at<uint32_t>(e + 16); k < count; k++)
      if ((a = indexRecord(x, a, address, size)) == END_DECLINED) return END_DECLINED;
  }
  return a;
}

/** One registration: copy, measure, index; the output columns trimmed to their counts. False when declined. */
static bool registerSection(Index &x, const std::vector<uint8_t> &bytes) {
  x.length = (uint32_t)bytes.size();
  x.section = (uint8_t *)std::malloc(bytes.size());
  std::memcpy(x.section, bytes.data(), bytes.size());
  if (!measure(x)) return false;
  allocate(x);
  for (uint32_t offset = 0; offset < x.length;)
    if ((offset = indexBlob(x, offset)) == END_DECLINED) return false;
  // No unwind rows on this path: every recipe saves no register (ScanRecipes' two save columns).
  x.saveMask = (uint32_t *)std::calloc(x.recipeCount + 1, 4);
  x.saveCount = (uint8_t *)std::calloc(x.recipeCount + 1, 1);
  std::free(x.hashIndex);
  x.hashIndex = nullptr;
  return true;
}

/** Sums of the recipe columns, in the bench's order (bench/corpus.ts recipeChecksum). */
static uint64_t recipeChecksum(const Index &x) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < x.records; i++) sum = sum * 31 + (uint64_t)(int64_t)x.recipeOf[i];
  for (uint32_t r = 0; r < x.recipeCount; r++) sum = sum * 31 + (uint64_t)(int64_t)x.frameBytes[r] + x.slotStart[r] + x.pairCounts[r];
  for (uint32_t w = 0; w < x.slotWords; w++) sum = sum * 31 + (uint64_t)(int64_t)x.slots[w];
  return sum;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s <stackmap.bin> <iterations> <repeats> [index|parse]\n", argv[0]);
    return 2;
  }
  FILE *f = std::fopen(argv[1], "rb");
  if (!f) { std::perror(argv[1]); return 1; }
  std::fseek(f, 0, SEEK_END);
  long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  std::vector<uint8_t> bytes(size);
  if (std::fread(bytes.data(), 1, size, f) != (size_t)size) { std::perror("read"); return 1; }
  std::fclose(f);
  const int iterations = std::atoi(argv[2]);
  const int repeats = std::atoi(argv[3]);
  const bool parseOnly = argc == 5 && std::strcmp(argv[4], "parse") == 0;
  llvm::ArrayRef<uint8_t> ref(bytes.data(), bytes.size());
  const uint32_t records = Parser(ref).getNumRecords();
  uint64_t checksum = 0;
  Index last;
  auto once = [&]() {
    if (parseOnly) {
      checksum += parseAndIndex(ref);
      return;
    }
    release(last);  // the previous registration is dropped when the next one is made
    if (!registerSection(last, bytes)) {
      std::fprintf(stderr, "parse-ref: the section is one rootwalk's index declines\n");
      std::exit(3);
    }
    checksum += last.safepoint + last.recipeCount;
  };
  once();  // warm-up
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  std::printf("{\"case\":\"parse\",\"mode\":\"%s\",\"records\":%u,\"samplesNsPerOp\":[", parseOnly ? "parse" : "index", records);
  for (int s = 0; s < repeats; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) once();
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    std::printf("%s%.4f", s ? "," : "", ns / ((double)iterations * records));
  }
  getrusage(RUSAGE_SELF, &after);
  // Minor page faults per registration in the timed loops: fresh memory touched (rootwalk's side
  // is counted by bench/registration-phases.ts).
  std::printf("],\"checksum\":%llu,\"minorFaultsPerOp\":%.2f", (unsigned long long)checksum,
              (double)(after.ru_minflt - before.ru_minflt) / ((double)iterations * repeats));
  if (!parseOnly)
    std::printf(",\"safepoints\":%u,\"recipes\":%u,\"slotWords\":%u,\"recipeChecksum\":\"%llu\"", last.safepoint, last.recipeCount, last.slotWords,
                (unsigned long long)recipeChecksum(last));
  std::printf("}\n");
  release(last);
  return 0;
}
