public import SwiftDALConnection

/// Streams the rows of a query one at a time, so that a large result is never held in
/// memory whole.
///
/// The cursor owns its statement: it resets it when the rows run out, when a step
/// fails, and when the cursor is released, so an abandoned cursor never keeps a lock.
/// A cursor belongs to the access it was made in (the `read`/`write` closure of a queue
/// or pool): when that access ends, its statement is reset (so it never pins a snapshot
/// or a lock) and any later use throws ``DALError/Code/accessEnded``.
///
/// For example:
///
/// ```swift
/// try pool.read { db in
///     let cursor = try db.makeCursor("SELECT * FROM events ORDER BY id")
///     while let row = try cursor.next() {
///         try process(row)
///     }
/// }
/// ```
public final class RowCursor {
    /// Kept alive while the cursor is: the connection closes when its `Database` goes.
    private let database: Database
    private let connection: SQLiteConnection
    private let statement: Statement
    private let arguments: StatementArguments
    /// The access the cursor was made in (unused for a connection you opened yourself).
    private let epoch: UInt64
    private var isFinished = false

    init(database: Database, connection: SQLiteConnection, statement: Statement, arguments: StatementArguments)
        throws
    {
        self.database = database
        self.connection = connection
        self.statement = statement
        self.arguments = arguments
        epoch = database.access.epoch
        statement.isInUse = true
        connection.cursorOpened(statement)
        do {
            try statement.bind(arguments)
        } catch {
            finish(failed: true, error: error)
            throw error
        }
    }

    deinit {
        // A cursor released after its access ended must not touch the connection: the
        // access's end already reset its statement, and another thread may hold it now.
        if !isFinished && isCurrent { finish(failed: true) }
    }

    /// Whether the calling thread may step this cursor now.
    private var isCurrent: Bool {
        (try? database.access.check(epoch: epoch)) != nil
    }

    /// The result column names.
    ///
    /// For example, `let names = try cursor.columnNames`.
    public var columnNames: [String] {
        get throws {
            try database.access.check(epoch: epoch)
            return try statement.columnNames
        }
    }

    /// The next row, copied; `nil` when there are no more.
    ///
    /// For example, `while let row = try cursor.next() { … }`.
    public func next() throws -> Row? {
        try advance { try $0.copy() }
    }

    /// Calls `body` with a view of the next row (no copy); `false` when there are no more.
    ///
    /// For example, `while try cursor.next({ total += try $0.decode(Int.self, at: 0) }) {}`.
    public func next(_ body: (RowView) throws -> Void) throws -> Bool {
        try advance { try body($0) } != nil
    }

    private func advance<T>(_ body: (RowView) throws -> T) throws -> T? {
        try database.access.check(epoch: epoch)
        guard !isFinished else { return nil }
        do {
            guard try statement.step(arguments: arguments) else {
                finish(failed: false)
                return nil
            }
            return try body(statement.currentView)
        } catch {
            finish(failed: true, error: error)
            throw error
        }
    }

    /// Ends the cursor's statement; `failed` when it stopped early (an error, or the
    /// cursor released before its last row), so that its bindings are cleared too.
    private func finish(failed: Bool, error: (any Error)? = nil) {
        isFinished = true
        statement.isInUse = false
        connection.cursorFinished(statement)
        if failed {
            statement.resetAfterFailure(error)
        } else {
            try? statement.reset()  // after SQLITE_DONE the reset reports SQLITE_OK
        }
    }
}

@available(*, unavailable)
extension RowCursor: Sendable {}
