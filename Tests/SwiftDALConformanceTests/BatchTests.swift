import Foundation
import SampleDAL
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALMariaDB
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// `insertRange` on both engines: on PostgreSQL its inserts are pipelined, a thousand
/// statements sent before their results are read. What it writes, how a failing row is
/// reported, and what is left on the server, looked at from a second connection.
private struct Label: Entity, Codable {
    static let tableName = "labels"
    var id: Int64?
    var text: String
}

private struct Tag: Entity, Codable {
    static let tableName = "tags"
    var id: Int64?
    var text: String
}

private struct TagThroughView: Entity, Codable {
    static let tableName = "tag_view"
    var id: Int64?
    var text: String
}

private struct Sealed: Entity, Codable {
    static let tableName = "sealed"
    var id: Int64?
    var text: String
}

private struct Guarded: Entity, Codable {
    static let tableName = "guarded"
    var id: Int64?
    var text: String
}

private struct Blob: Entity, Codable {
    static let tableName = "blobs"
    var id: Int64?
    var body: Data
}

private struct Code: Entity, Codable, Equatable {
    static let tableName = "codes"
    static let primaryKey = ["code"]
    var code: String
    var name: String
    var age: Int
}

@Suite struct BatchTests {
    /// The users whose email starts with `prefix`, counted from outside the pool on a
    /// server (psql, the mariadb client), through the pool on SQLite.
    private func count(_ sample: SampleDatabase, prefix: String) throws -> Int {
        try scalar(sample, "SELECT count(*) FROM users WHERE email LIKE '\(prefix)%'")
    }

    /// A number a query returns, read from outside the pool on a server (psql, the
    /// mariadb client), through the pool on SQLite.
    private func scalar(_ sample: SampleDatabase, _ sql: String) throws -> Int {
        guard let printed = try sample.fromOutside(sql) else {
            return try sample.database.read { try $0.fetchScalar(Int.self, SQL(sql: sql)) } ?? -1
        }
        return Int(printed) ?? -1
    }

    /// Counts in `updates_seen` every row an `UPDATE` of `users` writes (a trigger): what
    /// a batch wrote, seen from the table.
    private func countUpdates(_ sample: SampleDatabase) throws {
        try sample.database.write { db in
            switch sample.engine {
            case .sqlite:
                try db.executeScript(
                    """
                    CREATE TABLE updates_seen(n INTEGER NOT NULL); INSERT INTO updates_seen VALUES (0);
                    CREATE TRIGGER seen AFTER UPDATE ON users BEGIN UPDATE updates_seen SET n = n + 1; END
                    """)
            case .postgres:
                try db.executeScript(
                    """
                    CREATE TABLE updates_seen(n BIGINT NOT NULL); INSERT INTO updates_seen VALUES (0);
                    CREATE FUNCTION seen() RETURNS trigger LANGUAGE plpgsql
                        AS $$ BEGIN UPDATE updates_seen SET n = n + 1; RETURN NEW; END $$;
                    CREATE TRIGGER seen AFTER UPDATE ON users FOR EACH ROW EXECUTE FUNCTION seen()
                    """)
            case .mariadb:
                try db.executeScript(
                    """
                    CREATE TABLE updates_seen(n BIGINT NOT NULL); INSERT INTO updates_seen VALUES (0);
                    CREATE TRIGGER seen AFTER UPDATE ON users FOR EACH ROW UPDATE updates_seen SET n = n + 1
                    """)
            }
        }
    }

    /// `count` users named "ranged…" inserted, their updates counted from then on
    /// (``countUpdates(_:)``), read back in key order.
    private func rangedUsers(_ sample: SampleDatabase, _ count: Int) throws -> [UserInfo] {
        try sample.users.insertRange(batch("ranged", count))
        try countUpdates(sample)
        return try sample.users.find(condition: "email LIKE \("ranged%")", orderBy: "id")
    }

    private func batch(_ prefix: String, _ count: Int) -> [UserInfo] {
        (0..<count).map { UserInfo(name: "\(prefix) \($0)", email: "\(prefix)\($0)@example.com", age: $0 % 90) }
    }

