// Nothing to compile: the header declares libFuzzer's driver for swiftdal-fuzz.
#include "swiftdal_fuzz_support.h"
