#ifndef CSWIFTDALMARIADB_SHIM_H
#define CSWIFTDALMARIADB_SHIM_H
// The MySQL C API of MariaDB Connector/C (Debian: libmariadb-dev), found through
// pkg-config "libmariadb". Only the SwiftDALMariaDB module imports this module.
#include <mysql.h>

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

/// The server status flags of the last answer (SERVER_STATUS_IN_TRANS, …).
static inline unsigned int swiftdal_mariadb_server_status(MYSQL *mysql) {
    unsigned int status = 0;
    if (mariadb_get_infov(mysql, MARIADB_CONNECTION_SERVER_STATUS, &status)) return 0;
    return status;
}

/// The connection's socket, or -1.
static inline int swiftdal_mariadb_socket(MYSQL *mysql) {
    my_socket socket = MARIADB_INVALID_SOCKET;
    if (mariadb_get_infov(mysql, MARIADB_CONNECTION_SOCKET, &socket)) return -1;
    return (int)socket;
}
#endif
