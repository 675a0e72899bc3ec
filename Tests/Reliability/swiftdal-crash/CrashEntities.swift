import SwiftDAL

/// A row written by a crash-test transaction: `rowsPerTransaction` of them per `txn`.
struct CrashRow: Entity, Codable {
    static let tableName = "crash_rows"
    var id: Int64?
    var txn: Int64
    var k: Int64
    var payload: String
}

/// The single state row, updated by every transaction (so each has an update too).
struct CrashState: Entity, Codable {
    static let tableName = "crash_state"
    var id: Int64
    var lastTxn: Int64
    var checksum: Int64

    enum CodingKeys: String, CodingKey {
        case id
        case lastTxn = "last_txn"
        case checksum
    }
}

final class CrashRowDAL: BaseDAL<CrashRow>, @unchecked Sendable {}
final class CrashStateDAL: BaseDAL<CrashState>, @unchecked Sendable {}

enum CrashSchema {
    static let migrator: Migrator = {
        var migrator = Migrator()
        migrator.register("1-crash-tables") { db in
            try db.create(table: CrashRow.self)
            try db.create(table: CrashState.self)
            try db.execute("INSERT INTO crash_state(id, last_txn, checksum) VALUES (1, 0, 0)")
        }
        return migrator
    }()
}

/// What a trial writes through, and its journal and sync settings. The pool modes write
/// through a `DatabasePool` (always WAL) while reader threads read through it.
enum CrashMode: String, CaseIterable {
    case walNormal = "wal-normal"
    case walFull = "wal-full"
    case deleteFull = "delete-full"
    case poolWalNormal = "pool-wal-normal"
    case poolWalFull = "pool-wal-full"

    /// The modes run by default: a `DatabaseQueue` writes alone.
    static let queueModes: [CrashMode] = [.walNormal, .walFull, .deleteFull]
    /// The modes run with `--pool`.
    static let poolModes: [CrashMode] = [.poolWalNormal, .poolWalFull]

    var usesPool: Bool { Self.poolModes.contains(self) }

    var configuration: Configuration {
        var configuration = Configuration()
        switch self {
        case .walNormal, .poolWalNormal:
            configuration.journalMode = .wal
            configuration.synchronous = .normal
        case .walFull, .poolWalFull:
            configuration.journalMode = .wal
            configuration.synchronous = .full
        case .deleteFull:
            configuration.journalMode = .delete
            configuration.synchronous = .full
        }
        return configuration
    }
}

let rowsPerTransaction: Int64 = 5
/// Reader threads in the pool modes (the pool has 4 reader connections by default).
let poolReaderThreads = 3
