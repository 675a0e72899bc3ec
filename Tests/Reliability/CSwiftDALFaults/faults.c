// Fault injection for SwiftDAL's reliability suite. See include/swiftdal_faults.h.
#include "swiftdal_faults.h"

#include <sqlite3.h>
#include <string.h>

// MARK: Allocator

static sqlite3_mem_methods real_memory;
static int64_t allocation_countdown = 0;  // <= 0: disarmed
static int64_t allocations_refused = 0;

static int refuse_allocation(void) {
    int64_t countdown = __atomic_load_n(&allocation_countdown, __ATOMIC_SEQ_CST);
    if (countdown <= 0) return 0;
    if (countdown > 1) {
        __atomic_sub_fetch(&allocation_countdown, 1, __ATOMIC_SEQ_CST);
        return 0;
    }
    __atomic_add_fetch(&allocations_refused, 1, __ATOMIC_SEQ_CST);
    return 1;  // stays at 1: every later allocation fails too, until disarmed
}

static void *faulty_malloc(int size) { return refuse_allocation() ? NULL : real_memory.xMalloc(size); }
static void faulty_free(void *pointer) { real_memory.xFree(pointer); }
static void *faulty_realloc(void *pointer, int size) {
    return refuse_allocation() ? NULL : real_memory.xRealloc(pointer, size);
}
static int faulty_size(void *pointer) { return real_memory.xSize(pointer); }
static int faulty_roundup(int size) { return real_memory.xRoundup(size); }
static int faulty_init(void *data) { return real_memory.xInit(data); }
static void faulty_shutdown(void *data) { real_memory.xShutdown(data); }

int swiftdal_faults_install_allocator(void) {
    int rc = sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real_memory);
    if (rc != SQLITE_OK) return rc;
    static sqlite3_mem_methods faulty;
    faulty = real_memory;
    faulty.xMalloc = faulty_malloc;
    faulty.xFree = faulty_free;
    faulty.xRealloc = faulty_realloc;
    faulty.xSize = faulty_size;
    faulty.xRoundup = faulty_roundup;
    faulty.xInit = faulty_init;
    faulty.xShutdown = faulty_shutdown;
    return sqlite3_config(SQLITE_CONFIG_MALLOC, &faulty);
}

void swiftdal_faults_fail_allocations_after(int64_t n) {
    __atomic_store_n(&allocations_refused, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&allocation_countdown, n > 0 ? n : 0, __ATOMIC_SEQ_CST);
}

int64_t swiftdal_faults_allocations_refused(void) { return __atomic_load_n(&allocations_refused, __ATOMIC_SEQ_CST); }

// MARK: VFS

static int64_t io_countdown = 0;
static int64_t io_failed = 0;

static int fail_io(void) {
    int64_t countdown = __atomic_load_n(&io_countdown, __ATOMIC_SEQ_CST);
    if (countdown <= 0) return 0;
    if (countdown > 1) {
        __atomic_sub_fetch(&io_countdown, 1, __ATOMIC_SEQ_CST);
        return 0;
    }
    __atomic_add_fetch(&io_failed, 1, __ATOMIC_SEQ_CST);
    return 1;
}

void swiftdal_faults_fail_io_after(int64_t n) {
    __atomic_store_n(&io_failed, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&io_countdown, n > 0 ? n : 0, __ATOMIC_SEQ_CST);
}

int64_t swiftdal_faults_io_failed(void) { return __atomic_load_n(&io_failed, __ATOMIC_SEQ_CST); }

typedef struct {
    sqlite3_file base;
    sqlite3_file *real;  // the default VFS's file, allocated right after this struct
} faulty_file;

#define REAL(file) (((faulty_file *)(file))->real)

static int f_close(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int f_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    return REAL(f)->pMethods->xRead(REAL(f), buffer, amount, offset);
}
static int f_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    if (fail_io()) return SQLITE_IOERR_WRITE;
    return REAL(f)->pMethods->xWrite(REAL(f), buffer, amount, offset);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 size) {
    if (fail_io()) return SQLITE_IOERR_TRUNCATE;
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int f_sync(sqlite3_file *f, int flags) {
    if (fail_io()) return SQLITE_IOERR_FSYNC;
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int f_file_size(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int f_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int f_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int f_check_reserved(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int f_file_control(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int f_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int f_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int f_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), page, size, extend, out);
}
static int f_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}
static void f_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int f_shm_unmap(sqlite3_file *f, int delete_flag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), delete_flag); }
static int f_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    return REAL(f)->pMethods->xFetch(REAL(f), offset, amount, out);
}
static int f_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *pointer) {
    return REAL(f)->pMethods->xUnfetch(REAL(f), offset, pointer);
}

static const sqlite3_io_methods faulty_methods_v1 = {
    1, f_close, f_read, f_write, f_truncate, f_sync, f_file_size, f_lock, f_unlock, f_check_reserved,
    f_file_control, f_sector_size, f_device, 0, 0, 0, 0, 0, 0};
static const sqlite3_io_methods faulty_methods_v3 = {
    3, f_close, f_read, f_write, f_truncate, f_sync, f_file_size, f_lock, f_unlock, f_check_reserved,
    f_file_control, f_sector_size, f_device, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, f_fetch, f_unfetch};

static sqlite3_vfs faulty_vfs;

static int f_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    sqlite3_vfs *real_vfs = (sqlite3_vfs *)vfs->pAppData;
    faulty_file *wrapper = (faulty_file *)file;
    wrapper->real = (sqlite3_file *)&wrapper[1];
    wrapper->base.pMethods = NULL;
    int rc = real_vfs->xOpen(real_vfs, name, wrapper->real, flags, out_flags);
    if (wrapper->real->pMethods != NULL) {
        wrapper->base.pMethods = wrapper->real->pMethods->iVersion >= 3 ? &faulty_methods_v3 : &faulty_methods_v1;
    }
    return rc;
}

int swiftdal_faults_register_vfs(void) {
    if (sqlite3_vfs_find("swiftdal-faulty") != NULL) return SQLITE_OK;
    sqlite3_vfs *real_vfs = sqlite3_vfs_find(NULL);
    if (real_vfs == NULL) return SQLITE_ERROR;
    faulty_vfs = *real_vfs;
    faulty_vfs.zName = "swiftdal-faulty";
    faulty_vfs.szOsFile = (int)sizeof(faulty_file) + real_vfs->szOsFile;
    faulty_vfs.pAppData = real_vfs;
    faulty_vfs.xOpen = f_open;
    faulty_vfs.pNext = NULL;
    return sqlite3_vfs_register(&faulty_vfs, 0);
}
