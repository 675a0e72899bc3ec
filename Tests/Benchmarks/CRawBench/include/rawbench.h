#ifndef RAWBENCH_H
#define RAWBENCH_H
// The raw SQLite C API baseline for SwiftDAL's benchmarks (workloads of Tests/Benchmarks/README.md):
// the same work as the Swift harness, one prepared statement per workload, reused.
// Each function returns 0 on success and writes a checksum of what it read.
#include <stdint.h>

/// SQL run on every connection after the defaults (pragmas given with `--pragma`, the
/// same on both sides); NULL or "" for none. Returns 0, or SQLITE_NOMEM.
int rawbench_set_pragmas(const char *sql);

/// Creates the benchmark schema in a new file database (WAL, synchronous=NORMAL).
int rawbench_create(const char *path);
/// Creates the schema and inserts rows 1...n (setup for every workload but W1).
int rawbench_populate(const char *path, int64_t n);

/// Runs `body(context)` as the measured region and returns its elapsed seconds. Every
/// implementation's workload (this harness's and the Swift ones) runs through it, so the
/// time and the instruction count (`valgrind --tool=callgrind
/// --toggle-collect=rawbench_region`) cover the same work: the workload alone, not
/// opening or closing the database, not checking or freeing what it returned.
double rawbench_measured(void (*body)(void *context), void *context);
/// The process CPU time (every thread) of the last rawbench_measured region, in seconds.
double rawbench_last_cpu_seconds(void);
/// The measured region itself (not inlined, so that callgrind can toggle on it).
void rawbench_region(void (*body)(void *context), void *context);

// W1-W7 on the file at `path`: each opens it, times the workload's body through
// rawbench_measured (`*seconds`), then closes it.
int rawbench_w1_insert(const char *path, int64_t n, int64_t *checksum, double *seconds);
int rawbench_w2_fetch_all(const char *path, int64_t *checksum, double *seconds);
int rawbench_w3_lookup(const char *path, int64_t n, int transaction, int64_t *checksum, double *seconds);
int rawbench_w4_filter(const char *path, int64_t n, int64_t *checksum, double *seconds);
int rawbench_w5_update(const char *path, int64_t n, int64_t *checksum, double *seconds);
int rawbench_w6_exists(const char *path, int64_t n, int64_t *checksum, double *seconds);
int rawbench_w7_count(const char *path, int64_t n, int64_t *checksum, double *seconds);

/// W8: `readers` threads each doing `lookups` lookups (per-call autocommit) while one
/// writer inserts `writes` rows in transactions of `batch`. Reports SQLITE_BUSY errors
/// seen, and each side's elapsed seconds.
int rawbench_w8_concurrent(const char *path, int64_t n, int readers, int64_t lookups, int64_t writes,
                           int64_t batch, int64_t *busy_errors, double *read_seconds,
                           double *write_seconds, int64_t *checksum);

/// The benchmark's id sequence: x = (x * 1103515245 + 12345) % 2^31, id = x % n + 1.
int64_t rawbench_next_id(uint64_t *state, int64_t n);

#endif
