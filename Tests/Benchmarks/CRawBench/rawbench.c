// Raw SQLite C API baseline for SwiftDAL's benchmarks. See include/rawbench.h.
#include "rawbench.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(expr)                                                                               \
    do {                                                                                          \
        int rc_ = (expr);                                                                         \
        if (rc_ != SQLITE_OK && rc_ != SQLITE_DONE && rc_ != SQLITE_ROW) return rc_;              \
    } while (0)

static const char *SCHEMA =
    "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,"
    " age INTEGER NOT NULL, score REAL NOT NULL, bio TEXT);"
    "CREATE INDEX users_age ON users(age);";

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/// The region callgrind counts (`--toggle-collect=rawbench_region`): the body alone.
__attribute__((noinline)) void rawbench_region(void (*body)(void *context), void *context) {
    body(context);
    __asm__ volatile("" ::: "memory");
}

static double process_cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/// The process CPU time of the last measured region (the harness measures one at a time).
static double last_cpu_seconds = 0;

double rawbench_last_cpu_seconds(void) { return last_cpu_seconds; }

double rawbench_measured(void (*body)(void *context), void *context) {
    double cpu = process_cpu_seconds();
    double start = now_seconds();
    rawbench_region(body, context);
    double seconds = now_seconds() - start;
    last_cpu_seconds = process_cpu_seconds() - cpu;
    return seconds;
}

int64_t rawbench_next_id(uint64_t *state, int64_t n) {
    *state = (*state * 1103515245ULL + 12345ULL) % 2147483648ULL;
    return (int64_t)(*state % (uint64_t)n) + 1;
}

/// Pragmas run on every connection after the defaults (`--pragma`), or NULL.
static char *extra_pragmas = NULL;

int rawbench_set_pragmas(const char *sql) {
    free(extra_pragmas);
    extra_pragmas = NULL;
    if (sql == NULL || *sql == '\0') return 0;
    extra_pragmas = strdup(sql);
    return extra_pragmas == NULL ? SQLITE_NOMEM : 0;
}

