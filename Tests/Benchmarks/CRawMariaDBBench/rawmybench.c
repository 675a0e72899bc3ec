// Raw MariaDB Connector/C baseline for SwiftDAL's MariaDB benchmarks. See include/rawmybench.h.
// Every statement handle is closed and every connection closed, on every path.
#define _POSIX_C_SOURCE 200809L  // clock_gettime
#include "rawmybench.h"

#include "rawbench.h"  // rawbench_measured: the region every implementation is timed and counted in

#include <mysql.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// MARK: The SQL, as SwiftDAL's BaseDAL sends it on MariaDB (read from the server's general
// log of a SwiftDAL run, 2026-12-02): the same text for the server to parse and plan.
// SwiftDAL binds the literal of a condition (`age = 18`) as a parameter: one statement
// for every age, as here.

#define USER_COLUMNS "\"id\", \"name\", \"email\", \"age\", \"score\", \"bio\""
#define SELECT_USER "SELECT " USER_COLUMNS " FROM \"users\""
#define INSERT_USER \
    "INSERT INTO \"users\" (\"name\", \"email\", \"age\", \"score\", \"bio\") VALUES (?, ?, ?, ?, ?) RETURNING \"id\""
#define SELECT_ALL SELECT_USER " ORDER BY \"id\" ASC"
#define SELECT_BY_ID SELECT_USER " WHERE \"id\" = ?"
#define SELECT_FILTER SELECT_USER " WHERE (age = ?) ORDER BY \"id\" ASC LIMIT ?"
#define UPDATE_SCORE "UPDATE \"users\" SET \"score\" = ? WHERE \"id\" = ?"
#define EXISTS_EMAIL "SELECT EXISTS(SELECT 1 FROM \"users\" WHERE \"email\" = ?)"
#define COUNT_AGE "SELECT COUNT(*) FROM \"users\" WHERE (age = ?)"
// SwiftDAL's `read` and `write` transactions, and their end.
#define BEGIN_READ "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; START TRANSACTION READ ONLY"
#define BEGIN_WRITE "START TRANSACTION"
#define COMMIT "COMMIT"
// The session SwiftDAL sets on every connection (MariaDBConnection).
#define SESSION                                                                                                \
    "SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin, time_zone = '+00:00', sql_mode = "                          \
    "'STRICT_ALL_TABLES,ANSI_QUOTES,PIPES_AS_CONCAT,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,"  \
    "NO_ENGINE_SUBSTITUTION', autocommit = 1"

// MARK: Errors and connections

static void set_error(rawmy_error *error, const char *format, ...) {
    if (error == NULL) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error->message, sizeof error->message, format, arguments);
    va_end(arguments);
}

static int fail_conn(MYSQL *mysql, const char *what, rawmy_error *error) {
    set_error(error, "%s: %s (%u)", what, mysql_error(mysql), mysql_errno(mysql));
    return -1;
}

static int fail_stmt(MYSQL_STMT *stmt, const char *what, rawmy_error *error) {
    set_error(error, "%s: %s (%u)", what, mysql_stmt_error(stmt), mysql_stmt_errno(stmt));
    return -1;
}

static pthread_once_t library_once = PTHREAD_ONCE_INIT;
static int library_status = -1;
static void library_init(void) { library_status = mysql_library_init(0, NULL, NULL); }

const char *rawmy_library_version(void) { return mysql_get_client_info(); }

int64_t rawmy_next_id(uint64_t *state, int64_t n) {
    *state = (*state * 1103515245ULL + 12345ULL) % 2147483648ULL;
    return (int64_t)(*state % (uint64_t)n) + 1;
}

/// Runs `sql` (the text protocol; several statements allowed), reading every result.
static int command(MYSQL *mysql, const char *sql, rawmy_error *error) {
    if (mysql_real_query(mysql, sql, (unsigned long)strlen(sql)) != 0) return fail_conn(mysql, sql, error);
    for (;;) {
        MYSQL_RES *result = mysql_store_result(mysql);
        if (result != NULL) {
            mysql_free_result(result);
        } else if (mysql_field_count(mysql) != 0) {
            return fail_conn(mysql, sql, error);
        }
        int next = mysql_next_result(mysql);
        if (next == -1) return 0;
        if (next > 0) return fail_conn(mysql, sql, error);
    }
}

