#ifndef CSWIFTDALMARIADB_SHIM_H
#define CSWIFTDALMARIADB_SHIM_H
// The MySQL C API of MariaDB Connector/C (Debian: libmariadb-dev), found through
// pkg-config "libmariadb". Only the SwiftDALMariaDB module imports this module.
#include <mysql.h>
#include <stdint.h>
#include <string.h>

// Flag macros Swift does not import (or imports with another type), named as constants.
static const unsigned long swiftdal_mariadb_client_found_rows = CLIENT_FOUND_ROWS;
static const unsigned long swiftdal_mariadb_client_multi_statements = CLIENT_MULTI_STATEMENTS;
static const unsigned long swiftdal_mariadb_client_multi_results = CLIENT_MULTI_RESULTS;
static const unsigned int swiftdal_mariadb_server_status_in_trans = SERVER_STATUS_IN_TRANS;
static const unsigned int swiftdal_mariadb_unsigned_flag = UNSIGNED_FLAG;
static const int swiftdal_mariadb_no_data = MYSQL_NO_DATA;
static const int swiftdal_mariadb_data_truncated = MYSQL_DATA_TRUNCATED;
static const unsigned long swiftdal_mariadb_cursor_type_read_only = CURSOR_TYPE_READ_ONLY;

// mariadb_get_infov is variadic (Swift calls no variadic C function): one wrapper per value.

/// The server status flags of the last answer (SERVER_STATUS_IN_TRANS, …), read from the
/// connection's public struct, where mariadb_get_infov reads it too: it runs around every
/// statement inside a transaction, and the call cost ~80 instructions (callgrind, W6).
static inline unsigned int swiftdal_mariadb_server_status(MYSQL *mysql) {
    return mysql->server_status;
}

/// The connection's socket, or -1.
static inline int swiftdal_mariadb_socket(MYSQL *mysql) {
    my_socket socket = MARIADB_INVALID_SOCKET;
    if (mariadb_get_infov(mysql, MARIADB_CONNECTION_SOCKET, &socket)) return -1;
    return (int)socket;
}
/// Whether the server runs a statement for many rows of parameters in one command
/// (MariaDB's COM_STMT_BULK_EXECUTE, STMT_ATTR_ARRAY_SIZE): a MariaDB server that says so
/// (MARIADB_CLIENT_STMT_BULK_OPERATIONS), not MySQL's (CLIENT_MYSQL).
static inline int swiftdal_mariadb_runs_bulk(MYSQL *mysql) {
    unsigned long capabilities = 0, extended = 0;
    if (mariadb_get_infov(mysql, MARIADB_CONNECTION_SERVER_CAPABILITIES, &capabilities)) return 0;
    if (mariadb_get_infov(mysql, MARIADB_CONNECTION_EXTENDED_SERVER_CAPABILITIES, &extended)) return 0;
    return (capabilities & CLIENT_MYSQL) == 0 && (extended & (MARIADB_CLIENT_STMT_BULK_OPERATIONS >> 32)) != 0;
}

/// What a result column's kind is read from, packed: its type, unsigned flag, character set
/// and fraction digits. A statement keeps its result binding while these and the columns'
/// names stay the same (`MariaDBResultBinding`).
static inline uint64_t swiftdal_mariadb_field_signature(const MYSQL_FIELD *field) {
    uint64_t is_unsigned = (field->flags & UNSIGNED_FLAG) != 0;
    return (uint64_t)field->type | is_unsigned << 16 | (uint64_t)field->charsetnr << 17
        | (uint64_t)(field->decimals & 0x7FFF) << 49;
}

/// Whether `count` fields have the signatures and names packed in `identity`: per field two
/// uint64_t, its signature and its name's length (UINT64_MAX: it had no name, which never
/// matches), then the names' bytes one after the other. Runs at every execution of a
/// statement that returns rows, so it reads the 128-byte fields in place.
static inline int swiftdal_mariadb_fields_match(const MYSQL_FIELD *fields, size_t count, const void *identity) {
    const uint64_t *entries = (const uint64_t *)identity;
    const char *names = (const char *)identity + count * 2 * sizeof(uint64_t);
    for (size_t i = 0; i < count; i++) {
        const MYSQL_FIELD *field = fields + i;
        uint64_t length = entries[2 * i + 1];
        if (entries[2 * i] != swiftdal_mariadb_field_signature(field) || field->name == NULL
            || (uint64_t)field->name_length != length) {
            return 0;
        }
        /* Compared here, not with memcmp: column names are short, and a call per column
           cost more than the bytes (callgrind, W3 on MariaDB: ~20 instructions a column).
           Eight bytes at a time: an expression's name is its text (`EXISTS(SELECT …)`,
           ~300 instructions a call byte by byte, W6). */
        uint64_t byte = 0;
        for (; byte + 8 <= length; byte += 8) {
            uint64_t left, right;
            memcpy(&left, field->name + byte, 8);
            memcpy(&right, names + byte, 8);
            if (left != right) return 0;
        }
        for (; byte < length; byte++) {
            if (field->name[byte] != names[byte]) return 0;
        }
        names += length;
    }
    return 1;
}
#endif