    /// Every row is written with its values, in the order given, across several pipelines
    /// (2,500 rows: three of them on PostgreSQL).
    @Test(arguments: Engine.allCases)
    func insertRangeWritesEveryRowInOrderAcrossPipelines(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let rows = batch("piped", 2_500)
        #expect(try sample.users.insertRange(rows) == 2_500)
        #expect(try count(sample, prefix: "piped") == 2_500)
        let stored = try sample.users.find(condition: "email LIKE \("piped%")", orderBy: "id")
        #expect(stored.map(\.email) == rows.map(\.email))
        #expect(stored.map(\.age) == rows.map(\.age))
        #expect(stored.map(\.name) == rows.map(\.name))
    }

    /// `insertRange2` returns each new row's key, in the order of the entities, and each
    /// is the key of the row with that entity's values; a failing row writes nothing and
    /// names its index, as with `insertRange`.
    @Test(arguments: Engine.allCases)
    func insertRange2ReturnsEachNewRowsKeyInOrder(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let rows = batch("keyed", 1_300)
        let ids = try sample.users.insertRange2(rows)
        #expect(ids.count == 1_300)
        #expect(Set(ids).count == 1_300)
        for (row, id) in zip(rows, ids) where id % 97 == 0 || id == ids.last {
            #expect(try sample.users.findById(id)?.email == row.email)
        }
        let stored = try sample.users.find(condition: "email LIKE \("keyed%")", orderBy: "id")
        #expect(stored.compactMap(\.id) == ids)
        var failing = batch("keyfail", 1_100)
        failing[1_050].email = rows[3].email
        let error = #expect(throws: (any Error).self) { try sample.users.insertRange2(failing) }
        #expect((error as? any DatabaseError)?.batchIndex == 1_050)
        #expect(try count(sample, prefix: "keyfail") == 0)
        #expect(try sample.users.insertRange2([]) == [])
    }

    /// A row that fails (here a duplicate email) fails the whole batch: nothing of it is
    /// written, and the engine's typed error names the failing entity's index, wherever it
    /// is (the first row, inside a later pipeline, the last row). The pool's connection
    /// goes on working, and on PostgreSQL no session is left in a transaction.
    @Test(arguments: Engine.allCases)
    func aFailingRowNamesItsIndexAndNothingIsWritten(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let taken = try #require(try sample.users.getAll(orderBy: "id").first).email
        for failing in [0, 1_234, 2_199] {
            var rows = batch("failing\(failing)-", 2_200)
            rows[failing].email = taken
            let error = #expect(throws: (any Error).self) { try sample.users.insertRange(rows) }
            let failure = error as? any DatabaseError
            #expect(failure?.constraintKind == .unique, "\(String(describing: error))")
            #expect(failure?.batchIndex == failing)
            #expect(try count(sample, prefix: "failing\(failing)-") == 0)
        }
        if let pool = sample.database as? PostgresPool {
            #expect(try OutsideView.of(pool).sessionsIdleInTransaction() == 0)
        }
        #expect(try sample.users.insertRange(batch("after", 10)) == 10)
        #expect(try count(sample, prefix: "after") == 10)
    }

    /// Inside a caller's transaction a batch is a savepoint: its failure undoes the batch
    /// only, and what the transaction wrote before and after it commits.
    @Test(arguments: Engine.allCases)
    func aFailedBatchInsideATransactionUndoesOnlyItself(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let taken = try #require(try sample.users.getAll(orderBy: "id").first).email
        var rows = batch("inner", 1_500)
        rows[1_100].email = taken
        try sample.database.write { _ in
            try sample.users.insert(UserInfo(name: "before", email: "outer-before@example.com", age: 1))
            #expect(throws: (any Error).self) { try sample.users.insertRange(rows) }
            try sample.users.insert(UserInfo(name: "after", email: "outer-after@example.com", age: 2))
        }
        #expect(try count(sample, prefix: "outer-") == 2)
        #expect(try count(sample, prefix: "inner") == 0)
    }

