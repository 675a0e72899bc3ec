#ifndef SWIFTDAL_FAULTS_H
#define SWIFTDAL_FAULTS_H
// Fault injection for SwiftDAL's reliability suite (not part of the library):
// a wrapping allocator and a pass-through VFS that fail on demand.
#include <stdint.h>

/// Wraps SQLite's allocator. Must run before any other SQLite call in the process.
/// Returns an SQLite result code.
int swiftdal_faults_install_allocator(void);
/// From the `n`th allocation on (1 = the next one), every allocation fails, until
/// called again with n <= 0.
void swiftdal_faults_fail_allocations_after(int64_t n);
/// How many allocations were refused since the last arming.
int64_t swiftdal_faults_allocations_refused(void);

/// Registers the VFS "swiftdal-faulty", a pass-through over the default VFS.
int swiftdal_faults_register_vfs(void);
/// From the `n`th write, sync or truncate on: each fails (SQLITE_IOERR_WRITE, _FSYNC,
/// _TRUNCATE), until called again with n <= 0.
void swiftdal_faults_fail_io_after(int64_t n);
/// How many I/O operations failed since the last arming.
int64_t swiftdal_faults_io_failed(void);

#endif
