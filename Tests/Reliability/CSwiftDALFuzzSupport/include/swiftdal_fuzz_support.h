#ifndef SWIFTDAL_FUZZ_SUPPORT_H
#define SWIFTDAL_FUZZ_SUPPORT_H
// libFuzzer's driver entry point, declared for Swift (provided by -sanitize=fuzzer).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
