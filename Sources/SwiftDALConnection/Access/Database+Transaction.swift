import Synchronization

/// How a transaction takes its locks.
///
/// For example, `try db.inTransaction(.immediate) { … }`.
public enum TransactionKind: String, Sendable {
    /// Locks on first access. A deferred transaction that reads and then writes while
    /// another connection writes fails at once with `SQLITE_BUSY_SNAPSHOT` in WAL mode.
    case deferred = "DEFERRED"
    /// Takes the write lock at `BEGIN`: the right kind for any transaction that writes.
    case immediate = "IMMEDIATE"
    /// Takes the write lock and keeps readers out (in rollback-journal mode).
    case exclusive = "EXCLUSIVE"
}

extension Database {
    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    ///
    /// Inside another transaction it nests as a savepoint (`kind` is then ignored): a
    /// nested throw undoes only the nested work, and nothing is committed until the
    /// outermost transaction commits.
    ///
    /// For example:
    ///
    /// ```swift
    /// try db.inTransaction(.immediate) {
    ///     try db.execute("UPDATE accounts SET balance = balance - \(amount) WHERE id = \(from)")
    ///     try db.execute("UPDATE accounts SET balance = balance + \(amount) WHERE id = \(to)")
    /// }
    /// ```
    ///
    /// On PostgreSQL, `isolation` sets the isolation level (`nil`: the server's default,
    /// read committed); SQLite transactions are always serializable and ignore it.
    ///
    /// The transaction ends with `body`: a statement of it that would end or start one
    /// (`COMMIT`, `ROLLBACK`, `BEGIN`, `START TRANSACTION`, …) throws
    /// ``DALError/Code/unsupportedOperation`` and is not sent. Savepoints run as written.
    @discardableResult
    public func inTransaction<T>(
        _ kind: TransactionKind = .deferred, isolation: IsolationLevel? = nil, _ body: () throws -> T
    ) throws -> T {
        try inTransaction(kind, isolation: isolation, readOnly: false, body)
    }

    /// `inTransaction`, read-only on engines that have read-only transactions (a pool's
    /// `read` on PostgreSQL).
    package func inTransaction<T>(
        _ kind: TransactionKind, isolation: IsolationLevel?, readOnly: Bool, _ body: () throws -> T
    ) throws -> T {
        if isInTransaction {
            return try inSavepoint(body)
        }
        if mayCommitImplicitly { _ = connection.takeImplicitCommit() }  // one of a transaction begun by hand
        try execute(sql: connection.beginStatement(kind, isolation: isolation, readOnly: readOnly))
        let result: T
        do {
            markTransactionsBody(true)
            defer { markTransactionsBody(false) }
            result = try body()
        } catch {
            // A statement ended the transaction before its end (MariaDB's DDL, or an
            // executable comment's COMMIT): what ran before it was not rolled back, and the
            // error says so.
            // Asked before this ROLLBACK, which ends the transaction too.
            let ended = mayCommitImplicitly ? connection.takeImplicitCommit() : nil
            rollbackQuietly()
            if let ended { throw committedImplicitly(ended, error) }
            throw error
        }
        // All of it committed, as the call says (asked before this COMMIT, which ends it).
        if mayCommitImplicitly { _ = connection.takeImplicitCommit() }
        do {
            try execute(sql: "COMMIT")
        } catch let error as DALError where readOnly && error.code == .outcomeUnknown {
            // A read-only transaction commits nothing: whatever became of its `COMMIT` (the
            // connection lost as it was sent), its reads stand, and nothing is unknown.
            rollbackQuietly()
            return result
        } catch {
            rollbackQuietly()
            throw error
        }
        return result
    }