    /// An observer hears of every statement of a batch, with no value: one event per row,
    /// or on MariaDB one per bulk execution (a thousand rows at most), counting its rows.
    @Test(arguments: Engine.allCases)
    func anObserverHearsOfEveryStatementOfABatch(_ engine: Engine) throws {
        let log = EventLog()
        let (sqlite, postgres, mariadb) = log.configurations
        let sample = try SampleDatabase(engine, sqlite: sqlite, postgres: postgres, mariadb: mariadb)
        defer { try? sample.close() }
        let (_, events) = try log.during { try sample.users.insertRange(batch("heard", 1_200)) }
        let inserts = events.filter { $0.sql.uppercased().hasPrefix("INSERT") }
        let perRun = engine == .mariadb ? [1_000, 200] : Array(repeating: 1, count: 1_200)
        #expect(inserts.map(\.rowCount) == perRun)
        #expect(inserts.allSatisfy { $0.error == nil && !$0.sql.contains("heard") })
        // A failing batch: the statements that ran, the failing one with its error; none of
        // those skipped after it. On MariaDB the bulk execution failed first (heard with its
        // error), then its statements ran one by one up to the failing one.
        var failing = batch("unheard", 1_200)
        failing[5].email = "heard0@example.com"
        let (_, failedEvents) = log.during { _ = try? sample.users.insertRange(failing) }
        let attempted = failedEvents.filter { $0.sql.uppercased().hasPrefix("INSERT") }
        let failures = attempted.filter { $0.error != nil }
        #expect(attempted.count == (engine == .mariadb ? 7 : 6))
        #expect(failures.count == (engine == .mariadb ? 2 : 1))
        #expect(failures.allSatisfy { ($0.error as? any DatabaseError)?.constraintKind == .unique })
        #expect(attempted.last?.error != nil)
    }

