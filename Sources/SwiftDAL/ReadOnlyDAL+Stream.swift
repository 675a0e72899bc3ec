import SwiftDALConnection
import SwiftDALIDAL

extension ReadOnlyDAL {
    /// The entities matching `condition` (every row when `nil`), in `orderBy` (or the
    /// default order), as a ``DatabaseStream`` for a `for try await` loop: the async
    /// counterpart of ``forEach(condition:orderBy:_:)``, for exports, batch jobs and
    /// streamed responses over large tables.
    ///
    /// The query is the one ``find(condition:orderBy:)-4x7du`` runs (this DAL's scope applied:
    /// its tenant only, soft-deleted rows left out), read in a read-only access of its own
    /// (one snapshot) on a SwiftDAL queue, and decoded there, at most
    /// ``DatabaseStream/bufferSize`` entities ahead of the loop. Leaving the loop early,
    /// or cancelling its task, stops the query and frees the connection at once (see
    /// ``DatabaseStream``). Errors, including those of the condition or the order
    /// (``DALError/Code/invalidColumn``, ``DALError/Code/tenantRequired``), are thrown by
    /// the loop; nothing runs until the loop asks for the first entity.
    ///
    /// For example:
    ///
    /// ```swift
    /// for try await order in orders.stream(condition: "placed_at >= \(since)", orderBy: "id") {
    ///     try await csv.write(order)
    ///     if csv.isFull { break }  // the query stops, the connection is back in the pool
    /// }
    /// ```
    public func stream(condition: SQL? = nil, orderBy: OrderBy? = nil) -> DatabaseStream<T> {
        DatabaseStream(database: database) { _, channel in
            try self.withMapping(writing: false) { db, mapping in
                let query = try self.selectQuery(mapping, condition: condition, orderBy: orderBy)
                try db.streamRows(query, fetchSize: channel.capacity) { row in
                    try channel.send(try self.decode(row, mapping))
                }
            }
        }
    }
}
