internal import CSwiftDALSQLite
public import SwiftDALConnection

/// How a WAL checkpoint treats readers and writers (`sqlite3_wal_checkpoint_v2`).
///
/// For example, `try pool.checkpoint(.truncate)`.
public enum CheckpointMode: Sendable, Hashable {
    /// Copies as many frames as possible without waiting for anyone.
    case passive
    /// Waits (up to the busy timeout) for readers of older snapshots, then copies every frame.
    case full
    /// As `full`, then waits until the next writer can start the log from its beginning.
    case restart
    /// As `restart`, then truncates the log file to zero bytes.
    case truncate

    var code: Int32 {
        switch self {
        case .passive: SQLITE_CHECKPOINT_PASSIVE
        case .full: SQLITE_CHECKPOINT_FULL
        case .restart: SQLITE_CHECKPOINT_RESTART
        case .truncate: SQLITE_CHECKPOINT_TRUNCATE
        }
    }
}

/// What a checkpoint did.
///
/// For example, `let result = try pool.checkpoint(); print(result.logFrames, result.checkpointedFrames)`.
public struct CheckpointResult: Sendable, Hashable {
    /// The frames in the write-ahead log (0 after a truncating checkpoint).
    public let logFrames: Int
    /// The frames copied into the database file (all of them when the checkpoint completed).
    public let checkpointedFrames: Int

    /// Whether every frame of the log is now in the database file.
    public var isComplete: Bool { logFrames == checkpointedFrames }
}

extension Database {
    /// Runs a WAL checkpoint on this connection (not inside a transaction). A `.full`,
    /// `.restart` or `.truncate` checkpoint waits up to the busy timeout for readers of
    /// older snapshots and throws `SQLITE_BUSY` if they are still reading.
    ///
    /// For example, `try db.checkpoint(.truncate)`.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) throws -> CheckpointResult {
        let handle = try sqliteConnection(for: "a WAL checkpoint").openHandle()
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, mode.code, &logFrames, &checkpointed)
        guard code == SQLITE_OK else { throw SQLiteError(connection: handle, code: code, sql: nil) }
        return CheckpointResult(logFrames: Int(max(logFrames, 0)), checkpointedFrames: Int(max(checkpointed, 0)))
    }
}