    /// A statement prepared inside a pipeline that an earlier failure skipped was never
    /// prepared on the server: the connection prepares it again at its next use. (The
    /// batch mixes two INSERTs new to the connection: one without the key, one with it.)
    @Test func aStatementSkippedInAFailedPipelineIsPreparedAgain() throws {
        var configuration = PostgresConfiguration()
        configuration.maximumConnections = 1  // every call on the connection the batch used
        let pool = try makePostgresPool(configuration)
        defer { try? pool.close() }
        try pool.write { db in
            try db.executeScript(
                "CREATE TABLE labels(id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, text TEXT UNIQUE NOT NULL)"
            )
        }
        let labels = BaseDAL<Label>(database: pool)
        try labels.insert(Label(text: "taken"))
        #expect(throws: (any Error).self) {
            try labels.insertRange([Label(text: "taken"), Label(id: 500, text: "keyed")])
        }
        try labels.insert(Label(id: 500, text: "keyed"))
        #expect(try labels.findById(500)?.text == "keyed")
    }

    /// `insertRange2` promises a key per entity: when a trigger skips a row (a `BEFORE
    /// INSERT` trigger returning NULL), the batch fails inside its transaction and writes
    /// nothing, rather than committing and throwing afterwards.
    @Test func insertRange2RefusesARowATriggerSkippedAndWritesNothing() throws {
        let sample = try SampleDatabase(.postgres)
        defer { try? sample.close() }
        try sample.database.write { db in
            try db.executeScript(
                """
                CREATE FUNCTION skip_some() RETURNS trigger LANGUAGE plpgsql
                    AS $$ BEGIN IF NEW.name LIKE 'skip%' THEN RETURN NULL; END IF; RETURN NEW; END $$;
                CREATE TRIGGER skip_some BEFORE INSERT ON users FOR EACH ROW EXECUTE FUNCTION skip_some()
                """)
        }
        var rows = batch("kept", 20)
        rows[7].name = "skip me"
        let error = #expect(throws: DALError.self) { try sample.users.insertRange2(rows) }
        #expect(error?.code == .noRowID)
        #expect(try count(sample, prefix: "kept") == 0)
    }

    /// `updateRange` writes every changed column of every entity that finds its row, and
    /// nothing for an unchanged one (rows written, counted by a trigger); an entity whose
    /// key finds no row, or is `nil`, is not counted. A change Swift's `==` cannot see
    /// (`"Caf\u{E9}"` to `"Cafe\u{301}"`) is written too.
    @Test(arguments: Engine.allCases)
    func updateRangeWritesEveryChangeAndNothingElse(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        var users = try rangedUsers(sample, 2_300)
        for index in users.indices where index % 3 == 0 { users[index].age += 1 }
        users[1].name = "Caf\u{E9}"
        var missing = users[4]
        missing.id = 99_999_999
        var unsaved = users[5]
        unsaved.id = nil
        #expect(try sample.users.updateRange(users + [missing, unsaved]) == 2_300)
        #expect(try scalar(sample, "SELECT n FROM updates_seen") == 767 + 1)
        let stored = try sample.users.find(condition: "email LIKE \("ranged%")", orderBy: "id")
        #expect(stored == users)
        users[1].name = "Cafe\u{301}"
        #expect(try sample.users.updateRange([users[1]]) == 1)
        #expect(try scalar(sample, "SELECT n FROM updates_seen") == 769)
        let name = try sample.users.findById(users[1].id ?? -1)?.name
        #expect(name.map { Array($0.utf8) } == Array("Cafe\u{301}".utf8))
        #expect(try sample.users.updateRange([]) == 0)
        // One key twice: the second entity sees the first's write, as two updates would.
        var first = users[10]
        first.name = "renamed"
        var second = users[10]
        second.age += 5
        #expect(try sample.users.updateRange([first, second]) == 2)
        let twice = try sample.users.findById(users[10].id ?? -1)
        #expect(twice?.name == users[10].name && twice?.age == users[10].age + 5, "\(String(describing: twice))")
    }

    /// Two entities whose keys differ for Swift but not for the server (here a trailing
    /// space: SQLite's `RTRIM` collation, PostgreSQL's `char(n)`, MariaDB's PAD SPACE
    /// collations; so too `citext`, a `uuid` in another case, MariaDB's case-insensitive
    /// collations) find one row. `updateRange` and `upsertRange` then write them one after
    /// the other, as two calls would: the row ends as the second entity, not as a mix of
    /// both computed against the row before the batch.
    @Test(arguments: Engine.allCases)
    func keysTheServerHoldsEqualAreWrittenOneAfterTheOther(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let key: String
        switch engine {
        case .sqlite: key = "TEXT COLLATE RTRIM"
        case .postgres: key = "char(8)"
        case .mariadb: key = "VARCHAR(8) COLLATE utf8mb4_general_ci"
        }
        try sample.database.write { db in
            try db.execute(
                sql: "CREATE TABLE codes(code \(key) PRIMARY KEY, name VARCHAR(20) NOT NULL, age INT NOT NULL)")
            try db.execute(sql: "INSERT INTO codes VALUES ('k1', 'original', 1)")
        }
        let codes = BaseDAL<Code>(database: sample.database)
        let found = try codes.updateRange([
            Code(code: "k1", name: "renamed", age: 1), Code(code: "k1 ", name: "original", age: 9)
        ])
        #expect(found == 2)
        let updated = try #require(try codes.getAll().first)
        #expect([updated.name, "\(updated.age)"] == ["original", "9"])
        try sample.database.write { try $0.execute(sql: "UPDATE codes SET name = 'original', age = 9") }
        try codes.upsertRange([
            Code(code: "k1", name: "upserted", age: 9), Code(code: "k1 ", name: "original", age: 20)
        ])
        let all = try codes.getAll()
        #expect(all.count == 1)
        #expect(all.map { [$0.name, "\($0.age)"] } == [["original", "20"]])
    }

    /// `upsertRange` inserts the new entities and writes the changed columns of the stored
    /// ones (nothing for the unchanged); `updateFieldsRange` writes the given columns of
    /// every row it finds.
    @Test(arguments: Engine.allCases)
    func upsertRangeAndUpdateFieldsRangeWriteWhatTheyAreGiven(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        try sample.users.insertRange(batch("kept", 1_200))
        try countUpdates(sample)
        var kept = try sample.users.find(condition: "email LIKE \("kept%")", orderBy: "id")
        for index in kept.indices where index % 4 == 0 { kept[index].age += 2 }
        try sample.users.upsertRange(kept + batch("fresh", 900))
        #expect(try count(sample, prefix: "fresh") == 900)
        #expect(try scalar(sample, "SELECT n FROM updates_seen") == 300)
        #expect(try sample.users.find(condition: "email LIKE \("kept%")", orderBy: "id") == kept)
        var again = batch("twice", 1)[0]
        again.id = 777_777
        var later = again
        later.name = "second"
        later.bio = "written"
        var last = later
        last.bio = nil
        try sample.users.upsertRange([again, later, last])
        #expect(try sample.users.findById(Int64(777_777)).map { [$0.name, $0.bio ?? "nil"] } == ["second", "nil"])
        var changes: [(key: Int64, fields: [String: (any DatabaseValueConvertible)?])] = kept.map {
            (key: $0.id ?? -1, fields: ["score": Double($0.age) * 0.5])
        }
        changes.append((key: 99_999_999, fields: ["score": 1.0]))
        #expect(try sample.users.updateFieldsRange(changes) == 1_200)
        #expect(try scalar(sample, "SELECT n FROM updates_seen") == 1_502)  // and the key given three times: 2
        let scores = try sample.users.find(condition: "email LIKE \("kept%")", orderBy: "id").map(\.score)
        #expect(scores == kept.map { Double($0.age) * 0.5 })
    }

    /// `updateFieldRange` writes each row its own value of one column (its count of updates
    /// read from outside the pool), keeps each value's type, stores `NULL` for `nil`,
    /// counts the keys it found; a failing row (a unique email) or an unknown column
    /// writes nothing, and the error names the row's index.
    @Test(arguments: Engine.allCases)
    func updateFieldRangeWritesEachRowItsValue(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let users = try rangedUsers(sample, 1_300)
        var changes = users.map { (key: $0.id ?? -1, value: Double($0.age) * 0.25 + 0.125) }
        changes.append((key: 99_999_999, value: 1.0))
        #expect(try sample.users.updateFieldRange("score", changes) == 1_300)
        #expect(try scalar(sample, "SELECT n FROM updates_seen") == 1_300)
        let scores = try sample.users.find(condition: "email LIKE \("ranged%")", orderBy: "id").map(\.score)
        #expect(scores == users.map { Double($0.age) * 0.25 + 0.125 })
        let none: [(key: Int64, value: Double)] = []
        #expect(try sample.users.updateFieldRange("score", none) == 0)
        #expect(
            #expect(throws: DALError.self) { try sample.users.updateFieldRange("no_such_column", none) }?.code
                == .invalidColumn)

        let ids = users.prefix(3).map { $0.id ?? -1 }
        #expect(try sample.users.updateFieldRange("bio", ids.map { (key: $0, value: "set" as String?) }) == 3)
        #expect(try sample.users.updateFieldRange("bio", [(key: ids[1], value: nil as String?)]) == 1)
        #expect(try ids.map { try sample.users.findById($0)?.bio } == ["set", nil, "set"])

        let ages = "SELECT sum(age) FROM users WHERE email LIKE 'ranged%'"
        let agesBefore = try scalar(sample, ages)
        let seen = try scalar(sample, "SELECT n FROM updates_seen")
        var emails = users.map { (key: $0.id ?? -1, value: "moved\($0.id ?? -1)@example.com") }
        emails[1_111].value = emails[5].value
        let error = #expect(throws: (any Error).self) { try sample.users.updateFieldRange("email", emails) }
        #expect((error as? any DatabaseError)?.constraintKind == .unique, "\(String(describing: error))")
        #expect((error as? any DatabaseError)?.batchIndex == 1_111)
        #expect(try count(sample, prefix: "moved") == 0)
        let unknown = #expect(throws: DALError.self) {
            try sample.users.updateFieldRange("no_such_column", users.map { (key: $0.id ?? -1, value: 1) })
        }
        #expect(unknown?.code == .invalidColumn)
        // A value that cannot be stored (NaN), after 1,200 that can (a second pipeline on
        // PostgreSQL): nothing written.
        var unstorable = users.map { (key: $0.id ?? -1, value: 7.5) }
        unstorable[1_200].value = .nan
        let notStored = #expect(throws: DALError.self) { try sample.users.updateFieldRange("score", unstorable) }
        #expect(notStored?.code == .invalidValue)
        #expect(try scalar(sample, "SELECT count(*) FROM users WHERE score = 7.5") == 0)
        #expect(try scalar(sample, ages) == agesBefore)
        #expect(try scalar(sample, "SELECT n FROM updates_seen") == seen)

        // Inside a `write`, a failing batch rolls back to its savepoint only: the writes
        // before and after it commit.
        let written = try sample.database.write { _ -> [Int] in
            let before = try sample.users.updateFieldRange("age", [(key: ids[0], value: 70)])
            let failed = (try? sample.users.updateFieldRange("email", emails)) == nil
            let after = try sample.users.updateFieldRange("age", [(key: ids[1], value: 71)])
            return [before, failed ? 1 : 0, after]
        }
        #expect(written == [1, 1, 1])
        #expect(try ids.prefix(2).map { try scalar(sample, "SELECT age FROM users WHERE id = \($0)") } == [70, 71])
        #expect(try count(sample, prefix: "moved") == 0)
        if let pool = sample.database as? PostgresPool {
            #expect(try OutsideView.of(pool).sessionsIdleInTransaction() == 0)
        }
    }

    /// A failing row fails the whole batch of `updateRange`, `updateFieldsRange` and
    /// `upsertRange`: nothing is written, and the error names the entity's index in what
    /// was given (not its statement's position: unchanged entities send none).
    @Test(arguments: Engine.allCases)
    func aFailingRowOfAnUpdateOrUpsertBatchNamesItsEntityAndNothingIsWritten(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        try sample.users.insertRange(batch("held", 1_500))
        let ages = "SELECT sum(age) FROM users WHERE email LIKE 'held%'"
        let agesBefore = try scalar(sample, ages)
        var users = try sample.users.find(condition: "email LIKE \("held%")", orderBy: "id")
        for index in users.indices where index % 2 == 0 { users[index].age += 1 }
        users[1_201].email = users[0].email
        let updateError = #expect(throws: (any Error).self) { try sample.users.updateRange(users) }
        #expect((updateError as? any DatabaseError)?.constraintKind == .unique, "\(String(describing: updateError))")
        #expect((updateError as? any DatabaseError)?.batchIndex == 1_201)
        #expect(try scalar(sample, ages) == agesBefore)

        var changes: [(key: Int64, fields: [String: (any DatabaseValueConvertible)?])] = users.map {
            (key: $0.id ?? -1, fields: ["age": 77])
        }
        changes[333].fields = ["email": users[0].email]
        let fieldsError = #expect(throws: (any Error).self) { try sample.users.updateFieldsRange(changes) }
        #expect((fieldsError as? any DatabaseError)?.batchIndex == 333)
        #expect(try scalar(sample, ages) == agesBefore)
        changes[333].fields = [:]
        #expect(#expect(throws: DALError.self) { try sample.users.updateFieldsRange(changes) }?.code == .invalidValue)

        users[1_201].email = "held1201@example.com"
        var fresh = batch("newcomer", 40)
        fresh[30].email = users[7].email
        let upsertError = #expect(throws: (any Error).self) { try sample.users.upsertRange(users + fresh) }
        #expect((upsertError as? any DatabaseError)?.batchIndex == 1_500 + 30)
        #expect(try scalar(sample, ages) == agesBefore)
        #expect(try count(sample, prefix: "newcomer") == 0)
        if let pool = sample.database as? PostgresPool {
            #expect(try OutsideView.of(pool).sessionsIdleInTransaction() == 0)
        }
        #expect(try sample.users.updateRange(users) == 1_500)
        #expect(try scalar(sample, ages) == agesBefore + 750)
    }

    /// `bulkInsert` (PostgreSQL: `COPY … FROM STDIN`) stores every value exactly: text
    /// holding COPY's own escapes (tabs, newlines, backslashes, a literal `\N`), `nil`
    /// apart from the empty string, bytes of every value, extreme doubles, dates; rows
    /// with and without their key (two `COPY`s) in the order given.
    @Test(arguments: Engine.allCases)
    func bulkInsertStoresEveryValueExactly(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let texts = ["tab\there", "line\nbreak\r\n", "back\\slash", "\\N", "\\.", "", "Cafe\u{301}", "\u{1F600} ok"]
        let doubles = [-0.0, 1e-300, Double.pi, -1.5e300, 0.1]
        var rows = [UserInfo]()
        for index in 0..<3_000 {
            var user = UserInfo(
                name: texts[index % texts.count], email: "bulk\(index)@example.com", age: index % 90)
            user.fullName = index % 3 == 0 ? nil : texts[(index + 1) % texts.count]
            user.bio = index % 5 == 0 ? "" : nil
            user.score = doubles[index % doubles.count]
            user.avatar = index % 4 == 0 ? Data([0, 0x5C, 0x0A, 0x09, UInt8(index % 256), 0xFF]) : nil
            user.createdAt = Date(timeIntervalSince1970: 1_700_000_000 + Double(index) * 3_600.5)
            if index >= 2_000 { user.id = Int64(1_000_000 + index) }  // keyed rows: a COPY of their own
            rows.append(user)
        }
        #expect(try sample.users.bulkInsert(rows) == 3_000)
        #expect(try count(sample, prefix: "bulk") == 3_000)
        let stored = try sample.users.find(condition: "email LIKE \("bulk%")", orderBy: "id")
        #expect(stored.count == 3_000)
        for (row, found) in zip(rows, stored) {
            var expected = row
            expected.id = found.id
            if found != expected { Issue.record("row \(row.email) stored as \(found)") }
            if Array(found.name.utf8) != Array(row.name.utf8) { Issue.record("\(row.email): name bytes differ") }
            // (SQLite stores an integral REAL as an integer: -0.0 comes back 0.0, as with insert.)
            if engine == .postgres, found.score.sign != row.score.sign {
                Issue.record("\(row.email): the sign of \(row.score) was lost")
            }
        }
        #expect(stored.suffix(1_000).compactMap(\.id) == (2_000..<3_000).map { Int64(1_000_000 + $0) })
        #expect(try sample.users.bulkInsert([]) == 0)
    }

    /// A row that fails a bulk load fails all of it: nothing is inserted, and the error
    /// names the row's index (the failing line on PostgreSQL, in the second COPY too). No
    /// session is left in a transaction; the pool's connection goes on working.
    @Test(arguments: Engine.allCases)
    func aFailingRowOfABulkInsertNamesItsIndexAndNothingIsInserted(_ engine: Engine) throws {
        let sample = try SampleDatabase(engine)
        defer { try? sample.close() }
        let taken = try #require(try sample.users.getAll(orderBy: "id").first).email
        for failing in [0, 2_345, 4_999] {
            var rows = batch("loading\(failing)-", 5_000)
            rows[failing].email = taken
            for index in 4_000..<5_000 { rows[index].id = Int64(2_000_000 + index) }
            let error = #expect(throws: (any Error).self) { try sample.users.bulkInsert(rows) }
            #expect((error as? any DatabaseError)?.constraintKind == .unique, "\(String(describing: error))")
            #expect((error as? any DatabaseError)?.batchIndex == failing)
            #expect(!"\(String(describing: error))".contains(taken))
            #expect(try count(sample, prefix: "loading\(failing)-") == 0)
        }
        if let pool = sample.database as? PostgresPool {
            // A value PostgreSQL text cannot hold (a NUL) aborts the COPY from this side.
            var nul = batch("nul", 3)
            nul[1].name = "a\u{0}b"
            #expect(#expect(throws: DALError.self) { try sample.users.bulkInsert(nul) }?.code == .invalidValue)
            #expect(try count(sample, prefix: "nul") == 0)
            #expect(try OutsideView.of(pool).sessionsIdleInTransaction() == 0)
        }
        #expect(try sample.users.bulkInsert(batch("afterwards", 10)) == 10)
        #expect(try count(sample, prefix: "afterwards") == 10)
    }

    /// Where `COPY` would not do what `INSERT`s do, `bulkInsert` sends `INSERT`s: a rule
    /// (which `COPY` ignores) still fires, a view takes its rows, a `GENERATED ALWAYS`
    /// identity column given a value is refused, bytes for a `text` column are stored as
    /// an `INSERT` binds them (not as bytea's hex text), and a table with row-level
    /// security (which `COPY FROM` refuses) is loaded under its policy.
    @Test func bulkInsertSendsInsertsWhereCopyWouldDiffer() throws {
        let pool = try makePostgresPool()
        defer { try? pool.close() }
        try pool.write { db in
            try db.executeScript(
                """
                CREATE TABLE tags(id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, text TEXT NOT NULL);
                CREATE TABLE tag_log(text TEXT NOT NULL);
                CREATE RULE logged AS ON INSERT TO tags DO ALSO INSERT INTO tag_log VALUES (NEW.text);
                CREATE VIEW tag_view AS SELECT id, text FROM tags;
                CREATE TABLE blobs(id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, body TEXT NOT NULL)
                """)
        }
        let tags = BaseDAL<Tag>(database: pool)
        #expect(try tags.bulkInsert((0..<5).map { Tag(text: "ruled \($0)") }) == 5)
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT count(*) FROM tag_log") } == 5)
        #expect(throws: (any Error).self) { try tags.bulkInsert([Tag(id: 99, text: "given")]) }
        #expect(try tags.getRecordCount(condition: "text = \("given")") == 0)
        #expect(try BaseDAL<TagThroughView>(database: pool).bulkInsert([TagThroughView(text: "viewed")]) == 1)
        #expect(try tags.getRecordCount(condition: "text = \("viewed")") == 1)
        let blobs = BaseDAL<Blob>(database: pool)
        #expect(try blobs.bulkInsert([Blob(body: Data("hi".utf8))]) == 1)
        #expect(try pool.read { try $0.fetchScalar(String.self, "SELECT body FROM blobs") } == "hi")
        // A GENERATED ALWAYS identity (no rule here): a given value refused, as INSERT does;
        // none given, loaded.
        try pool.write { db in
            try db.executeScript(
                """
                CREATE TABLE sealed(id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, text TEXT NOT NULL);
                CREATE TABLE guarded(id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, text TEXT NOT NULL);
                ALTER TABLE guarded ENABLE ROW LEVEL SECURITY;
                CREATE POLICY everyone ON guarded USING (true) WITH CHECK (text <> 'refused')
                """)
        }
        let sealed = BaseDAL<Sealed>(database: pool)
        #expect(throws: (any Error).self) { try sealed.bulkInsert([Sealed(id: 7, text: "given")]) }
        #expect(try sealed.bulkInsert([Sealed(text: "assigned"), Sealed(text: "too")]) == 2)
        #expect(try sealed.getRecordCount() == 2)
        // Row-level security, for a user it applies to (not the owner, not a superuser):
        // COPY FROM refuses the table; the INSERTs run, under the policy's check.
        let outside = try OutsideView.of(pool)
        let loader = "loader_\(outside.database)"
        try outside.psql(
            """
            CREATE ROLE \(loader) LOGIN; GRANT SELECT, INSERT ON guarded TO \(loader);
            GRANT USAGE ON SEQUENCE guarded_id_seq TO \(loader)
            """)
        let asLoader = try PostgresPool(
            url: outside.server.connectionString(database: outside.database).replacingOccurrences(
                of: "user=app", with: "user=\(loader)"))
        defer { try? asLoader.close() }
        let guarded = BaseDAL<Guarded>(database: asLoader)
        #expect(try guarded.bulkInsert([Guarded(text: "allowed"), Guarded(text: "also")]) == 2)
        #expect(throws: (any Error).self) { try guarded.bulkInsert([Guarded(text: "refused")]) }
        #expect(try guarded.getRecordCount() == 2)
    }
}
