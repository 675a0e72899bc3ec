extension Database {
    /// Calls `body` with each row of `query` as it is read, for a stream (see
    /// ``DatabaseStream``): SQLite steps the statement (reset on every path, like
    /// ``forEachRow(_:_:)``); another engine reads `fetchSize` rows at a time through a
    /// cursor, inside the current transaction or a read-only one of its own. The observer
    /// hears of the query once, when it ends, with the rows read.
    package func streamRows(_ query: SQL, fetchSize: Int, _ body: (RowView) throws -> Void) throws {
        try access.check()
        try checkNotTransactionControl(query)
        if connection.streamsInATransaction && !isInTransaction {
            return try inTransaction(.deferred, isolation: .repeatableRead, readOnly: true) {
                try streamRows(query, fetchSize: fetchSize, body)
            }
        }
        guard let observation = callObservation else {
            engineChanges = try connection.stream(query, fetchSize: fetchSize, body)
            return
        }
        let start = MonotonicTime.now
        var rows = 0
        do {
            engineChanges = try connection.stream(query, fetchSize: fetchSize) { row in
                rows += 1
                try body(row)
            }
            observation.report(sql: query.sql, since: start, rowCount: rows, error: nil)
        } catch {
            observation.report(sql: query.sql, since: start, rowCount: rows, error: error)
            throw error
        }
    }
}
