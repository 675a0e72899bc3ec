import Foundation
import SwiftDALConnection
import SwiftDALTestSupport
import Testing

@testable import SwiftDALSQLite

/// Misuse and hostile conditions at the connection layer: each was a hole found by an
/// adversarial review (a wrong answer, a silent drop, a crash or a denial of service).
@Suite struct HardeningTests {
    @Test func aFailingTrailingStatementIsRefusedNotDropped() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(x INTEGER)")
        try db.execute(sql: "INSERT INTO t VALUES (0)")
        for text in [
            "INSERT INTO t VALUES (1); INSERT INTO typo_table VALUES (2)", "UPDATE t SET x = 5; this is not SQL",
            "UPDATE t SET x = 6; SELECT"
        ] {
            let error = #expect(throws: DALError.self) { try db.execute(sql: text) }
            #expect(error?.code == .invalidSQL, "\(text)")
        }
        #expect(try db.fetchColumn(Int.self, "SELECT x FROM t") == [0])  // nothing ran
        // Comments, white space and semicolons after the statement are fine.
        #expect(try db.execute(sql: "UPDATE t SET x = 8; -- done\n ; /* really */ ;") == 1)
        #expect(try db.execute(sql: "UPDATE t SET x = 9; /* a comment SQLite ends at the end of the text") == 1)
    }

    @Test func aNULInAPathIsRefusedBeforeAnyFileIsTouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("app.sqlite\u{0}.evil")
        for open in [
            { _ = try Database(path: path) }, { _ = try DatabaseQueue(path: path) },
            { _ = try DatabasePool(path: path) },
            { _ = try DatabaseQueue(path: directory.file("ok.sqlite"), template: directory.file("t\u{0}x")) }
        ] as [() throws -> Void] {
            #expect(#expect(throws: DALError.self, performing: open)?.code == .fileSystem)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func processesOpeningANewFileAtOnceAllStart() throws {
        // Switching a new file to WAL can fail at once with SQLITE_BUSY when two connections
        // escalate their locks together (SQLite refuses to wait, to avoid a deadlock);
        // opening retries it until the busy timeout, so concurrent openers never fail.
        // (Without the retry, about 20 of these 1,200 opens failed.)
        let directory = try TemporaryDirectory()
        let failures = Locked(0)
        for round in 0..<150 {
            let path = directory.file("race-\(round).sqlite")
            let group = DispatchGroup()
            let start = DispatchSemaphore(value: 0)
            for _ in 0..<8 {
                group.enter()
                Thread {
                    start.wait()
                    do {
                        var configuration = Configuration()
                        configuration.synchronous = .off
                        let db = try Database(path: path, configuration: configuration)
                        try db.close()
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                    group.leave()
                }.start()
            }
            for _ in 0..<8 { start.signal() }
            group.wait()
        }
        #expect(failures.withLock { $0 } == 0)
    }

    @Test func aTemplateThatIsASymbolicLinkIsCopiedNeverLinkedOrWritten() throws {
        let directory = try TemporaryDirectory()
        let template = directory.file("template.sqlite")
        let seed = try Database(path: template)
        try seed.execute(sql: "CREATE TABLE t(x)")
        try seed.execute(sql: "INSERT INTO t VALUES ('seed')")
        try seed.execute(sql: "PRAGMA journal_mode = DELETE")
        try seed.close()
        let original = try Data(contentsOf: URL(fileURLWithPath: template))
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("absolute-link"), withDestinationPath: template)
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("relative-link"), withDestinationPath: "template.sqlite")
        for (index, link) in ["absolute-link", "relative-link"].enumerated() {
            let path = directory.file("db\(index).sqlite")
            let queue = try DatabaseQueue(path: path, template: directory.file(link))
            try queue.write { try $0.execute(sql: "INSERT INTO t VALUES ('written')") }
            #expect(
                try queue.read { try $0.fetchColumn(String.self, "SELECT x FROM t ORDER BY rowid") } == [
                    "seed", "written"
                ])
            try queue.close()
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect(attributes[.type] as? FileAttributeType == .typeRegular, "\(link)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: template)) == original)
        // A dangling link where the database should be is refused, not followed.
        let dangling = directory.file("dangling.sqlite")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: directory.file("nowhere"))
        #expect(
            #expect(throws: DALError.self) { _ = try DatabaseQueue(path: dangling, template: template) }?.code
                == .fileSystem)
        #expect(!FileManager.default.fileExists(atPath: directory.file("nowhere")))
        // A directory is not a template.
        #expect(
            #expect(throws: DALError.self) {
                _ = try DatabaseQueue(path: directory.file("x.sqlite"), template: directory.path)
            }?.code
                == .fileSystem)
    }

    @Test func longValueListsBindLinearlyAndMatchLikeShortOnes() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        try db.inTransaction {
            for id in 1...2000 { try db.execute("INSERT INTO t VALUES (\(id), \("n\(id)"))") }
        }
        // 300,000 values: quadratic building took minutes; linear building takes moments.
        let ids = Array(stride(from: 2, through: 600_000, by: 2))
        let query: SQL = "SELECT COUNT(*) FROM t WHERE id IN (\(values: ids))"
        #expect(query.arguments.count == 1)  // one JSON array, not 300,000 parameters
        #expect(try db.fetchScalar(Int.self, query) == 1000)
        // The JSON form finds the same rows as the one-parameter-per-value form, for
        // integers, text (quotes, backslashes, control characters, non-ASCII) and NULL.
        let names = (1...300).map { "n\($0)" } + ["a\"b", "c\\d", "e\nf", "é😀", "\u{1}"]
        let long: SQL = "SELECT id FROM t WHERE name IN (\(values: names)) ORDER BY id"
        let short: SQL =
            "SELECT id FROM t WHERE name IN (\(values: Array(names.prefix(100)))) OR name IN (\(values: Array(names.dropFirst(100).prefix(100)))) OR name IN (\(values: Array(names.dropFirst(200))))"
        #expect(try db.fetchColumn(Int.self, long) == Array(1...300))
        #expect(try Set(db.fetchColumn(Int.self, short)) == Set(1...300))
        let textIDs = (1...150).map { String($0) }  // text compared with an INTEGER column: affinity applies
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t WHERE id IN (\(values: textIDs))") == 150)
        let withNull: [Int?] = (1...150).map { $0 % 2 == 0 ? nil : $0 }
        #expect(try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t WHERE id IN (\(values: withNull))") == 75)
    }

    @Test func listsThatCannotBeJSONFailPastTheParameterLimitWithATypedError() throws {
        let db = try Database.inMemory()
        try db.execute(sql: "CREATE TABLE t(b BLOB)")
        // More values than the parameter limit of SQLite builds (32,766 by default; Debian
        // builds raise it to 250,000).
        let blobs = (0..<260_000).map { Data([UInt8($0 % 256)]) }
        let error = #expect(throws: DALError.self) {
            _ = try db.fetchAll("SELECT * FROM t WHERE b IN (\(values: blobs))")
        }
        #expect(error?.code == .argumentMismatch)
        #expect(error?.message.contains("limit") == true)
        #expect((error?.sql?.count ?? .max) < 300)  // not the whole 520,000-character text
        #expect(try db.fetchAll("SELECT * FROM t WHERE b IN (\(values: Array(blobs.prefix(200))))").isEmpty)
    }

    @Test func insertReturnsARowidOnlyWhenTheStatementMadeOne() throws {
        let db = try Database.inMemory()
        try db.executeScript(
            """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE pairs(a INTEGER, b TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;
            CREATE VIEW note_view AS SELECT * FROM notes;
            """)
        #expect(try db.insert("INSERT INTO notes VALUES (777, 'x')") == 777)
        let noRowID = #expect(throws: DALError.self) { _ = try db.insert("INSERT INTO pairs VALUES (1, 'k')") }
        #expect(noRowID?.code == .noRowID)
        #expect(
            #expect(throws: DALError.self) { _ = try db.insert("INSERT OR IGNORE INTO notes VALUES (777, 'again')") }?
                .code == .noRowID)
        #expect(
            #expect(throws: DALError.self) { _ = try db.insert("INSERT INTO notes(body) VALUES ('a'), ('b')") }?.code
                == .noRowID)
        #expect(try db.insert("INSERT INTO notes(body) VALUES ('c')") == 780)
        #expect(try db.tableKind(of: "notes") == .rowIDTable)
        #expect(try db.tableKind(of: "pairs") == .withoutRowIDTable)
        #expect(try db.tableKind(of: "note_view") == .view)
        #expect(#expect(throws: DALError.self) { _ = try db.tableKind(of: "ghost") }?.code == .schemaMismatch)
    }

    /// A negative journal size limit is SQLite's "no limit" (-1), not a limit of 0 bytes
    /// that would cut the write-ahead log back to nothing at every checkpoint.
    @Test func aNegativeJournalSizeLimitMeansNoLimit() throws {
        let directory = try TemporaryDirectory()
        for (index, (limit, expected)) in [(-1, -1), (-5, -1), (0, 0), (4096, 4096)].enumerated() {
            var configuration = Configuration()
            configuration.journalSizeLimit = limit
            let db = try Database(path: directory.file("limit\(index).sqlite"), configuration: configuration)
            #expect(try db.fetchScalar(Int.self, "PRAGMA journal_size_limit") == expected, "\(limit)")
            try db.close()
        }
    }

    @Test func theWriteAheadLogShrinksOnceALongReaderEndsAndCanBeTruncated() throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration()
        configuration.journalSizeLimit = 512 * 1024
        configuration.synchronous = .normal
        let pool = try DatabasePool(path: directory.file("wal.sqlite"), configuration: configuration)
        try pool.write { try $0.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, payload TEXT)") }
        let walPath = directory.file("wal.sqlite-wal")
        func walSize() throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int) ?? 0
        }
        let payload = String(repeating: "x", count: 2000)
        let readerHolds = DispatchSemaphore(value: 0)
        let readerMayEnd = DispatchSemaphore(value: 0)
        let reader = Thread {
            _ = try? pool.read { db in
                _ = try db.fetchScalar(Int.self, "SELECT COUNT(*) FROM t")  // the snapshot is taken
                readerHolds.signal()
                readerMayEnd.wait()
            }
        }
        reader.start()
        readerHolds.wait()
        for batch in 0..<40 {
            try pool.write { db in
                for index in 0..<50 {
                    try db.execute("INSERT INTO t(payload) VALUES (\(payload + "\(batch)-\(index)"))")
                }
            }
        }
        let grown = try walSize()
        #expect(grown > 2 * 1024 * 1024)  // every write made during the read is kept in the log
        readerMayEnd.signal()
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        for _ in 0..<3 {
            try pool.write { db in try db.execute("INSERT INTO t(payload) VALUES ('after')") }
        }
        #expect(try walSize() <= 512 * 1024)  // cut back to the journal size limit
        let result = try pool.checkpoint(.truncate)
        #expect(result.isComplete)
        #expect(try walSize() == 0)
        #expect(try pool.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM t") } == 2003)
        try pool.close()
    }
}