    /// Runs `body` inside a savepoint: released when it returns, rolled back to when it
    /// throws. Works inside or outside a transaction.
    ///
    /// For example, `try db.inSavepoint { try db.execute("INSERT …") }`.
    @discardableResult
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "swiftdal_savepoint_\(savepointDepth)"
        let outermost = !isInTransaction
        try execute(sql: "SAVEPOINT \(name)")
        // A savepoint outside any transaction begins one (SQLite): its body may not end or
        // start it either (its own `COMMIT` would commit, and the `RELEASE` then fail).
        let guardsItsBody = outermost && isInTransaction && !runsATransactionsBody.load(ordering: .relaxed)
        let result: T
        do {
            if guardsItsBody { markTransactionsBody(true) }
            defer { if guardsItsBody { markTransactionsBody(false) } }
            result = try body()
        } catch {
            // If SQLite already rolled the whole transaction back (SQLITE_FULL, …),
            // the savepoint is gone and there is nothing left to undo.
            if isInTransaction {
                _ = try? execute(sql: "ROLLBACK TO SAVEPOINT \(name)")
                _ = try? execute(sql: "RELEASE SAVEPOINT \(name)")
            }
            throw error
        }
        try execute(sql: "RELEASE SAVEPOINT \(name)")
        return result
    }

    /// Rolls back a transaction that a failed `ROLLBACK` left open (SQLite documents that
    /// a rollback can fail, for instance out of memory). Called whenever a queue or pool
    /// hands this connection out, so that new work never joins a failed transaction.
    /// Throws when the transaction still cannot be rolled back.
    package func discardLeftoverTransaction() throws {
        guard isInTransaction else { return }
        try execute(sql: "ROLLBACK")
    }

    /// The error of a transaction that `statement` committed on its own before its end,
    /// whose body then threw `error`.
    private func committedImplicitly(_ statement: String, _ error: any Error) -> DALError {
        DALError(
            .committedImplicitly,
            "the transaction failed (see the underlying error), but was not rolled back whole: a statement in it "
                + "ended it first (MariaDB commits at DDL, even DDL that fails, at LOCK TABLES and a few more; or "
                + "the transaction's own COMMIT, ROLLBACK or START TRANSACTION), so what it wrote up to that "
                + "statement may be committed, and each statement after it ran, and committed, on its own. Run such "
                + "statements outside a write, or in a migration",
            sql: statement, underlying: error)
    }

    /// Runs `body` letting statements that commit the transaction on their own through
    /// (a migration step's DDL), without refusing what follows them.
    package func toleratingImplicitCommits<T>(_ body: () throws -> T) rethrows -> T {
        connection.tolerateImplicitCommits(true)
        defer { connection.tolerateImplicitCommits(false) }
        return try body()
    }

    /// Throws, sending nothing, when `query` would end or start a transaction inside the
    /// body of one this `Database` runs: its end is the call's (the body returns to commit,
    /// throws to roll back), and each engine would do something else with it (SQLite
    /// commits, then fails the call's `COMMIT` with the rows written; PostgreSQL commits and
    /// runs the rest outside any transaction; MariaDB commits and starts another). The
    /// common statements cost a look at their first bytes. An engine that steps its own
    /// statements (SQLite) checks each when it is prepared, and refuses it at its first
    /// step (``ConnectionAccess/refusesTransactionControl``): its calls do not come here.
    /// Called where every statement of the other engines goes (``run(_:_:)``, and a
    /// stream's start), not in the generic reads inlined into their callers.
    func checkNotTransactionControl(_ query: SQL) throws {
        guard runsATransactionsBody.load(ordering: .relaxed), TransactionControl.mayControl(query.sql) else { return }
        if let refusal = TransactionControl.refusal(of: query.sql, dialect: engine.dialect) { throw refusal }
    }

    /// Throws, sending nothing, when a statement of `script` would end or start a
    /// transaction inside the body of one this `Database` runs (see
    /// ``checkNotTransactionControl(_:)``): the script is split into statements as the
    /// engine reads it (``EngineDialect/scriptStatements(_:)``).
    func checkNoTransactionControl(inScript script: String) throws {
        guard runsATransactionsBody.load(ordering: .relaxed) else { return }
        if let refusal = TransactionControl.refusal(ofScript: script, dialect: engine.dialect) { throw refusal }
    }

    /// Marks the start (`true`) or end of the body of a transaction this `Database` runs,
    /// for both places that refuse its transaction control: ``checkNotTransactionControl(_:)``
    /// here, and SQLite's statements at their first step
    /// (``ConnectionAccess/refusesTransactionControl``).
    private func markTransactionsBody(_ runs: Bool) {
        runsATransactionsBody.store(runs, ordering: .relaxed)
        access.refusesTransactionControl = runs
    }

    /// Rolls back, unless SQLite already did (some errors roll back on their own).
    private func rollbackQuietly() {
        guard isInTransaction else { return }
        _ = try? execute(sql: "ROLLBACK")
    }
}
