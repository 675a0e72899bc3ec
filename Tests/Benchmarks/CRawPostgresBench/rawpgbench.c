// Raw libpq baseline for SwiftDAL's PostgreSQL benchmarks. See include/rawpgbench.h.
// Every PGresult is checked and cleared; every connection is finished.
#define _POSIX_C_SOURCE 200809L  // clock_gettime
#include "rawpgbench.h"

#include "rawbench.h"  // rawbench_measured: the region every implementation is timed and counted in

#include <libpq-fe.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// MARK: Errors and connections

static void set_error(rawpg_error *error, const char *format, ...) {
    if (error == NULL) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error->message, sizeof error->message, format, arguments);
    va_end(arguments);
    size_t length = strlen(error->message);
    while (length > 0 && (error->message[length - 1] == '\n' || error->message[length - 1] == ' ')) {
        error->message[--length] = '\0';
    }
}

/// Records why `what` failed (the result's message, else the connection's), clears
/// `result` (which may be NULL) and returns -1.
static int fail(PGconn *conn, PGresult *result, const char *what, rawpg_error *error) {
    const char *message = result != NULL ? PQresultErrorMessage(result) : "";
    if (message == NULL || *message == '\0') message = conn != NULL ? PQerrorMessage(conn) : "out of memory";
    if (message == NULL || *message == '\0') {
        message = result != NULL ? PQresStatus(PQresultStatus(result)) : "no result (out of memory?)";
    }
    set_error(error, "%s: %s", what, message);
    PQclear(result);
    return -1;
}

static void ignore_notice(void *argument, const PGresult *result) {
    (void)argument;
    (void)result;
}

static int connect_db(const char *conninfo, PGconn **out, rawpg_error *error) {
    PGconn *conn = PQconnectdb(conninfo);
    if (conn == NULL) {
        set_error(error, "cannot connect: out of memory");
        return -1;
    }
    if (PQstatus(conn) != CONNECTION_OK) {
        set_error(error, "cannot connect: %s", PQerrorMessage(conn));
        PQfinish(conn);
        return -1;
    }
    PQsetNoticeReceiver(conn, ignore_notice, NULL);
    *out = conn;
    return 0;
}

/// Runs `sql` (simple query protocol; several statements allowed), expecting no rows.
static int command(PGconn *conn, const char *sql, rawpg_error *error) {
    PGresult *result = PQexec(conn, sql);
    if (result == NULL || PQresultStatus(result) != PGRES_COMMAND_OK) return fail(conn, result, sql, error);
    PQclear(result);
    return 0;
}

static int prepare(PGconn *conn, const char *name, const char *sql, int parameters, rawpg_error *error) {
    PGresult *result = PQprepare(conn, name, sql, parameters, NULL);
    if (result == NULL || PQresultStatus(result) != PGRES_COMMAND_OK) return fail(conn, result, sql, error);
    PQclear(result);
    return 0;
}

/// Results come back in binary (resultFormat 1): an int8 or a float8 is 8 bytes to swap,
/// not text to parse, the fastest a libpq client reads them.
#define BINARY_RESULTS 1

/// Executes the prepared statement `name` (text parameters, binary results); returns the
/// result when its status is `expected`, else NULL with `error` set.
static PGresult *execute(PGconn *conn, const char *name, int count, const char *const *values,
                         ExecStatusType expected, rawpg_error *error) {
    PGresult *result = PQexecPrepared(conn, name, count, values, NULL, NULL, BINARY_RESULTS);
    if (result == NULL || PQresultStatus(result) != expected) {
        fail(conn, result, name, error);
        return NULL;
    }
    return result;
}

/// A binary int2, int4 or int8 value (network byte order).
static int64_t integer_value(const PGresult *result, int row, int column) {
    const unsigned char *bytes = (const unsigned char *)PQgetvalue(result, row, column);
    int length = PQgetlength(result, row, column);
    uint64_t value = 0;
    for (int i = 0; i < length; i++) value = value << 8 | bytes[i];
    if (length == 8) return (int64_t)value;
    if (length == 4) return (int32_t)(uint32_t)value;
    return (int16_t)(uint16_t)value;
}

