// Reference for "Parse/index": LLVM's own StackMapParser (header-only view over the bytes) plus a
// std::unordered_map keyed by function address + instruction offset, as a C++ runtime would index
// a .llvm_stackmaps section. Reads the SAME bytes the TypeScript side parses (a file).
//
// usage: parse-ref <stackmap.bin> <iterations> <repeats>
// prints one JSON line: {"case":"parse","records":N,"samplesNsPerOp":[...],"checksum":C}
#include "llvm/Object/StackMapParser.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <vector>

using Parser = llvm::StackMapParser<llvm::support::little>;

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

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <stackmap.bin> <iterations> <repeats>\n", argv[0]);
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
  llvm::ArrayRef<uint8_t> ref(bytes.data(), bytes.size());
  const uint32_t records = Parser(ref).getNumRecords();
  uint64_t checksum = parseAndIndex(ref);  // warm-up
  std::printf("{\"case\":\"parse\",\"records\":%u,\"samplesNsPerOp\":[", records);
  for (int s = 0; s < repeats; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) checksum += parseAndIndex(ref);
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    std::printf("%s%.4f", s ? "," : "", ns / ((double)iterations * records));
  }
  std::printf("],\"checksum\":%llu}\n", (unsigned long long)checksum);
  return 0;
}
