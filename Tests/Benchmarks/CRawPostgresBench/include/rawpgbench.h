#ifndef RAWPGBENCH_H
#define RAWPGBENCH_H
// The raw libpq baseline for SwiftDAL's PostgreSQL benchmarks (workloads of Tests/Benchmarks/README.md,
// "PostgreSQL"): the same work as the Swift harness, one prepared statement per workload
// (PQprepare, then PQexecPrepared for every execution), parameters in text and results in
// binary format (an int8 or float8 read by swapping its bytes, the fastest a libpq client
// reads them), every string of a materialized row copied.
// Each workload function connects with `conninfo` (a libpq keyword string or URI), runs
// the workload alone in the measured region (`rawbench_measured`, `*seconds`; connecting,
// checking and freeing the rows, and closing the connection are outside it, as on the
// Swift side), and returns 0 on success with a checksum of what it read, or -1 with
// libpq's message in `error`.
#include <stdint.h>

/// Where a function writes why it failed (libpq's message, NUL-terminated).
typedef struct rawpg_error {
    char message[512];
} rawpg_error;

/// libpq's version (PQlibVersion: 150018 for 15.18).
int rawpg_library_version(void);

/// The benchmark's id sequence: x = (x * 1103515245 + 12345) % 2^31, id = x % n + 1.
int64_t rawpg_next_id(uint64_t *state, int64_t n);

/// Drops and creates the benchmark table `users` (BIGINT identity key, TEXT, BIGINT,
/// DOUBLE PRECISION, UNIQUE email, index on age) in the first schema of the search path;
/// when `populated`, copies rows 1...n in (COPY, so the identity assigns ids 1...n), then
/// runs VACUUM ANALYZE (hint bits set and statistics taken before any workload reads).
int rawpg_setup(const char *conninfo, int64_t n, int populated, rawpg_error *error);

/// W1: rows 1...n inserted in one transaction, one `INSERT … RETURNING id` round trip
/// each; the checksum is the sum of the returned ids.
int rawpg_w1_insert(const char *conninfo, int64_t n, int64_t *checksum, double *seconds, rawpg_error *error);
/// W1 in libpq's pipeline mode: the same statements and transaction, sent `batch` at a
/// time before their results are read (PQenterPipelineMode, PQpipelineSync per batch).
int rawpg_w1_insert_pipelined(const char *conninfo, int64_t n, int64_t batch, int64_t *checksum, double *seconds,
                              rawpg_error *error);
/// W1B: W1's rows loaded with one `COPY … FROM STDIN` in one transaction; the checksum is
/// the rows loaded.
int rawpg_w1_copy(const char *conninfo, int64_t n, int64_t *checksum, double *seconds, rawpg_error *error);
/// W2: every row into user structs (strings copied), in one read-only transaction.
int rawpg_w2_fetch_all(const char *conninfo, int64_t *checksum, double *seconds, rawpg_error *error);
/// W3 (`transaction` 1: one read-only repeatable-read transaction) and W3a (0: each
/// lookup in autocommit): `count` lookups by key from the id sequence over 1...n.
int rawpg_w3_lookup(const char *conninfo, int64_t n, int64_t count, int transaction, int64_t *checksum,
                    double *seconds, rawpg_error *error);
/// W4: `count` × the first 100 rows with `age = 18 + k % 60` in id order, materialized.
int rawpg_w4_filter(const char *conninfo, int64_t count, int64_t *checksum, double *seconds, rawpg_error *error);
/// W5: `count` updates of `score` by key in one transaction; the checksum counts rows updated.
int rawpg_w5_update(const char *conninfo, int64_t n, int64_t count, int64_t *checksum, double *seconds,
                    rawpg_error *error);
/// W5 in libpq's pipeline mode: the same updates and transaction, sent `batch` at a time
/// before their results are read.
int rawpg_w5_update_pipelined(const char *conninfo, int64_t n, int64_t count, int64_t batch, int64_t *checksum,
                              double *seconds, rawpg_error *error);
/// W6: `count` existence checks on `email`; the checksum counts the ones found.
int rawpg_w6_exists(const char *conninfo, int64_t n, int64_t count, int64_t *checksum, double *seconds,
                    rawpg_error *error);
/// W7: `count` × `COUNT(*) WHERE age = 18 + k % 60`; the checksum is their sum.
int rawpg_w7_count(const char *conninfo, int64_t count, int64_t *checksum, double *seconds, rawpg_error *error);

/// W0: connect, `SELECT COUNT(*) FROM users`, close, all inside the measured region
/// (what a client pays to open a connection and run its first statement).
int rawpg_open_count(const char *conninfo, int64_t *checksum, double *seconds, rawpg_error *error);

/// W8: `readers` threads, each on its own connection, doing `lookups` per-call lookups
/// (autocommit) while one writer thread on its own connection inserts `writes` rows
/// (n+1, n+2, …) in transactions of `batch`. Counts failed statements or transactions
/// (`errors`) and goes on; reports each side's elapsed seconds and the readers'
/// checksum. Returns -1 only when a thread could not start or connect.
int rawpg_w8_concurrent(const char *conninfo, int64_t n, int readers, int64_t lookups, int64_t writes,
                        int64_t batch, int64_t *errors, double *read_seconds, double *write_seconds,
                        int64_t *checksum, rawpg_error *error);

/// The service workload's ceiling: `threads` threads, each on its own connection, each
/// request a lookup by key (a random id of 1...n, materialized) then an insert of a new
/// row (RETURNING its id), both prepared, in autocommit, for `seconds`. Fills `latencies`
/// (microseconds per request, `*recorded` of them, at most `capacity`, in no order) and
/// `*count` with the requests done (all of them, even past `capacity`).
int rawpg_service(const char *conninfo, int64_t n, int64_t first_row, int threads, double seconds, int64_t *latencies,
                  int64_t capacity, int64_t *recorded, int64_t *count, rawpg_error *error);

#endif
