/// Streams the rows of a query one at a time, so that a large result is never held in
/// memory whole.
///
/// The cursor owns its statement: it resets it when the rows run out, when a step
/// fails, and when the cursor is released, so an abandoned cursor never keeps a lock.
/// A cursor belongs to the connection that made it and must not outlive the
/// `read`/`write` closure it was made in.
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
    private let statement: Statement
    private let arguments: StatementArguments
    private var isFinished = false

    init(statement: Statement, arguments: StatementArguments) throws {
        self.statement = statement
        self.arguments = arguments
        statement.isInUse = true
        do {
            try statement.bind(arguments)
        } catch {
            finish(failed: true)
            throw error
        }
    }

    deinit {
        if !isFinished { finish(failed: true) }
    }

    /// The result column names.
    public var columnNames: [String] { statement.columnNames }

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
        guard !isFinished else { return nil }
        do {
            guard try statement.step(arguments: arguments) else {
                finish(failed: false)
                return nil
            }
            return try body(RowView(statement: statement))
        } catch {
            finish(failed: true)
            throw error
        }
    }

    private func finish(failed: Bool) {
        isFinished = true
        statement.isInUse = false
        if failed {
            statement.resetAfterFailure()
        } else {
            try? statement.reset()  // after SQLITE_DONE the reset reports SQLITE_OK
        }
    }
}

@available(*, unavailable)
extension RowCursor: Sendable {}