/// A binary float8 value (network byte order).
static double double_value(const PGresult *result, int row, int column) {
    uint64_t bits;
    memcpy(&bits, PQgetvalue(result, row, column), sizeof bits);
    bits = __builtin_bswap64(bits);
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

int rawpg_library_version(void) { return PQlibVersion(); }

int64_t rawpg_next_id(uint64_t *state, int64_t n) {
    *state = (*state * 1103515245ULL + 12345ULL) % 2147483648ULL;
    return (int64_t)(*state % (uint64_t)n) + 1;
}

// MARK: Rows

/// Row i's values as text parameters $1-$5 (name, email, age, score, bio; bio NULL when i % 3 == 0).
typedef struct {
    char name[32];
    char email[64];
    char age[24];
    char score[40];
    char bio[48];
    const char *values[5];
} row_parameters;

static void fill_row(row_parameters *row, int64_t i) {
    snprintf(row->name, sizeof row->name, "user%lld", (long long)i);
    snprintf(row->email, sizeof row->email, "user%lld@example.com", (long long)i);
    snprintf(row->age, sizeof row->age, "%lld", (long long)(18 + i % 60));
    snprintf(row->score, sizeof row->score, "%.17g", (double)i * 0.5);
    row->values[0] = row->name;
    row->values[1] = row->email;
    row->values[2] = row->age;
    row->values[3] = row->score;
    if (i % 3 == 0) {
        row->values[4] = NULL;
    } else {
        snprintf(row->bio, sizeof row->bio, "bio of user %lld", (long long)i);
        row->values[4] = row->bio;
    }
}

/// A user materialized in C: strings copied.
typedef struct {
    int64_t id;
    char *name;
    char *email;
    int64_t age;
    double score;
    char *bio;
} user_t;

/// A copy of a text value (NULL for SQL NULL); sets `*failed` when out of memory.
static char *copy_text(const PGresult *result, int row, int column, int *failed) {
    if (PQgetisnull(result, row, column)) return NULL;
    size_t length = (size_t)PQgetlength(result, row, column);
    char *copy = malloc(length + 1);
    if (copy == NULL) {
        *failed = 1;
        return NULL;
    }
    memcpy(copy, PQgetvalue(result, row, column), length + 1);  // libpq NUL-terminates values, binary too
    return copy;
}

static void free_user(user_t *user) {
    free(user->name);
    free(user->email);
    free(user->bio);
}

/// Reads row `row` of a `SELECT id, name, email, age, score, bio` result.
static int read_user(const PGresult *result, int row, user_t *user, rawpg_error *error) {
    int failed = 0;
    user->id = integer_value(result, row, 0);
    user->name = copy_text(result, row, 1, &failed);
    user->email = copy_text(result, row, 2, &failed);
    user->age = integer_value(result, row, 3);
    user->score = double_value(result, row, 4);
    user->bio = copy_text(result, row, 5, &failed);
    if (failed || user->name == NULL || user->email == NULL) {
        free_user(user);
        set_error(error, failed ? "out of memory copying a row" : "a NOT NULL column read NULL");
        return -1;
    }
    return 0;
}

static int64_t user_checksum(const user_t *user) {
    return user->id + (int64_t)strlen(user->name) + (int64_t)strlen(user->email) +
           (user->bio ? (int64_t)strlen(user->bio) : 0);
}

// The statements, as SwiftDAL's BaseDAL writes them (same text for the server to plan,
// quoting aside): the same plans on both sides.
#define SELECT_USER "SELECT id, name, email, age, score, bio FROM users"
#define INSERT_USER "INSERT INTO users(name, email, age, score, bio) VALUES ($1, $2, $3, $4, $5) RETURNING id"
#define BEGIN_READ "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

// MARK: Setup

static const char *SCHEMA =
    "DROP TABLE IF EXISTS users;"
    "CREATE TABLE users(id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name TEXT NOT NULL,"
    " email TEXT NOT NULL UNIQUE, age BIGINT NOT NULL, score DOUBLE PRECISION NOT NULL, bio TEXT);"
    "CREATE INDEX users_age ON users(age);";

/// Rows 1...n through COPY (text format: tab-separated, \N for NULL).
static int copy_rows(PGconn *conn, int64_t n, rawpg_error *error) {
    PGresult *result = PQexec(conn, "COPY users(name, email, age, score, bio) FROM STDIN");
    if (result == NULL || PQresultStatus(result) != PGRES_COPY_IN) return fail(conn, result, "COPY", error);
    PQclear(result);
    char buffer[65536];
    size_t used = 0;
    for (int64_t i = 1; i <= n; i++) {
        row_parameters row;
        fill_row(&row, i);
        char line[256];
        int length = snprintf(line, sizeof line, "%s\t%s\t%s\t%s\t%s\n", row.name, row.email, row.age, row.score,
                              row.values[4] != NULL ? row.bio : "\\N");
        if (length < 0 || (size_t)length >= sizeof line) {
            set_error(error, "row %lld does not fit the COPY line buffer", (long long)i);
            return -1;
        }
        if (used + (size_t)length > sizeof buffer) {
            if (PQputCopyData(conn, buffer, (int)used) != 1) return fail(conn, NULL, "PQputCopyData", error);
            used = 0;
        }
        memcpy(buffer + used, line, (size_t)length);
        used += (size_t)length;
    }
    if (used > 0 && PQputCopyData(conn, buffer, (int)used) != 1) return fail(conn, NULL, "PQputCopyData", error);
    if (PQputCopyEnd(conn, NULL) != 1) return fail(conn, NULL, "PQputCopyEnd", error);
    result = PQgetResult(conn);
    if (result == NULL || PQresultStatus(result) != PGRES_COMMAND_OK) return fail(conn, result, "COPY", error);
    PQclear(result);
    result = PQgetResult(conn);
    if (result != NULL) return fail(conn, result, "COPY (a second result)", error);
    return 0;
}

int rawpg_setup(const char *conninfo, int64_t n, int populated, rawpg_error *error) {
    PGconn *conn;
    if (connect_db(conninfo, &conn, error) != 0) return -1;
    int rc = command(conn, SCHEMA, error);
    if (rc == 0 && populated) rc = copy_rows(conn, n, error);
    // Outside a transaction (VACUUM cannot run in one): every page's hint bits set and
    // the planner's statistics taken, so that no implementation's run pays for them.
    if (rc == 0 && populated) rc = command(conn, "VACUUM ANALYZE users", error);
    PQfinish(conn);
    return rc;
}

// MARK: Workloads

static int w1_insert(PGconn *conn, int64_t n, int64_t *checksum, rawpg_error *error) {
    if (command(conn, "BEGIN", error) != 0) return -1;
    if (prepare(conn, "w1", INSERT_USER, 5, error) != 0) return -1;
    for (int64_t i = 1; i <= n; i++) {
        row_parameters row;
        fill_row(&row, i);
        PGresult *result = execute(conn, "w1", 5, row.values, PGRES_TUPLES_OK, error);
        if (result == NULL) return -1;
        if (PQntuples(result) != 1) return fail(conn, result, "INSERT … RETURNING returned no row", error);
        *checksum += integer_value(result, 0, 0);
        PQclear(result);
    }
    return command(conn, "COMMIT", error);
}


/// Reads the results of `count` pipelined inserts and the sync that ends them.
static int read_pipelined_inserts(PGconn *conn, int64_t count, int64_t *checksum, rawpg_error *error) {
    for (int64_t k = 0; k < count; k++) {
        PGresult *result = PQgetResult(conn);
        if (result == NULL || PQresultStatus(result) != PGRES_TUPLES_OK) {
            return fail(conn, result, "pipelined INSERT", error);
        }
        if (PQntuples(result) != 1) return fail(conn, result, "INSERT … RETURNING returned no row", error);
        *checksum += integer_value(result, 0, 0);
        PQclear(result);
        result = PQgetResult(conn);  // NULL: the end of this statement's results
        if (result != NULL) return fail(conn, result, "pipelined INSERT (an extra result)", error);
    }
    PGresult *result = PQgetResult(conn);
    if (result == NULL || PQresultStatus(result) != PGRES_PIPELINE_SYNC) {
        return fail(conn, result, "PQpipelineSync", error);
    }
    PQclear(result);
    return 0;
}

static int w1_insert_pipelined(PGconn *conn, int64_t n, int64_t batch, int64_t *checksum, rawpg_error *error) {
    if (batch < 1) {
        set_error(error, "the pipeline batch must be at least 1");
        return -1;
    }
    if (command(conn, "BEGIN", error) != 0) return -1;
    if (prepare(conn, "w1", INSERT_USER, 5, error) != 0) return -1;
    if (PQenterPipelineMode(conn) != 1) return fail(conn, NULL, "PQenterPipelineMode", error);
    // A batch's statements are all sent (libpq flushes its buffer as it fills) before its
    // results are read: batches keep what the server sends back within the socket's
    // buffer, so that neither side blocks on a full buffer while the other writes.
    for (int64_t first = 1; first <= n; first += batch) {
        int64_t count = n - first + 1 < batch ? n - first + 1 : batch;
        for (int64_t i = first; i < first + count; i++) {
            row_parameters row;
            fill_row(&row, i);
            if (PQsendQueryPrepared(conn, "w1", 5, row.values, NULL, NULL, BINARY_RESULTS) != 1) {
                return fail(conn, NULL, "PQsendQueryPrepared", error);
            }
        }
        if (PQpipelineSync(conn) != 1) return fail(conn, NULL, "PQpipelineSync", error);
        if (read_pipelined_inserts(conn, count, checksum, error) != 0) return -1;
    }
    if (PQexitPipelineMode(conn) != 1) return fail(conn, NULL, "PQexitPipelineMode", error);
    return command(conn, "COMMIT", error);
}


/// W1 through `COPY … FROM STDIN` (text format): the same rows, streamed 64 KiB at a time
/// in one statement; no escaping, since none of these values holds a tab, a newline or a
/// backslash. The checksum is the rows the COPY reports.
static int w1_copy(PGconn *conn, int64_t n, int64_t *checksum, rawpg_error *error) {
    if (command(conn, "BEGIN", error) != 0) return -1;
    PGresult *start = PQexec(conn, "COPY users(name, email, age, score, bio) FROM STDIN");
    if (start == NULL || PQresultStatus(start) != PGRES_COPY_IN) return fail(conn, start, "COPY", error);
    PQclear(start);
    enum { CHUNK = 1 << 16 };
    static char buffer[CHUNK + 512];
    size_t used = 0;
    for (int64_t i = 1; i <= n; i++) {
        row_parameters row;
        fill_row(&row, i);
        int written = snprintf(buffer + used, sizeof buffer - used, "%s\t%s\t%s\t%s\t%s\n", row.values[0],
                               row.values[1], row.values[2], row.values[3],
                               row.values[4] == NULL ? "\\N" : row.values[4]);
        if (written < 0) return fail(conn, NULL, "formatting a COPY row", error);
        used += (size_t)written;
        if (used >= CHUNK) {
            if (PQputCopyData(conn, buffer, (int)used) != 1) return fail(conn, NULL, "PQputCopyData", error);
            used = 0;
        }
    }
    if (used > 0 && PQputCopyData(conn, buffer, (int)used) != 1) return fail(conn, NULL, "PQputCopyData", error);
    if (PQputCopyEnd(conn, NULL) != 1) return fail(conn, NULL, "PQputCopyEnd", error);
    PGresult *result = PQgetResult(conn);
    if (result == NULL || PQresultStatus(result) != PGRES_COMMAND_OK) return fail(conn, result, "COPY", error);
    *checksum += strtoll(PQcmdTuples(result), NULL, 10);
    PQclear(result);
    result = PQgetResult(conn);
    if (result != NULL) return fail(conn, result, "COPY (an extra result)", error);
    return command(conn, "COMMIT", error);
}

/// W2's rows, handed out of the measured region to be checked and freed after it.
typedef struct {
    user_t *items;
    int count;
} user_list;

static int w2_fetch_all(PGconn *conn, user_list *users, rawpg_error *error) {
    if (command(conn, BEGIN_READ, error) != 0) return -1;
    if (prepare(conn, "w2", SELECT_USER " ORDER BY id ASC", 0, error) != 0) return -1;
    PGresult *result = execute(conn, "w2", 0, NULL, PGRES_TUPLES_OK, error);
    if (result == NULL) return -1;
    int count = PQntuples(result);
    users->items = malloc(((size_t)count + 1) * sizeof(user_t));
    if (users->items == NULL) return fail(conn, result, "out of memory", error);
    for (users->count = 0; users->count < count; users->count++) {
        if (read_user(result, users->count, &users->items[users->count], error) != 0) {
            PQclear(result);
            return -1;
        }
    }
    PQclear(result);
    return command(conn, "COMMIT", error);
}

/// `count` lookups by key; with `errors`, a failed lookup is counted and the next one
/// runs (W8), else the first failure returns -1.
static int lookups(PGconn *conn, int64_t n, int64_t count, uint64_t seed, int64_t *checksum, int64_t *errors,
                   rawpg_error *error) {
    if (prepare(conn, "w3", SELECT_USER " WHERE id = $1", 1, error) != 0) return -1;
    uint64_t state = seed;
    char id[24];
    const char *values[1] = {id};
    for (int64_t k = 0; k < count; k++) {
        snprintf(id, sizeof id, "%lld", (long long)rawpg_next_id(&state, n));
        PGresult *result = execute(conn, "w3", 1, values, PGRES_TUPLES_OK, error);
        if (result == NULL) {
            if (errors == NULL) return -1;
            *errors += 1;
            continue;
        }
        if (PQntuples(result) == 1) {
            user_t user;
            if (read_user(result, 0, &user, error) != 0) {
                PQclear(result);
                if (errors == NULL) return -1;
                *errors += 1;
                continue;
            }
            *checksum += user.id + (int64_t)strlen(user.name);
            free_user(&user);
        }
        PQclear(result);
    }
    return 0;
}


static int w4_filter(PGconn *conn, int64_t count, int64_t *checksum, rawpg_error *error) {
    if (command(conn, BEGIN_READ, error) != 0) return -1;
    // LIMIT bound as a parameter, as BaseDAL's findTop binds it.
    if (prepare(conn, "w4", SELECT_USER " WHERE (age = $1) ORDER BY id ASC LIMIT $2", 2, error) != 0) return -1;
    char age[24];
    const char *values[2] = {age, "100"};
    for (int64_t k = 0; k < count; k++) {
        snprintf(age, sizeof age, "%lld", (long long)(18 + k % 60));
        PGresult *result = execute(conn, "w4", 2, values, PGRES_TUPLES_OK, error);
        if (result == NULL) return -1;
        int rows = PQntuples(result);
        for (int row = 0; row < rows; row++) {
            user_t user;
            if (read_user(result, row, &user, error) != 0) {
                PQclear(result);
                return -1;
            }
            *checksum += user.id;
            free_user(&user);
        }
        PQclear(result);
    }
    return command(conn, "COMMIT", error);
}


static int w5_update(PGconn *conn, int64_t n, int64_t count, int64_t *checksum, rawpg_error *error) {
    if (command(conn, "BEGIN", error) != 0) return -1;
    if (prepare(conn, "w5", "UPDATE users SET score = $1 WHERE id = $2", 2, error) != 0) return -1;
    uint64_t state = 42;
    char score[40], id[24];
    const char *values[2] = {score, id};
    for (int64_t k = 0; k < count; k++) {
        snprintf(score, sizeof score, "%.17g", (double)k * 0.25);
        snprintf(id, sizeof id, "%lld", (long long)rawpg_next_id(&state, n));
        PGresult *result = execute(conn, "w5", 2, values, PGRES_COMMAND_OK, error);
        if (result == NULL) return -1;
        *checksum += strtoll(PQcmdTuples(result), NULL, 10);
        PQclear(result);
    }
    return command(conn, "COMMIT", error);
}


/// Reads the results of `count` pipelined updates (adding the rows each changed to
/// `checksum`) and the sync that ends them.
static int read_pipelined_updates(PGconn *conn, int64_t count, int64_t *checksum, rawpg_error *error) {
    for (int64_t k = 0; k < count; k++) {
        PGresult *result = PQgetResult(conn);
        if (result == NULL || PQresultStatus(result) != PGRES_COMMAND_OK) {
            return fail(conn, result, "pipelined UPDATE", error);
        }
        *checksum += strtoll(PQcmdTuples(result), NULL, 10);
        PQclear(result);
        result = PQgetResult(conn);  // NULL: the end of this statement's results
        if (result != NULL) return fail(conn, result, "pipelined UPDATE (an extra result)", error);
    }
    PGresult *result = PQgetResult(conn);
    if (result == NULL || PQresultStatus(result) != PGRES_PIPELINE_SYNC) {
        return fail(conn, result, "PQpipelineSync", error);
    }
    PQclear(result);
    return 0;
}

/// W5 in pipeline mode: the same updates and transaction, `batch` sent before their
/// results are read.
static int w5_update_pipelined(PGconn *conn, int64_t n, int64_t count, int64_t batch, int64_t *checksum,
                               rawpg_error *error) {
    if (batch < 1) {
        set_error(error, "the pipeline batch must be at least 1");
        return -1;
    }
    if (command(conn, "BEGIN", error) != 0) return -1;
    if (prepare(conn, "w5", "UPDATE users SET score = $1 WHERE id = $2", 2, error) != 0) return -1;
    if (PQenterPipelineMode(conn) != 1) return fail(conn, NULL, "PQenterPipelineMode", error);
    uint64_t state = 42;
    char score[40], id[24];
    const char *values[2] = {score, id};
    for (int64_t first = 0; first < count; first += batch) {
        int64_t sent = count - first < batch ? count - first : batch;
        for (int64_t k = first; k < first + sent; k++) {
            snprintf(score, sizeof score, "%.17g", (double)k * 0.25);
            snprintf(id, sizeof id, "%lld", (long long)rawpg_next_id(&state, n));
            if (PQsendQueryPrepared(conn, "w5", 2, values, NULL, NULL, BINARY_RESULTS) != 1) {
                return fail(conn, NULL, "PQsendQueryPrepared", error);
            }
        }
        if (PQpipelineSync(conn) != 1) return fail(conn, NULL, "PQpipelineSync", error);
        if (read_pipelined_updates(conn, sent, checksum, error) != 0) return -1;
    }
    if (PQexitPipelineMode(conn) != 1) return fail(conn, NULL, "PQexitPipelineMode", error);
    return command(conn, "COMMIT", error);
}

static int w6_exists(PGconn *conn, int64_t n, int64_t count, int64_t *checksum, rawpg_error *error) {
    if (command(conn, BEGIN_READ, error) != 0) return -1;
    if (prepare(conn, "w6", "SELECT EXISTS(SELECT 1 FROM users WHERE email = $1)", 1, error) != 0) return -1;
    uint64_t state = 42;
    char email[64];
    const char *values[1] = {email};
    for (int64_t k = 0; k < count; k++) {
        int64_t id = rawpg_next_id(&state, n);
        if (k % 2 == 1) {
            snprintf(email, sizeof email, "user%lld@example.com", (long long)id);
        } else {
            snprintf(email, sizeof email, "nobody%lld@example.com", (long long)id);
        }
        PGresult *result = execute(conn, "w6", 1, values, PGRES_TUPLES_OK, error);
        if (result == NULL) return -1;
        if (PQntuples(result) != 1) return fail(conn, result, "EXISTS returned no row", error);
        if (PQgetvalue(result, 0, 0)[0] == 1) *checksum += 1;  // a binary bool: one byte, 0 or 1
        PQclear(result);
    }
    return command(conn, "COMMIT", error);
}


static int w7_count(PGconn *conn, int64_t count, int64_t *checksum, rawpg_error *error) {
    if (command(conn, BEGIN_READ, error) != 0) return -1;
    if (prepare(conn, "w7", "SELECT COUNT(*) FROM users WHERE (age = $1)", 1, error) != 0) return -1;
    char age[24];
    const char *values[1] = {age};
    for (int64_t k = 0; k < count; k++) {
        snprintf(age, sizeof age, "%lld", (long long)(18 + k % 60));
        PGresult *result = execute(conn, "w7", 1, values, PGRES_TUPLES_OK, error);
        if (result == NULL) return -1;
        if (PQntuples(result) != 1) return fail(conn, result, "COUNT returned no row", error);
        *checksum += integer_value(result, 0, 0);
        PQclear(result);
    }
    return command(conn, "COMMIT", error);
}


// MARK: Measured workloads

/// A workload run in the measured region: its connection, inputs and outputs.
typedef struct {
    char which;  // '1' W1, 'p' W1 pipelined, 'c' W1 by COPY, '2' … '7', 'u' W5 pipelined
    const char *conninfo;
    PGconn *conn;
    int64_t n, count, batch;
    int transaction;
    int64_t checksum;
    user_list users;
    rawpg_error *error;
    int rc;
} pg_job;

static void pg_body(void *context) {
    pg_job *job = context;
    switch (job->which) {
    case '1': job->rc = w1_insert(job->conn, job->n, &job->checksum, job->error); break;
    case 'p': job->rc = w1_insert_pipelined(job->conn, job->n, job->batch, &job->checksum, job->error); break;
    case 'c': job->rc = w1_copy(job->conn, job->n, &job->checksum, job->error); break;
    case '2': job->rc = w2_fetch_all(job->conn, &job->users, job->error); break;
    case '3':
        job->rc = job->transaction ? command(job->conn, BEGIN_READ, job->error) : 0;
        if (job->rc == 0) job->rc = lookups(job->conn, job->n, job->count, 42, &job->checksum, NULL, job->error);
        if (job->rc == 0 && job->transaction) job->rc = command(job->conn, "COMMIT", job->error);
        break;
    case '4': job->rc = w4_filter(job->conn, job->count, &job->checksum, job->error); break;
    case '5': job->rc = w5_update(job->conn, job->n, job->count, &job->checksum, job->error); break;
    case 'u':
        job->rc = w5_update_pipelined(job->conn, job->n, job->count, job->batch, &job->checksum, job->error);
        break;
    case '6': job->rc = w6_exists(job->conn, job->n, job->count, &job->checksum, job->error); break;
    case '7': job->rc = w7_count(job->conn, job->count, &job->checksum, job->error); break;
    default:
        job->rc = -1;
        set_error(job->error, "no workload %c", job->which);
    }
}

/// Connects, runs `job` as the measured region (rawbench_measured: the workload alone),
/// then checks and frees what it returned and closes the connection, outside it.
static int run_measured(const char *conninfo, pg_job *job, int64_t *checksum, double *seconds) {
    *checksum = 0;
    *seconds = 0;
    if (connect_db(conninfo, &job->conn, job->error) != 0) return -1;
    *seconds = rawbench_measured(pg_body, job);
    *checksum = job->checksum;
    for (int i = 0; i < job->users.count; i++) {
        *checksum += user_checksum(&job->users.items[i]);
        free_user(&job->users.items[i]);
    }
    free(job->users.items);
    PQfinish(job->conn);
    return job->rc;
}

int rawpg_w1_insert(const char *conninfo, int64_t n, int64_t *checksum, double *seconds, rawpg_error *error) {
    pg_job job = {.which = '1', .n = n, .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

int rawpg_w1_insert_pipelined(const char *conninfo, int64_t n, int64_t batch, int64_t *checksum, double *seconds,
                              rawpg_error *error) {
    pg_job job = {.which = 'p', .n = n, .batch = batch, .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

int rawpg_w1_copy(const char *conninfo, int64_t n, int64_t *checksum, double *seconds, rawpg_error *error) {
    pg_job job = {.which = 'c', .n = n, .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

int rawpg_w2_fetch_all(const char *conninfo, int64_t *checksum, double *seconds, rawpg_error *error) {
    pg_job job = {.which = '2', .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

int rawpg_w3_lookup(const char *conninfo, int64_t n, int64_t count, int transaction, int64_t *checksum,
                    double *seconds, rawpg_error *error) {
    pg_job job = {.which = '3', .n = n, .count = count, .transaction = transaction, .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

int rawpg_w4_filter(const char *conninfo, int64_t count, int64_t *checksum, double *seconds, rawpg_error *error) {
    pg_job job = {.which = '4', .count = count, .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

int rawpg_w5_update(const char *conninfo, int64_t n, int64_t count, int64_t *checksum, double *seconds,
                    rawpg_error *error) {
    pg_job job = {.which = '5', .n = n, .count = count, .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

int rawpg_w5_update_pipelined(const char *conninfo, int64_t n, int64_t count, int64_t batch, int64_t *checksum,
                              double *seconds, rawpg_error *error) {
    pg_job job = {.which = 'u', .n = n, .count = count, .batch = batch, .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

int rawpg_w6_exists(const char *conninfo, int64_t n, int64_t count, int64_t *checksum, double *seconds,
                    rawpg_error *error) {
    pg_job job = {.which = '6', .n = n, .count = count, .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

int rawpg_w7_count(const char *conninfo, int64_t count, int64_t *checksum, double *seconds, rawpg_error *error) {
    pg_job job = {.which = '7', .count = count, .error = error};
    return run_measured(conninfo, &job, checksum, seconds);
}

/// W0's body: connect, count the rows (one prepared statement, a binary result), close,
/// all inside the measured region: what opening a connection costs a client.
static void open_count_body(void *context) {
    pg_job *job = context;
    job->rc = connect_db(job->conninfo, &job->conn, job->error);
    if (job->rc != 0) return;
    job->rc = prepare(job->conn, "w0", "SELECT COUNT(*) FROM users", 0, job->error);
    if (job->rc == 0) {
        PGresult *result = execute(job->conn, "w0", 0, NULL, PGRES_TUPLES_OK, job->error);
        if (result == NULL) {
            job->rc = -1;
        } else {
            job->checksum = integer_value(result, 0, 0);
            PQclear(result);
        }
    }
    PQfinish(job->conn);
}

int rawpg_open_count(const char *conninfo, int64_t *checksum, double *seconds, rawpg_error *error) {
    pg_job job = {.conninfo = conninfo, .error = error};
    *seconds = rawbench_measured(open_count_body, &job);
    *checksum = job.checksum;
    return job.rc;
}

// MARK: W8

typedef struct {
    const char *conninfo;
    int64_t n;
    int64_t count;
    uint64_t seed;
    int64_t batch;
    int64_t checksum;
    int64_t errors;
    int rc;  // -1 when the thread could not connect or prepare
    rawpg_error error;
} worker_t;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *reader_main(void *argument) {
    worker_t *worker = argument;
    PGconn *conn;
    worker->rc = connect_db(worker->conninfo, &conn, &worker->error);
    if (worker->rc != 0) return NULL;
    worker->rc = lookups(conn, worker->n, worker->count, worker->seed, &worker->checksum, &worker->errors,
                         &worker->error);
    PQfinish(conn);
    return NULL;
}

/// One transaction of `count` inserts from row `first`; -1 on the first failure.
static int insert_batch(PGconn *conn, int64_t first, int64_t count, rawpg_error *error) {
    if (command(conn, "BEGIN", error) != 0) return -1;
    for (int64_t i = first; i < first + count; i++) {
        row_parameters row;
        fill_row(&row, i);
        PGresult *result = execute(conn, "w8", 5, row.values, PGRES_TUPLES_OK, error);
        if (result == NULL) return -1;
        PQclear(result);
    }
    return command(conn, "COMMIT", error);
}

static void *writer_main(void *argument) {
    worker_t *worker = argument;
    PGconn *conn;
    worker->rc = connect_db(worker->conninfo, &conn, &worker->error);
    if (worker->rc != 0) return NULL;
    worker->rc = prepare(conn, "w8", INSERT_USER, 5, &worker->error);
    for (int64_t first = 0; worker->rc == 0 && first < worker->count; first += worker->batch) {
        int64_t count = worker->count - first < worker->batch ? worker->count - first : worker->batch;
        if (insert_batch(conn, worker->n + 1 + first, count, &worker->error) != 0) {
            worker->errors += 1;
            rawpg_error ignored;
            if (command(conn, "ROLLBACK", &ignored) != 0 && PQstatus(conn) != CONNECTION_OK) worker->rc = -1;
        }
    }
    PQfinish(conn);
    return NULL;
}

int rawpg_w8_concurrent(const char *conninfo, int64_t n, int readers, int64_t lookups_per_reader, int64_t writes,
                        int64_t batch, int64_t *errors, double *read_seconds, double *write_seconds,
                        int64_t *checksum, rawpg_error *error) {
    pthread_t threads[64];
    worker_t workers[64];
    *errors = 0;
    *checksum = 0;
    if (readers < 1 || readers > 63 || batch < 1) {
        set_error(error, "W8 needs 1 to 63 readers and a batch of at least 1");
        return -1;
    }
    memset(workers, 0, sizeof workers);
    double start = now_seconds();
    workers[0] = (worker_t){.conninfo = conninfo, .n = n, .count = writes, .batch = batch};
    int started = 0;
    if (pthread_create(&threads[0], NULL, writer_main, &workers[0]) != 0) {
        set_error(error, "cannot start the writer thread");
        return -1;
    }
    for (started = 1; started <= readers; started++) {
        workers[started] = (worker_t){.conninfo = conninfo, .n = n, .count = lookups_per_reader,
                                      .seed = (uint64_t)(42 + started - 1)};
        if (pthread_create(&threads[started], NULL, reader_main, &workers[started]) != 0) break;
    }
    pthread_join(threads[0], NULL);
    *write_seconds = now_seconds() - start;
    for (int r = 1; r < started; r++) pthread_join(threads[r], NULL);
    *read_seconds = now_seconds() - start;
    if (started <= readers) {
        set_error(error, "cannot start reader thread %d", started);
        return -1;
    }
    int rc = 0;
    for (int r = 0; r <= readers; r++) {
        *errors += workers[r].errors;
        if (r > 0) *checksum += workers[r].checksum;
        if (workers[r].rc != 0 && rc == 0) {
            set_error(error, "%s thread: %s", r == 0 ? "writer" : "reader", workers[r].error.message);
            rc = -1;
        }
    }
    return rc;
}

// MARK: The service workload's ceiling

typedef struct {
    const char *conninfo;
    int64_t n;
    int64_t first_row;
    int index;
    double end;
    int64_t *latencies;  // this thread's share of the caller's buffer
    int64_t capacity;
    int64_t count;
    int rc;
    rawpg_error error;
} service_worker_t;

static void *service_main(void *argument) {
    service_worker_t *worker = argument;
    PGconn *conn;
    worker->rc = connect_db(worker->conninfo, &conn, &worker->error);
    if (worker->rc != 0) return NULL;
    if (prepare(conn, "lookup", SELECT_USER " WHERE id = $1", 1, &worker->error) != 0 ||
        prepare(conn, "insert", INSERT_USER, 5, &worker->error) != 0) {
        worker->rc = -1;
        PQfinish(conn);
        return NULL;
    }
    uint64_t state = 42 + (uint64_t)worker->index;
    char id[24];
    const char *values[1] = {id};
    while (now_seconds() < worker->end) {
        double start = now_seconds();
        snprintf(id, sizeof id, "%lld", (long long)rawpg_next_id(&state, worker->n));
        PGresult *result = execute(conn, "lookup", 1, values, PGRES_TUPLES_OK, &worker->error);
        if (result == NULL) {
            worker->rc = -1;
            break;
        }
        if (PQntuples(result) == 1) {
            user_t user;
            if (read_user(result, 0, &user, &worker->error) != 0) {
                PQclear(result);
                worker->rc = -1;
                break;
            }
            free_user(&user);
        }
        PQclear(result);
        // A new row of its own: numbered past the table's, apart for each thread.
        row_parameters row;
        fill_row(&row, worker->first_row + (int64_t)worker->index * 100000000 + worker->count);
        result = execute(conn, "insert", 5, row.values, PGRES_TUPLES_OK, &worker->error);
        if (result == NULL) {
            worker->rc = -1;
            break;
        }
        PQclear(result);
        if (worker->count < worker->capacity) {
            worker->latencies[worker->count] = (int64_t)((now_seconds() - start) * 1e6);
        }
        worker->count += 1;
    }
    PQfinish(conn);
    return NULL;
}

int rawpg_service(const char *conninfo, int64_t n, int64_t first_row, int threads, double seconds, int64_t *latencies,
                  int64_t capacity, int64_t *recorded, int64_t *count, rawpg_error *error) {
    pthread_t handles[64];
    service_worker_t workers[64];
    *count = 0;
    *recorded = 0;
    if (threads < 1 || threads > 64) {
        set_error(error, "the service ceiling needs 1 to 64 threads");
        return -1;
    }
    memset(workers, 0, sizeof workers);
    double end = now_seconds() + seconds;
    int64_t share = capacity / threads;
    int started = 0;
    for (; started < threads; started++) {
        workers[started] = (service_worker_t){.conninfo = conninfo, .n = n, .first_row = first_row, .index = started,
                                              .end = end,
                                              .latencies = latencies + share * started, .capacity = share};
        if (pthread_create(&handles[started], NULL, service_main, &workers[started]) != 0) break;
    }
    for (int t = 0; t < started; t++) pthread_join(handles[t], NULL);
    if (started < threads) {
        set_error(error, "cannot start thread %d", started);
        return -1;
    }
    // The latencies recorded, packed at the start of the buffer.
    int64_t packed = 0;
    for (int t = 0; t < threads; t++) {
        int64_t kept = workers[t].count < share ? workers[t].count : share;
        memmove(latencies + packed, workers[t].latencies, (size_t)kept * sizeof *latencies);
        packed += kept;
        *recorded = packed;
        *count += workers[t].count;
        if (workers[t].rc != 0) {
            set_error(error, "thread %d: %s", t, workers[t].error.message);
            return -1;
        }
    }
    return 0;
}