/// A connection as SwiftDAL opens one: utf8mb4, CLIENT_FOUND_ROWS (an UPDATE reports the
/// rows it matched), multi-statement texts, and SwiftDAL's session.
static int connect_db(const rawmy_target *target, MYSQL **out, rawmy_error *error) {
    pthread_once(&library_once, library_init);
    if (library_status != 0) {
        set_error(error, "mysql_library_init failed");
        return -1;
    }
    MYSQL *mysql = mysql_init(NULL);
    if (mysql == NULL) {
        set_error(error, "mysql_init: out of memory");
        return -1;
    }
    mysql_options(mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    unsigned long flags = CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS;
    const char *host = target->socket != NULL ? "localhost" : target->host;
    if (mysql_real_connect(mysql, host, target->user, target->password, target->database, target->port,
                           target->socket, flags) == NULL) {
        fail_conn(mysql, "cannot connect", error);
        mysql_close(mysql);
        return -1;
    }
    if (command(mysql, SESSION, error) != 0) {
        mysql_close(mysql);
        return -1;
    }
    *out = mysql;
    return 0;
}

/// A prepared statement for `sql`, or NULL with `error` set.
static MYSQL_STMT *prepare(MYSQL *mysql, const char *sql, rawmy_error *error) {
    MYSQL_STMT *stmt = mysql_stmt_init(mysql);
    if (stmt == NULL) {
        fail_conn(mysql, "mysql_stmt_init", error);
        return NULL;
    }
    if (mysql_stmt_prepare(stmt, sql, (unsigned long)strlen(sql)) != 0) {
        fail_stmt(stmt, sql, error);
        mysql_stmt_close(stmt);
        return NULL;
    }
    return stmt;
}

/// Reads the rest of a result up to its end (a statement that returned one row).
static int finish_result(MYSQL_STMT *stmt, const char *what, rawmy_error *error) {
    int rc;
    while ((rc = mysql_stmt_fetch(stmt)) == 0 || rc == MYSQL_DATA_TRUNCATED) {
    }
    if (rc != MYSQL_NO_DATA) return fail_stmt(stmt, what, error);
    return 0;
}

// MARK: Rows

/// A user materialized in C: strings copied.
typedef struct {
    int64_t id;
    char *name;
    char *email;
    int64_t age;
    double score;
    char *bio;
} user_t;

static void free_user(user_t *user) {
    free(user->name);
    free(user->email);
    free(user->bio);
}

static int64_t user_checksum(const user_t *user) {
    return user->id + (int64_t)strlen(user->name) + (int64_t)strlen(user->email) +
           (user->bio ? (int64_t)strlen(user->bio) : 0);
}

enum { TEXT_BUFFER = 256 };

/// The result columns of `SELECT id, name, email, age, score, bio` bound once: integers
/// and the double in place, the texts into fixed buffers with their lengths.
typedef struct {
    MYSQL_BIND binds[6];
    int64_t id, age;
    double score;
    char name[TEXT_BUFFER], email[TEXT_BUFFER], bio[TEXT_BUFFER];
    unsigned long lengths[6];
    my_bool nulls[6];
    my_bool errors[6];
} user_row;

static void bind_text(MYSQL_BIND *bind, char *buffer, unsigned long *length, my_bool *null, my_bool *truncated) {
    bind->buffer_type = MYSQL_TYPE_STRING;
    bind->buffer = buffer;
    bind->buffer_length = TEXT_BUFFER;
    bind->length = length;
    bind->is_null = null;
    bind->error = truncated;
}

static int bind_user_row(MYSQL_STMT *stmt, user_row *row, rawmy_error *error) {
    memset(row->binds, 0, sizeof row->binds);
    row->binds[0].buffer_type = MYSQL_TYPE_LONGLONG;
    row->binds[0].buffer = &row->id;
    row->binds[0].is_null = &row->nulls[0];
    bind_text(&row->binds[1], row->name, &row->lengths[1], &row->nulls[1], &row->errors[1]);
    bind_text(&row->binds[2], row->email, &row->lengths[2], &row->nulls[2], &row->errors[2]);
    row->binds[3].buffer_type = MYSQL_TYPE_LONGLONG;
    row->binds[3].buffer = &row->age;
    row->binds[3].is_null = &row->nulls[3];
    row->binds[4].buffer_type = MYSQL_TYPE_DOUBLE;
    row->binds[4].buffer = &row->score;
    row->binds[4].is_null = &row->nulls[4];
    bind_text(&row->binds[5], row->bio, &row->lengths[5], &row->nulls[5], &row->errors[5]);
    if (mysql_stmt_bind_result(stmt, row->binds) != 0) return fail_stmt(stmt, "mysql_stmt_bind_result", error);
    return 0;
}

/// A copy of text column `column` of the row just fetched (NULL for SQL NULL); a value
/// longer than the bound buffer is read whole with mysql_stmt_fetch_column. Sets `*failed`.
static char *copy_text(MYSQL_STMT *stmt, user_row *row, int column, const char *buffer, int *failed) {
    if (row->nulls[column]) return NULL;
    unsigned long length = row->lengths[column];
    char *copy = malloc(length + 1);
    if (copy == NULL) {
        *failed = 1;
        return NULL;
    }
    if (length <= TEXT_BUFFER) {
        memcpy(copy, buffer, length);
    } else {
        MYSQL_BIND bind;
        memset(&bind, 0, sizeof bind);
        bind.buffer_type = MYSQL_TYPE_STRING;
        bind.buffer = copy;
        bind.buffer_length = length + 1;
        if (mysql_stmt_fetch_column(stmt, &bind, (unsigned int)column, 0) != 0) *failed = 1;
    }
    copy[length] = '\0';
    return copy;
}

/// The row just fetched as a user.
static int read_user(MYSQL_STMT *stmt, user_row *row, user_t *user, rawmy_error *error) {
    int failed = 0;
    user->id = row->id;
    user->name = copy_text(stmt, row, 1, row->name, &failed);
    user->email = copy_text(stmt, row, 2, row->email, &failed);
    user->age = row->age;
    user->score = row->score;
    user->bio = copy_text(stmt, row, 5, row->bio, &failed);
    if (failed || user->name == NULL || user->email == NULL || row->nulls[0] || row->nulls[3] || row->nulls[4]) {
        free_user(user);
        set_error(error, failed ? "out of memory (or a failed fetch) copying a row" : "a NOT NULL column read NULL");
        return -1;
    }
    return 0;
}

/// Fetches the next row into `row`: 1 when there is one, 0 at the end, -1 on an error.
static int fetch(MYSQL_STMT *stmt, const char *what, rawmy_error *error) {
    int rc = mysql_stmt_fetch(stmt);
    if (rc == 0 || rc == MYSQL_DATA_TRUNCATED) return 1;
    if (rc == MYSQL_NO_DATA) return 0;
    return fail_stmt(stmt, what, error);
}

/// Row i's values as bound parameters (name, email, age, score, bio; bio NULL when i % 3 == 0).
typedef struct {
    MYSQL_BIND binds[5];
    char name[32], email[64], bio[48];
    unsigned long lengths[5];
    my_bool bio_null;
    int64_t age;
    double score;
} row_parameters;

/// Binds the parameters of an insert to `row`'s fields, once; fill_row changes the values.
static int bind_row_parameters(MYSQL_STMT *stmt, row_parameters *row, rawmy_error *error) {
    memset(row->binds, 0, sizeof row->binds);
    char *texts[3] = {row->name, row->email, row->bio};
    int columns[3] = {0, 1, 4};
    for (int t = 0; t < 3; t++) {
        MYSQL_BIND *bind = &row->binds[columns[t]];
        bind->buffer_type = MYSQL_TYPE_STRING;
        bind->buffer = texts[t];
        bind->length = &row->lengths[columns[t]];
    }
    row->binds[4].is_null = &row->bio_null;
    row->binds[2].buffer_type = MYSQL_TYPE_LONGLONG;
    row->binds[2].buffer = &row->age;
    row->binds[3].buffer_type = MYSQL_TYPE_DOUBLE;
    row->binds[3].buffer = &row->score;
    if (mysql_stmt_bind_param(stmt, row->binds) != 0) return fail_stmt(stmt, "mysql_stmt_bind_param", error);
    return 0;
}

static void fill_row(row_parameters *row, int64_t i) {
    row->lengths[0] = (unsigned long)snprintf(row->name, sizeof row->name, "user%lld", (long long)i);
    row->lengths[1] = (unsigned long)snprintf(row->email, sizeof row->email, "user%lld@example.com", (long long)i);
    row->age = 18 + i % 60;
    row->score = (double)i * 0.5;
    row->bio_null = i % 3 == 0;
    row->lengths[4] =
        row->bio_null ? 0 : (unsigned long)snprintf(row->bio, sizeof row->bio, "bio of user %lld", (long long)i);
}

// MARK: Setup

static const char *SCHEMA =
    "DROP TABLE IF EXISTS users;"
    "CREATE TABLE users(id BIGINT AUTO_INCREMENT PRIMARY KEY, name LONGTEXT NOT NULL,"
    " email VARCHAR(255) NOT NULL UNIQUE, age BIGINT NOT NULL, score DOUBLE NOT NULL, bio LONGTEXT,"
    " INDEX users_age(age)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin";

/// Rows 1...n in multi-row INSERTs of 1,000 rows (the values need no escaping).
static int insert_rows(MYSQL *mysql, int64_t n, rawmy_error *error) {
    enum { CHUNK = 1000 };
    size_t capacity = 200 * CHUNK + 256;
    char *sql = malloc(capacity);
    if (sql == NULL) {
        set_error(error, "out of memory");
        return -1;
    }
    int rc = command(mysql, BEGIN_WRITE, error);
    for (int64_t first = 1; rc == 0 && first <= n; first += CHUNK) {
        size_t used = (size_t)snprintf(sql, capacity, "INSERT INTO users(id, name, email, age, score, bio) VALUES ");
        for (int64_t i = first; i < first + CHUNK && i <= n; i++) {
            char bio[48];
            if (i % 3 == 0) {
                snprintf(bio, sizeof bio, "NULL");
            } else {
                snprintf(bio, sizeof bio, "'bio of user %lld'", (long long)i);
            }
            used += (size_t)snprintf(sql + used, capacity - used, "%s(%lld, 'user%lld', 'user%lld@example.com', %lld, %.17g, %s)",
                                     i == first ? "" : ", ", (long long)i, (long long)i, (long long)i,
                                     (long long)(18 + i % 60), (double)i * 0.5, bio);
            if (used >= capacity) {
                set_error(error, "the setup INSERT does not fit its buffer");
                free(sql);
                return -1;
            }
        }
        rc = command(mysql, sql, error);
    }
    free(sql);
    if (rc == 0) rc = command(mysql, COMMIT, error);
    return rc;
}

int rawmy_setup(const rawmy_target *target, int64_t n, int populated, rawmy_error *error) {
    MYSQL *mysql;
    if (connect_db(target, &mysql, error) != 0) return -1;
    int rc = command(mysql, SCHEMA, error);
    if (rc == 0 && populated) rc = insert_rows(mysql, n, error);
    // The optimizer's statistics taken before any workload reads.
    if (rc == 0 && populated) rc = command(mysql, "ANALYZE TABLE users", error);
    mysql_close(mysql);
    return rc;
}

// MARK: Workloads

static int w1_insert(MYSQL *mysql, int64_t n, int64_t *checksum, rawmy_error *error) {
    if (command(mysql, BEGIN_WRITE, error) != 0) return -1;
    MYSQL_STMT *stmt = prepare(mysql, INSERT_USER, error);
    if (stmt == NULL) return -1;
    row_parameters row;
    int64_t id = 0;
    my_bool id_null = 0;
    MYSQL_BIND result;
    memset(&result, 0, sizeof result);
    result.buffer_type = MYSQL_TYPE_LONGLONG;
    result.buffer = &id;
    result.is_null = &id_null;
    int rc = bind_row_parameters(stmt, &row, error);
    for (int64_t i = 1; rc == 0 && i <= n; i++) {
        fill_row(&row, i);
        if (mysql_stmt_execute(stmt) != 0) {
            rc = fail_stmt(stmt, INSERT_USER, error);
            break;
        }
        // RETURNING's column is known once the statement ran (prepare reports none): bound once.
        if (i == 1 && mysql_stmt_bind_result(stmt, &result) != 0) {
            rc = fail_stmt(stmt, "mysql_stmt_bind_result", error);
            break;
        }
        int fetched = fetch(stmt, INSERT_USER, error);
        if (fetched != 1) {
            if (fetched == 0) set_error(error, "INSERT … RETURNING returned no row");
            rc = -1;
            break;
        }
        *checksum += id;
        rc = finish_result(stmt, INSERT_USER, error);
    }
    mysql_stmt_close(stmt);
    return rc == 0 ? command(mysql, COMMIT, error) : -1;
}

#define INSERT_USER_ROW "INSERT INTO \"users\" (\"name\", \"email\", \"age\", \"score\", \"bio\") VALUES (?, ?, ?, ?, ?)"

/// Binds a column of a bulk execution: `values` an array of the type's values, or of
/// pointers to strings with their `lengths`.
static void bind_column(MYSQL_BIND *bind, enum enum_field_types type, void *values, unsigned long *lengths) {
    bind->buffer_type = type;
    bind->buffer = values;
    bind->length = lengths;
}

/// W1B: rows 1...n in one transaction as bulk executions of 1,000 rows each (MariaDB's
/// COM_STMT_BULK_EXECUTE through STMT_ATTR_ARRAY_SIZE: column-wise arrays, NULL bios by
/// indicator), the fastest way in through the binary protocol. The checksum is n.
static int w1_bulk(MYSQL *mysql, int64_t n, int64_t *checksum, rawmy_error *error) {
    enum { CHUNK = 1000 };
    if (command(mysql, BEGIN_WRITE, error) != 0) return -1;
    MYSQL_STMT *stmt = prepare(mysql, INSERT_USER_ROW, error);
    if (stmt == NULL) return -1;
    static char names[CHUNK][32], emails[CHUNK][64], bios[CHUNK][48];
    char *name_pointers[CHUNK], *email_pointers[CHUNK], *bio_pointers[CHUNK];
    unsigned long name_lengths[CHUNK], email_lengths[CHUNK], bio_lengths[CHUNK];
    char bio_indicators[CHUNK];
    int64_t ages[CHUNK];
    double scores[CHUNK];
    MYSQL_BIND binds[5];
    memset(binds, 0, sizeof binds);
    bind_column(&binds[0], MYSQL_TYPE_STRING, name_pointers, name_lengths);
    bind_column(&binds[1], MYSQL_TYPE_STRING, email_pointers, email_lengths);
    bind_column(&binds[2], MYSQL_TYPE_LONGLONG, ages, NULL);
    bind_column(&binds[3], MYSQL_TYPE_DOUBLE, scores, NULL);
    bind_column(&binds[4], MYSQL_TYPE_STRING, bio_pointers, bio_lengths);
    binds[4].u.indicator = bio_indicators;
    int rc = 0;
    for (int64_t first = 1; rc == 0 && first <= n; first += CHUNK) {
        unsigned int count = (unsigned int)(n - first + 1 < CHUNK ? n - first + 1 : CHUNK);
        for (unsigned int k = 0; k < count; k++) {
            int64_t i = first + k;
            name_pointers[k] = names[k];
            email_pointers[k] = emails[k];
            bio_pointers[k] = bios[k];
            name_lengths[k] = (unsigned long)snprintf(names[k], sizeof names[k], "user%lld", (long long)i);
            email_lengths[k] = (unsigned long)snprintf(emails[k], sizeof emails[k], "user%lld@example.com", (long long)i);
            ages[k] = 18 + i % 60;
            scores[k] = (double)i * 0.5;
            bio_indicators[k] = i % 3 == 0 ? STMT_INDICATOR_NULL : STMT_INDICATOR_NONE;
            bio_lengths[k] =
                i % 3 == 0 ? 0 : (unsigned long)snprintf(bios[k], sizeof bios[k], "bio of user %lld", (long long)i);
        }
        if (mysql_stmt_attr_set(stmt, STMT_ATTR_ARRAY_SIZE, &count) != 0 || mysql_stmt_bind_param(stmt, binds) != 0
            || mysql_stmt_execute(stmt) != 0) {
            rc = fail_stmt(stmt, INSERT_USER_ROW, error);
            break;
        }
        *checksum += (int64_t)count;
    }
    mysql_stmt_close(stmt);
    return rc == 0 ? command(mysql, COMMIT, error) : -1;
}

/// W2's rows, handed out of the measured region to be checked and freed after it.
typedef struct {
    user_t *items;
    int64_t count;
} user_list;

static int w2_fetch_all(MYSQL *mysql, user_list *users, rawmy_error *error) {
    if (command(mysql, BEGIN_READ, error) != 0) return -1;
    MYSQL_STMT *stmt = prepare(mysql, SELECT_ALL, error);
    if (stmt == NULL) return -1;
    user_row row;
    int rc = bind_user_row(stmt, &row, error);
    if (rc == 0 && mysql_stmt_execute(stmt) != 0) rc = fail_stmt(stmt, SELECT_ALL, error);
    int64_t capacity = 0;
    while (rc == 0) {
        int fetched = fetch(stmt, SELECT_ALL, error);
        if (fetched <= 0) {
            rc = fetched;
            break;
        }
        if (users->count == capacity) {
            capacity = capacity == 0 ? 1024 : capacity * 2;
            user_t *grown = realloc(users->items, (size_t)capacity * sizeof(user_t));
            if (grown == NULL) {
                set_error(error, "out of memory");
                rc = -1;
                break;
            }
            users->items = grown;
        }
        if (read_user(stmt, &row, &users->items[users->count], error) != 0) {
            rc = -1;
            break;
        }
        users->count += 1;
    }
    mysql_stmt_close(stmt);
    return rc == 0 ? command(mysql, COMMIT, error) : -1;
}

/// `count` lookups by key; with `errors`, a failed lookup is counted and the next one
/// runs (W8), else the first failure returns -1.
static int lookups(MYSQL *mysql, int64_t n, int64_t count, uint64_t seed, int64_t *checksum, int64_t *errors,
                   rawmy_error *error) {
    MYSQL_STMT *stmt = prepare(mysql, SELECT_BY_ID, error);
    if (stmt == NULL) return -1;
    user_row row;
    int64_t id = 0;
    MYSQL_BIND parameter;
    memset(&parameter, 0, sizeof parameter);
    parameter.buffer_type = MYSQL_TYPE_LONGLONG;
    parameter.buffer = &id;
    int rc = bind_user_row(stmt, &row, error);
    if (rc == 0 && mysql_stmt_bind_param(stmt, &parameter) != 0) rc = fail_stmt(stmt, "mysql_stmt_bind_param", error);
    uint64_t state = seed;
    for (int64_t k = 0; rc == 0 && k < count; k++) {
        id = rawmy_next_id(&state, n);
        int fetched = mysql_stmt_execute(stmt) == 0 ? fetch(stmt, SELECT_BY_ID, error)
                                                     : fail_stmt(stmt, SELECT_BY_ID, error);
        if (fetched == 1) {
            user_t user;
            fetched = read_user(stmt, &row, &user, error);
            if (fetched == 0) {
                *checksum += user.id + (int64_t)strlen(user.name);
                free_user(&user);
                fetched = finish_result(stmt, SELECT_BY_ID, error);
            }
        }
        if (fetched < 0) {
            if (errors == NULL) rc = -1;
            else *errors += 1;
        }
    }
    mysql_stmt_close(stmt);
    return rc;
}

static int w4_filter(MYSQL *mysql, int64_t count, int64_t *checksum, rawmy_error *error) {
    if (command(mysql, BEGIN_READ, error) != 0) return -1;
    MYSQL_STMT *stmt = prepare(mysql, SELECT_FILTER, error);
    if (stmt == NULL) return -1;
    user_row row;
    // The age and the LIMIT bound, as BaseDAL's findTop binds them.
    int64_t values[2] = {0, 100};
    MYSQL_BIND parameters[2];
    memset(parameters, 0, sizeof parameters);
    for (int p = 0; p < 2; p++) {
        parameters[p].buffer_type = MYSQL_TYPE_LONGLONG;
        parameters[p].buffer = &values[p];
    }
    int rc = bind_user_row(stmt, &row, error);
    if (rc == 0 && mysql_stmt_bind_param(stmt, parameters) != 0) rc = fail_stmt(stmt, "mysql_stmt_bind_param", error);
    for (int64_t k = 0; rc == 0 && k < count; k++) {
        values[0] = 18 + k % 60;
        if (mysql_stmt_execute(stmt) != 0) {
            rc = fail_stmt(stmt, SELECT_FILTER, error);
            break;
        }
        int fetched;
        while ((fetched = fetch(stmt, SELECT_FILTER, error)) == 1) {
            user_t user;
            if (read_user(stmt, &row, &user, error) != 0) {
                fetched = -1;
                break;
            }
            *checksum += user.id;
            free_user(&user);
        }
        if (fetched < 0) rc = -1;
    }
    mysql_stmt_close(stmt);
    return rc == 0 ? command(mysql, COMMIT, error) : -1;
}

static int w5_update(MYSQL *mysql, int64_t n, int64_t count, int64_t *checksum, rawmy_error *error) {
    if (command(mysql, BEGIN_WRITE, error) != 0) return -1;
    MYSQL_STMT *stmt = prepare(mysql, UPDATE_SCORE, error);
    if (stmt == NULL) return -1;
    double score = 0;
    int64_t id = 0;
    MYSQL_BIND parameters[2];
    memset(parameters, 0, sizeof parameters);
    parameters[0].buffer_type = MYSQL_TYPE_DOUBLE;
    parameters[0].buffer = &score;
    parameters[1].buffer_type = MYSQL_TYPE_LONGLONG;
    parameters[1].buffer = &id;
    int rc = 0;
    if (mysql_stmt_bind_param(stmt, parameters) != 0) rc = fail_stmt(stmt, "mysql_stmt_bind_param", error);
    uint64_t state = 42;
    for (int64_t k = 0; rc == 0 && k < count; k++) {
        score = (double)k * 0.25;
        id = rawmy_next_id(&state, n);
        if (mysql_stmt_execute(stmt) != 0) {
            rc = fail_stmt(stmt, UPDATE_SCORE, error);
            break;
        }
        *checksum += (int64_t)mysql_stmt_affected_rows(stmt);
    }
    mysql_stmt_close(stmt);
    return rc == 0 ? command(mysql, COMMIT, error) : -1;
}

/// Executes `stmt` and reads its one integer (a COUNT, an EXISTS) into the bound `*value`.
static int single_integer(MYSQL_STMT *stmt, const char *what, rawmy_error *error) {
    if (mysql_stmt_execute(stmt) != 0) return fail_stmt(stmt, what, error);
    int fetched = fetch(stmt, what, error);
    if (fetched != 1) {
        if (fetched == 0) set_error(error, "%s returned no row", what);
        return -1;
    }
    return finish_result(stmt, what, error);
}

static int w6_exists(MYSQL *mysql, int64_t n, int64_t count, int64_t *checksum, rawmy_error *error) {
    if (command(mysql, BEGIN_READ, error) != 0) return -1;
    MYSQL_STMT *stmt = prepare(mysql, EXISTS_EMAIL, error);
    if (stmt == NULL) return -1;
    char email[64];
    unsigned long length = 0;
    int64_t exists = 0;
    MYSQL_BIND parameter, result;
    memset(&parameter, 0, sizeof parameter);
    parameter.buffer_type = MYSQL_TYPE_STRING;
    parameter.buffer = email;
    parameter.length = &length;
    memset(&result, 0, sizeof result);
    result.buffer_type = MYSQL_TYPE_LONGLONG;
    result.buffer = &exists;
    int rc = 0;
    if (mysql_stmt_bind_param(stmt, &parameter) != 0 || mysql_stmt_bind_result(stmt, &result) != 0) {
        rc = fail_stmt(stmt, "binding W6", error);
    }
    uint64_t state = 42;
    for (int64_t k = 0; rc == 0 && k < count; k++) {
        int64_t id = rawmy_next_id(&state, n);
        length = (unsigned long)snprintf(email, sizeof email, k % 2 == 1 ? "user%lld@example.com" : "nobody%lld@example.com",
                                         (long long)id);
        rc = single_integer(stmt, EXISTS_EMAIL, error);
        if (rc == 0 && exists) *checksum += 1;
    }
    mysql_stmt_close(stmt);
    return rc == 0 ? command(mysql, COMMIT, error) : -1;
}

static int w7_count(MYSQL *mysql, int64_t count, int64_t *checksum, rawmy_error *error) {
    if (command(mysql, BEGIN_READ, error) != 0) return -1;
    MYSQL_STMT *stmt = prepare(mysql, COUNT_AGE, error);
    if (stmt == NULL) return -1;
    int64_t age = 0, value = 0;
    MYSQL_BIND parameter, result;
    memset(&parameter, 0, sizeof parameter);
    parameter.buffer_type = MYSQL_TYPE_LONGLONG;
    parameter.buffer = &age;
    memset(&result, 0, sizeof result);
    result.buffer_type = MYSQL_TYPE_LONGLONG;
    result.buffer = &value;
    int rc = 0;
    if (mysql_stmt_bind_param(stmt, &parameter) != 0 || mysql_stmt_bind_result(stmt, &result) != 0) {
        rc = fail_stmt(stmt, "binding W7", error);
    }
    for (int64_t k = 0; rc == 0 && k < count; k++) {
        age = 18 + k % 60;
        rc = single_integer(stmt, COUNT_AGE, error);
        if (rc == 0) *checksum += value;
    }
    mysql_stmt_close(stmt);
    return rc == 0 ? command(mysql, COMMIT, error) : -1;
}

// MARK: Measured workloads

/// A workload run in the measured region: its connection, inputs and outputs.
typedef struct {
    char which;  // '1' … '7'
    MYSQL *mysql;
    int64_t n, count;
    int transaction;
    int64_t checksum;
    user_list users;
    rawmy_error *error;
    int rc;
} my_job;

static void my_body(void *context) {
    my_job *job = context;
    switch (job->which) {
    case '1': job->rc = w1_insert(job->mysql, job->n, &job->checksum, job->error); break;
    case 'B': job->rc = w1_bulk(job->mysql, job->n, &job->checksum, job->error); break;
    case '2': job->rc = w2_fetch_all(job->mysql, &job->users, job->error); break;
    case '3':
        job->rc = job->transaction ? command(job->mysql, BEGIN_READ, job->error) : 0;
        if (job->rc == 0) job->rc = lookups(job->mysql, job->n, job->count, 42, &job->checksum, NULL, job->error);
        if (job->rc == 0 && job->transaction) job->rc = command(job->mysql, COMMIT, job->error);
        break;
    case '4': job->rc = w4_filter(job->mysql, job->count, &job->checksum, job->error); break;
    case '5': job->rc = w5_update(job->mysql, job->n, job->count, &job->checksum, job->error); break;
    case '6': job->rc = w6_exists(job->mysql, job->n, job->count, &job->checksum, job->error); break;
    case '7': job->rc = w7_count(job->mysql, job->count, &job->checksum, job->error); break;
    default:
        job->rc = -1;
        set_error(job->error, "no workload %c", job->which);
    }
}

/// Connects, runs `job` as the measured region (rawbench_measured: the workload alone),
/// then checks and frees what it returned and closes the connection, outside it.
static int run_measured(const rawmy_target *target, my_job *job, int64_t *checksum, double *seconds) {
    *checksum = 0;
    *seconds = 0;
    if (connect_db(target, &job->mysql, job->error) != 0) return -1;
    *seconds = rawbench_measured(my_body, job);
    *checksum = job->checksum;
    for (int64_t i = 0; i < job->users.count; i++) {
        *checksum += user_checksum(&job->users.items[i]);
        free_user(&job->users.items[i]);
    }
    free(job->users.items);
    mysql_close(job->mysql);
    return job->rc;
}

int rawmy_w1_insert(const rawmy_target *target, int64_t n, int64_t *checksum, double *seconds, rawmy_error *error) {
    my_job job = {.which = '1', .n = n, .error = error};
    return run_measured(target, &job, checksum, seconds);
}

int rawmy_w1_bulk(const rawmy_target *target, int64_t n, int64_t *checksum, double *seconds, rawmy_error *error) {
    my_job job = {.which = 'B', .n = n, .error = error};
    return run_measured(target, &job, checksum, seconds);
}

int rawmy_w2_fetch_all(const rawmy_target *target, int64_t *checksum, double *seconds, rawmy_error *error) {
    my_job job = {.which = '2', .error = error};
    return run_measured(target, &job, checksum, seconds);
}

int rawmy_w3_lookup(const rawmy_target *target, int64_t n, int64_t count, int transaction, int64_t *checksum,
                    double *seconds, rawmy_error *error) {
    my_job job = {.which = '3', .n = n, .count = count, .transaction = transaction, .error = error};
    return run_measured(target, &job, checksum, seconds);
}

int rawmy_w4_filter(const rawmy_target *target, int64_t count, int64_t *checksum, double *seconds,
                    rawmy_error *error) {
    my_job job = {.which = '4', .count = count, .error = error};
    return run_measured(target, &job, checksum, seconds);
}

int rawmy_w5_update(const rawmy_target *target, int64_t n, int64_t count, int64_t *checksum, double *seconds,
                    rawmy_error *error) {
    my_job job = {.which = '5', .n = n, .count = count, .error = error};
    return run_measured(target, &job, checksum, seconds);
}

int rawmy_w6_exists(const rawmy_target *target, int64_t n, int64_t count, int64_t *checksum, double *seconds,
                    rawmy_error *error) {
    my_job job = {.which = '6', .n = n, .count = count, .error = error};
    return run_measured(target, &job, checksum, seconds);
}

int rawmy_w7_count(const rawmy_target *target, int64_t count, int64_t *checksum, double *seconds,
                   rawmy_error *error) {
    my_job job = {.which = '7', .count = count, .error = error};
    return run_measured(target, &job, checksum, seconds);
}

// MARK: W8

typedef struct {
    const rawmy_target *target;
    int64_t n;
    int64_t count;
    uint64_t seed;
    int64_t batch;
    int64_t checksum;
    int64_t errors;
    int rc;  // -1 when the thread could not connect or prepare
    rawmy_error error;
} worker_t;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *reader_main(void *argument) {
    worker_t *worker = argument;
    mysql_thread_init();
    MYSQL *mysql;
    worker->rc = connect_db(worker->target, &mysql, &worker->error);
    if (worker->rc == 0) {
        worker->rc = lookups(mysql, worker->n, worker->count, worker->seed, &worker->checksum, &worker->errors,
                             &worker->error);
        mysql_close(mysql);
    }
    mysql_thread_end();
    return NULL;
}

/// One transaction of `count` inserts from row `first`; -1 on the first failure.
static int insert_batch(MYSQL *mysql, MYSQL_STMT *stmt, row_parameters *row, int64_t first, int64_t count,
                        rawmy_error *error) {
    if (command(mysql, BEGIN_WRITE, error) != 0) return -1;
    for (int64_t i = first; i < first + count; i++) {
        fill_row(row, i);
        if (mysql_stmt_execute(stmt) != 0) return fail_stmt(stmt, INSERT_USER, error);
        if (finish_result(stmt, INSERT_USER, error) != 0) return -1;
    }
    return command(mysql, COMMIT, error);
}

static void *writer_main(void *argument) {
    worker_t *worker = argument;
    mysql_thread_init();
    MYSQL *mysql;
    worker->rc = connect_db(worker->target, &mysql, &worker->error);
    if (worker->rc != 0) {
        mysql_thread_end();
        return NULL;
    }
    row_parameters row;
    MYSQL_STMT *stmt = prepare(mysql, INSERT_USER, &worker->error);
    worker->rc = stmt == NULL ? -1 : bind_row_parameters(stmt, &row, &worker->error);
    for (int64_t first = 0; worker->rc == 0 && first < worker->count; first += worker->batch) {
        int64_t count = worker->count - first < worker->batch ? worker->count - first : worker->batch;
        if (insert_batch(mysql, stmt, &row, worker->n + 1 + first, count, &worker->error) != 0) {
            worker->errors += 1;
            rawmy_error ignored;
            if (command(mysql, "ROLLBACK", &ignored) != 0) worker->rc = -1;
        }
    }
    if (stmt != NULL) mysql_stmt_close(stmt);
    mysql_close(mysql);
    mysql_thread_end();
    return NULL;
}

int rawmy_w8_concurrent(const rawmy_target *target, int64_t n, int readers, int64_t lookups_per_reader,
                        int64_t writes, int64_t batch, int64_t *errors, double *read_seconds, double *write_seconds,
                        int64_t *checksum, rawmy_error *error) {
    pthread_t threads[64];
    worker_t workers[64];
    *errors = 0;
    *checksum = 0;
    if (readers < 1 || readers > 63 || batch < 1) {
        set_error(error, "W8 needs 1 to 63 readers and a batch of at least 1");
        return -1;
    }
    pthread_once(&library_once, library_init);
    memset(workers, 0, sizeof workers);
    double start = now_seconds();
    workers[0] = (worker_t){.target = target, .n = n, .count = writes, .batch = batch};
    if (pthread_create(&threads[0], NULL, writer_main, &workers[0]) != 0) {
        set_error(error, "cannot start the writer thread");
        return -1;
    }
    int started;
    for (started = 1; started <= readers; started++) {
        workers[started] = (worker_t){.target = target, .n = n, .count = lookups_per_reader,
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