static int open_db(const char *path, sqlite3 **db) {
    int rc = sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_busy_timeout(*db, 5000);
    CHECK(sqlite3_exec(*db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", NULL, NULL, NULL));
    if (extra_pragmas != NULL) CHECK(sqlite3_exec(*db, extra_pragmas, NULL, NULL, NULL));
    return SQLITE_OK;
}

static int close_db(sqlite3 *db) { return sqlite3_close(db); }

int rawbench_create(const char *path) {
    sqlite3 *db;
    CHECK(open_db(path, &db));
    CHECK(sqlite3_exec(db, SCHEMA, NULL, NULL, NULL));
    return close_db(db);
}

/// Row i's text values, formatted where they stay valid until the row's step: bound
/// `SQLITE_STATIC`, SQLite reads them in place (no copy, no allocation a value: the
/// fastest honest C; `SQLITE_TRANSIENT` cost ~500 instructions more a text, 2026-12-07).
struct row_text {
    char name[32], email[64], bio[48];
};

/// Binds row i's values (name, email, age, score, bio) to parameters 1-5; `text` must
/// outlive the row's step.
static int bind_row(sqlite3_stmt *stmt, int64_t i, struct row_text *text) {
    int name_len = snprintf(text->name, sizeof text->name, "user%lld", (long long)i);
    int email_len = snprintf(text->email, sizeof text->email, "user%lld@example.com", (long long)i);
    CHECK(sqlite3_bind_text(stmt, 1, text->name, name_len, SQLITE_STATIC));
    CHECK(sqlite3_bind_text(stmt, 2, text->email, email_len, SQLITE_STATIC));
    CHECK(sqlite3_bind_int64(stmt, 3, 18 + i % 60));
    CHECK(sqlite3_bind_double(stmt, 4, (double)i * 0.5));
    if (i % 3 == 0) {
        CHECK(sqlite3_bind_null(stmt, 5));
    } else {
        int bio_len = snprintf(text->bio, sizeof text->bio, "bio of user %lld", (long long)i);
        CHECK(sqlite3_bind_text(stmt, 5, text->bio, bio_len, SQLITE_STATIC));
    }
    return SQLITE_OK;
}

static int insert_rows(sqlite3 *db, int64_t first, int64_t count, int64_t *checksum) {
    sqlite3_stmt *stmt;
    CHECK(sqlite3_prepare_v2(db, "INSERT INTO users(name, email, age, score, bio) VALUES (?, ?, ?, ?, ?)", -1, &stmt, NULL));
    struct row_text text;
    for (int64_t i = first; i < first + count; i++) {
        int rc = bind_row(stmt, i, &text);
        if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
        if (rc != SQLITE_DONE) {
            sqlite3_finalize(stmt);
            return rc;
        }
        if (checksum) *checksum += sqlite3_last_insert_rowid(db);
        sqlite3_reset(stmt);
    }
    return sqlite3_finalize(stmt);
}

int rawbench_populate(const char *path, int64_t n) {
    sqlite3 *db;
    CHECK(open_db(path, &db));
    CHECK(sqlite3_exec(db, SCHEMA, NULL, NULL, NULL));
    CHECK(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    CHECK(insert_rows(db, 1, n, NULL));
    CHECK(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL));
    return close_db(db);
}

/// What a timed workload body works on: the open connection, its inputs, and what it gives back.
typedef struct {
    sqlite3 *db;
    int64_t n;
    int transaction;
    int64_t checksum;
    int rc;
    struct user_list *users;
} job_t;

/// Opens `path`, runs `body` as the measured region (only the workload: the database is
/// opened before it and closed after it, and what the body returns is checked and freed
/// after it too), then closes it.
static int run_measured(const char *path, void (*body)(void *), job_t *job, double *seconds) {
    CHECK(open_db(path, &job->db));
    *seconds = rawbench_measured(body, job);
    int rc = job->rc;
    int closed = close_db(job->db);
    return rc != SQLITE_OK ? rc : closed;
}

static void w1_body(void *context) {
    job_t *job = context;
    job->rc = sqlite3_exec(job->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (job->rc == SQLITE_OK) job->rc = insert_rows(job->db, 1, job->n, &job->checksum);
    if (job->rc == SQLITE_OK) job->rc = sqlite3_exec(job->db, "COMMIT", NULL, NULL, NULL);
}

int rawbench_w1_insert(const char *path, int64_t n, int64_t *checksum, double *seconds) {
    job_t job = {.n = n};
    int rc = run_measured(path, w1_body, &job, seconds);
    *checksum = job.checksum;
    return rc;
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

static char *copy_text(sqlite3_stmt *stmt, int column) {
    const unsigned char *text = sqlite3_column_text(stmt, column);
    if (text == NULL) return NULL;
    int length = sqlite3_column_bytes(stmt, column);
    char *copy = malloc((size_t)length + 1);
    memcpy(copy, text, (size_t)length + 1);
    return copy;
}

static void read_user(sqlite3_stmt *stmt, user_t *user) {
    user->id = sqlite3_column_int64(stmt, 0);
    user->name = copy_text(stmt, 1);
    user->email = copy_text(stmt, 2);
    user->age = sqlite3_column_int64(stmt, 3);
    user->score = sqlite3_column_double(stmt, 4);
    user->bio = copy_text(stmt, 5);
}

static int64_t user_checksum(const user_t *user) {
    return user->id + (int64_t)strlen(user->name) + (int64_t)strlen(user->email) + (user->bio ? (int64_t)strlen(user->bio) : 0);
}

static void free_user(user_t *user) {
    free(user->name);
    free(user->email);
    free(user->bio);
}

#define SELECT_USER "SELECT id, name, email, age, score, bio FROM users"

struct user_list {
    user_t *items;
    size_t count;
};

static void w2_body(void *context) {
    job_t *job = context;
    sqlite3_stmt *stmt;
    job->rc = sqlite3_exec(job->db, "BEGIN", NULL, NULL, NULL);
    if (job->rc != SQLITE_OK) return;
    job->rc = sqlite3_prepare_v2(job->db, SELECT_USER " ORDER BY id", -1, &stmt, NULL);
    if (job->rc != SQLITE_OK) return;
    size_t capacity = 1024, count = 0;
    user_t *users = malloc(capacity * sizeof(user_t));
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (count == capacity) {
            capacity *= 2;
            users = realloc(users, capacity * sizeof(user_t));
        }
        read_user(stmt, &users[count++]);
    }
    sqlite3_finalize(stmt);
    job->users->items = users;
    job->users->count = count;
    job->rc = rc == SQLITE_DONE ? sqlite3_exec(job->db, "COMMIT", NULL, NULL, NULL) : rc;
}

int rawbench_w2_fetch_all(const char *path, int64_t *checksum, double *seconds) {
    struct user_list users = {NULL, 0};
    job_t job = {.users = &users};
    int rc = run_measured(path, w2_body, &job, seconds);
    // Outside the measured region, as on the Swift side: checking and freeing the rows.
    *checksum = 0;
    for (size_t i = 0; i < users.count; i++) {
        *checksum += user_checksum(&users.items[i]);
        free_user(&users.items[i]);
    }
    free(users.items);
    return rc;
}

static int lookups(sqlite3 *db, int64_t n, int64_t count, uint64_t seed, int64_t *checksum) {
    sqlite3_stmt *stmt;
    CHECK(sqlite3_prepare_v2(db, SELECT_USER " WHERE id = ?", -1, &stmt, NULL));
    uint64_t state = seed;
    for (int64_t k = 0; k < count; k++) {
        sqlite3_bind_int64(stmt, 1, rawbench_next_id(&state, n));
        int rc = sqlite3_step(stmt);
        if (rc == SQLITE_ROW) {
            user_t user;
            read_user(stmt, &user);
            *checksum += user.id + (int64_t)strlen(user.name);
            free_user(&user);
        } else if (rc != SQLITE_DONE) {
            sqlite3_finalize(stmt);
            return rc;
        }
        sqlite3_reset(stmt);
    }
    return sqlite3_finalize(stmt);
}

static void w3_body(void *context) {
    job_t *job = context;
    job->rc = job->transaction ? sqlite3_exec(job->db, "BEGIN", NULL, NULL, NULL) : SQLITE_OK;
    if (job->rc == SQLITE_OK) job->rc = lookups(job->db, job->n, job->n, 42, &job->checksum);
    if (job->rc == SQLITE_OK && job->transaction) job->rc = sqlite3_exec(job->db, "COMMIT", NULL, NULL, NULL);
}

int rawbench_w3_lookup(const char *path, int64_t n, int transaction, int64_t *checksum, double *seconds) {
    job_t job = {.n = n, .transaction = transaction};
    int rc = run_measured(path, w3_body, &job, seconds);
    *checksum = job.checksum;
    return rc;
}

static int w4_work(sqlite3 *db, int64_t *checksum) {
    sqlite3_stmt *stmt;
    CHECK(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    CHECK(sqlite3_prepare_v2(db, SELECT_USER " WHERE age = ? ORDER BY id LIMIT 100", -1, &stmt, NULL));
    for (int64_t k = 0; k < 1000; k++) {
        sqlite3_bind_int64(stmt, 1, 18 + k % 60);
        int rc;
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            user_t user;
            read_user(stmt, &user);
            *checksum += user.id;
            free_user(&user);
        }
        sqlite3_reset(stmt);
        if (rc != SQLITE_DONE) return rc;
    }
    sqlite3_finalize(stmt);
    return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

static int w5_work(sqlite3 *db, int64_t n, int64_t *checksum) {
    sqlite3_stmt *stmt;
    CHECK(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL));
    CHECK(sqlite3_prepare_v2(db, "UPDATE users SET score = ? WHERE id = ?", -1, &stmt, NULL));
    uint64_t state = 42;
    for (int64_t k = 0; k < 10000; k++) {
        sqlite3_bind_double(stmt, 1, (double)k * 0.25);
        sqlite3_bind_int64(stmt, 2, rawbench_next_id(&state, n));
        int rc = sqlite3_step(stmt);
        if (rc != SQLITE_DONE) return rc;
        *checksum += sqlite3_changes(db);
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

static int w6_work(sqlite3 *db, int64_t n, int64_t *checksum) {
    sqlite3_stmt *stmt;
    CHECK(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    CHECK(sqlite3_prepare_v2(db, "SELECT EXISTS(SELECT 1 FROM users WHERE email = ?)", -1, &stmt, NULL));
    uint64_t state = 42;
    char email[64];
    for (int64_t k = 0; k < n; k++) {
        int64_t id = rawbench_next_id(&state, n);
        int length = k % 2 == 1 ? snprintf(email, sizeof email, "user%lld@example.com", (long long)id)
                                : snprintf(email, sizeof email, "nobody%lld@example.com", (long long)id);
        sqlite3_bind_text(stmt, 1, email, length, SQLITE_STATIC);  // valid until the next bind
        if (sqlite3_step(stmt) != SQLITE_ROW) return sqlite3_errcode(db);
        *checksum += sqlite3_column_int64(stmt, 0);
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

static int w7_work(sqlite3 *db, int64_t *checksum) {
    sqlite3_stmt *stmt;
    CHECK(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL));
    CHECK(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM users WHERE age = ?", -1, &stmt, NULL));
    for (int64_t k = 0; k < 1000; k++) {
        sqlite3_bind_int64(stmt, 1, 18 + k % 60);
        if (sqlite3_step(stmt) != SQLITE_ROW) return sqlite3_errcode(db);
        *checksum += sqlite3_column_int64(stmt, 0);
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

static void w4_body(void *context) {
    job_t *job = context;
    job->rc = w4_work(job->db, &job->checksum);
}

static void w5_body(void *context) {
    job_t *job = context;
    job->rc = w5_work(job->db, job->n, &job->checksum);
}

static void w6_body(void *context) {
    job_t *job = context;
    job->rc = w6_work(job->db, job->n, &job->checksum);
}

static void w7_body(void *context) {
    job_t *job = context;
    job->rc = w7_work(job->db, &job->checksum);
}

#define MEASURED_WORKLOAD(name, body)                                                             \
    int name(const char *path, int64_t n, int64_t *checksum, double *seconds) {                   \
        job_t job = {.n = n};                                                                     \
        int rc = run_measured(path, body, &job, seconds);                                         \
        *checksum = job.checksum;                                                                 \
        return rc;                                                                                \
    }

MEASURED_WORKLOAD(rawbench_w4_filter, w4_body)
MEASURED_WORKLOAD(rawbench_w5_update, w5_body)
MEASURED_WORKLOAD(rawbench_w6_exists, w6_body)
MEASURED_WORKLOAD(rawbench_w7_count, w7_body)

// MARK: W8

typedef struct {
    const char *path;
    int64_t n;
    int64_t count;
    uint64_t seed;
    int64_t batch;
    int64_t checksum;
    int64_t busy;
    int rc;
} worker_t;

static void *reader_main(void *argument) {
    worker_t *worker = argument;
    sqlite3 *db;
    worker->rc = sqlite3_open_v2(worker->path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (worker->rc != SQLITE_OK) return NULL;
    sqlite3_busy_timeout(db, 5000);
    worker->rc = lookups(db, worker->n, worker->count, worker->seed, &worker->checksum);
    if ((worker->rc & 0xFF) == SQLITE_BUSY) worker->busy++;
    sqlite3_close(db);
    return NULL;
}

static void *writer_main(void *argument) {
    worker_t *worker = argument;
    sqlite3 *db;
    worker->rc = open_db(worker->path, &db);
    if (worker->rc != SQLITE_OK) return NULL;
    for (int64_t first = 0; first < worker->count; first += worker->batch) {
        int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK) rc = insert_rows(db, worker->n + 1 + first, worker->batch, &worker->checksum);
        if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            if ((rc & 0xFF) == SQLITE_BUSY) worker->busy++;
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            worker->rc = rc;
        }
    }
    sqlite3_close(db);
    return NULL;
}

int rawbench_w8_concurrent(const char *path, int64_t n, int readers, int64_t lookups_per_reader, int64_t writes,
                           int64_t batch, int64_t *busy_errors, double *read_seconds,
                           double *write_seconds, int64_t *checksum) {
    pthread_t threads[64];
    worker_t workers[64];
    if (readers < 1 || readers > 63) return SQLITE_MISUSE;
    memset(workers, 0, sizeof workers);
    double start = now_seconds();
    workers[0] = (worker_t){path, n, writes, 0, batch, 0, 0, 0};
    pthread_create(&threads[0], NULL, writer_main, &workers[0]);
    for (int r = 1; r <= readers; r++) {
        workers[r] = (worker_t){path, n, lookups_per_reader, (uint64_t)(42 + r - 1), 0, 0, 0, 0};
        pthread_create(&threads[r], NULL, reader_main, &workers[r]);
    }
    pthread_join(threads[0], NULL);
    *write_seconds = now_seconds() - start;
    for (int r = 1; r <= readers; r++) pthread_join(threads[r], NULL);
    *read_seconds = now_seconds() - start;
    *busy_errors = 0;
    *checksum = 0;
    int rc = SQLITE_OK;
    for (int r = 0; r <= readers; r++) {
        *busy_errors += workers[r].busy;
        if (r > 0) *checksum += workers[r].checksum;
        if (workers[r].rc != SQLITE_OK && rc == SQLITE_OK) rc = workers[r].rc;
    }
    return rc;
}
