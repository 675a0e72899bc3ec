#ifndef CSWIFTDALPOSTGRES_SHIM_H
#define CSWIFTDALPOSTGRES_SHIM_H
// PostgreSQL's own C client (Debian: libpq-dev), found through pkg-config "libpq".
// Only the SwiftDALPostgres module imports this module.
#include <libpq-fe.h>

// libpq's diagnostic field codes are character-literal macros; named here as constants.
static const int swiftdal_pg_diag_sqlstate = PG_DIAG_SQLSTATE;
static const int swiftdal_pg_diag_severity_nonlocalized = PG_DIAG_SEVERITY_NONLOCALIZED;
static const int swiftdal_pg_diag_message_primary = PG_DIAG_MESSAGE_PRIMARY;
static const int swiftdal_pg_diag_message_detail = PG_DIAG_MESSAGE_DETAIL;
static const int swiftdal_pg_diag_message_hint = PG_DIAG_MESSAGE_HINT;
static const int swiftdal_pg_diag_schema_name = PG_DIAG_SCHEMA_NAME;
static const int swiftdal_pg_diag_table_name = PG_DIAG_TABLE_NAME;
static const int swiftdal_pg_diag_column_name = PG_DIAG_COLUMN_NAME;
static const int swiftdal_pg_diag_constraint_name = PG_DIAG_CONSTRAINT_NAME;
static const int swiftdal_pg_diag_context = PG_DIAG_CONTEXT;
#endif
