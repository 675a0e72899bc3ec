#ifndef CSWIFTDALSQLITE_SHIM_H
#define CSWIFTDALSQLITE_SHIM_H
// The system SQLite (Debian: libsqlite3-dev), found through pkg-config "sqlite3".
// Only the SwiftDALSQLite module imports this module.
#include <sqlite3.h>
#endif
