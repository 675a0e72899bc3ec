#ifndef RAWMYBENCH_H
#define RAWMYBENCH_H
// The raw MariaDB Connector/C baseline for SwiftDAL's MariaDB benchmarks (workloads of
// Tests/Benchmarks/README.md, run as the PostgreSQL mode runs them): the same work as the Swift harness,
// the same SQL text and the same transactions as SwiftDAL sends, as the fastest honest C
// over Connector/C does it: server-side prepared statements (mysql_stmt_*), each prepared
// once per workload and executed again and again, parameters bound once (the bound
// variables change between executions), results in the binary protocol read into bound
// buffers (text into fixed buffers, mysql_stmt_fetch_column only for a longer value),
// every string of a materialized row copied.
// Each workload function connects to `target` (the session set as SwiftDAL sets its own:
// utf8mb4_nopad_bin, UTC, the same sql_mode, autocommit), runs the workload alone in the
// measured region (`rawbench_measured`, `*seconds`; connecting, checking and freeing the
// rows, and closing the connection are outside it, as on the Swift side), and returns 0
// on success with a checksum of what it read, or -1 with Connector/C's message in `error`.
#include <stdint.h>

/// Where to connect: `socket` when not NULL (Unix socket), else `host`:`port` (0: 3306).
/// Strings may be NULL (Connector/C's defaults).
typedef struct rawmy_target {
    const char *host;
    const char *user;
    const char *password;
    const char *database;
    const char *socket;
    unsigned int port;
} rawmy_target;

/// Where a function writes why it failed (Connector/C's message, NUL-terminated).
typedef struct rawmy_error {
    char message[512];
} rawmy_error;

/// Connector/C's version (mysql_get_client_info: "3.3.x").
const char *rawmy_library_version(void);

/// The benchmark's id sequence: x = (x * 1103515245 + 12345) % 2^31, id = x % n + 1.
int64_t rawmy_next_id(uint64_t *state, int64_t n);

/// Drops and creates the benchmark table `users` (InnoDB, utf8mb4_nopad_bin: BIGINT
/// AUTO_INCREMENT key, LONGTEXT name and bio, VARCHAR(255) UNIQUE email, BIGINT age,
/// DOUBLE score, index on age) in the target's database; when `populated`, inserts rows
/// 1...n (multi-row INSERTs, so that the keys are 1...n), then runs ANALYZE TABLE.
int rawmy_setup(const rawmy_target *target, int64_t n, int populated, rawmy_error *error);

/// W1: rows 1...n inserted in one transaction, one `INSERT … RETURNING "id"` each; the
/// checksum is the sum of the returned ids.
int rawmy_w1_insert(const rawmy_target *target, int64_t n, int64_t *checksum, double *seconds, rawmy_error *error);
/// W1B: rows 1...n inserted in one transaction as bulk executions of 1,000 rows
/// (`STMT_ATTR_ARRAY_SIZE`, column-wise arrays); the checksum is n.
int rawmy_w1_bulk(const rawmy_target *target, int64_t n, int64_t *checksum, double *seconds, rawmy_error *error);
/// W2: every row into user structs (strings copied), in one read-only transaction.
int rawmy_w2_fetch_all(const rawmy_target *target, int64_t *checksum, double *seconds, rawmy_error *error);
/// W3 (`transaction` 1: one read-only repeatable-read transaction) and W3a (0: each
/// lookup in autocommit): `count` lookups by key from the id sequence over 1...n.
int rawmy_w3_lookup(const rawmy_target *target, int64_t n, int64_t count, int transaction, int64_t *checksum,
                    double *seconds, rawmy_error *error);
/// W4: `count` × the first 100 rows with `age = 18 + k % 60` in id order, materialized.
int rawmy_w4_filter(const rawmy_target *target, int64_t count, int64_t *checksum, double *seconds,
                    rawmy_error *error);
/// W5: `count` updates of `score` by key in one transaction; the checksum counts rows matched.
int rawmy_w5_update(const rawmy_target *target, int64_t n, int64_t count, int64_t *checksum, double *seconds,
                    rawmy_error *error);
/// W6: `count` existence checks on `email`; the checksum counts the ones found.
int rawmy_w6_exists(const rawmy_target *target, int64_t n, int64_t count, int64_t *checksum, double *seconds,
                    rawmy_error *error);
/// W7: `count` × `COUNT(*) WHERE age = 18 + k % 60`; the checksum is their sum.
int rawmy_w7_count(const rawmy_target *target, int64_t count, int64_t *checksum, double *seconds,
                   rawmy_error *error);

/// W8: `readers` threads, each on its own connection, doing `lookups` per-call lookups
/// (autocommit) while one writer thread on its own connection inserts `writes` rows
/// (n+1, n+2, …) in transactions of `batch`. Counts failed statements or transactions
/// (`errors`) and goes on; reports each side's elapsed seconds and the readers'
/// checksum. Returns -1 only when a thread could not start or connect.
int rawmy_w8_concurrent(const rawmy_target *target, int64_t n, int readers, int64_t lookups, int64_t writes,
                        int64_t batch, int64_t *errors, double *read_seconds, double *write_seconds,
                        int64_t *checksum, rawmy_error *error);

#endif
