import Foundation
import SampleDAL
import SwiftDALTestSupport
import Testing

/// Strings that break hand-written SQL: quotes of every kind, comments, stacked
/// statements, LIKE wildcards and escapes, NUL bytes, Unicode look-alikes and controls,
/// keywords, identifiers, very long text — the classics, then every opening (how a
/// pasted value escapes its context) combined with every payload.
let hostileStrings: [String] = {
    let classics = [
        "'); DROP TABLE users; --", "\"; DROP TABLE users; --", "' OR '1'='1", "' OR 1=1 --", "1; DELETE FROM users",
        "admin'--", "/* comment */ name", "name -- comment", "%", "_", "%_%", "\\", "\\%", "[%]", "^", "*",
        "Robert'); DROP TABLE students;--", "\u{0}", "a\u{0}b", "\u{0}'; DROP TABLE users; --",
        "ｕｓｅｒｓ", "ʼ OR ʼ1ʼ=ʼ1", "‘ OR ‘1’=‘1", "＇ OR 1=1 --", "\u{FF07}; DROP TABLE users",
        "SELECT", "rowid", "oid", "_rowid_", "id DESC; DROP TABLE users", "name, (SELECT sql FROM sqlite_master)",
        "`name`", "[name]", "\"name\"", "name\"", "\"", "'", "''", "\"\"", "`", "?", "?1", ":name", "@name", "$name",
        "😀", "\u{202E}gnp.exe", "\u{200B}", "\u{FEFF}name", "\r\n", "\t", "NULL", "null", "0x41", "X'41'",
        "1e999", "-9223372036854775809", "9223372036854775808", "CAST(1 AS TEXT)", "randomblob(1000000000)",
        "zeroblob(2147483647)", "load_extension('x')", "ATTACH DATABASE '/tmp/x' AS x", "PRAGMA writable_schema=1",
        "VACUUM INTO '/tmp/x'", "BEGIN; DELETE FROM users; COMMIT", "'||(SELECT sql FROM sqlite_master)||'",
        "name IS NOT NULL OR 1", ") OR (1=1", "'))--", "1)) UNION SELECT * FROM users--",
        String(repeating: "'", count: 1000), String(repeating: "a", count: 100_000)
    ]
    let openings = ["", "'", "\"", "')", "\")", "`", "]", "%'", "\\'"]
    let payloads = [
        "; DROP TABLE users; --", " OR 1=1 --", " UNION SELECT sql, 1, 1, 1 FROM sqlite_master --",
        "; UPDATE users SET age = 0; --", "/*", "; ATTACH DATABASE ':memory:' AS pwn; --",
        "; PRAGMA foreign_keys=OFF; --"
    ]
    var seen = Set<String>()
    return (classics + openings.flatMap { opening in payloads.map { opening + $0 } }).filter {
        seen.insert($0).inserted
    }
}()

/// SQLite refuses LIKE patterns longer than 50,000 bytes (SQLITE_LIMIT_LIKE_PATTERN_LENGTH).
let likePatternLimit = 50_000

@Suite struct HostileInputTests {
    private func schemaSnapshot(_ sample: Sample) throws -> [String] {
        try sample.queue.read {
            try $0.fetchColumn(String.self, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
        }
    }

    @Test func hostileStringsAsValuesAreStoredAndFoundLiterally() throws {
        let sample = try Sample()
        let schema = try schemaSnapshot(sample)
        for (index, text) in hostileStrings.enumerated() {
            let id = try sample.users.insert2(
                UserInfo(name: text, fullName: text, email: "hostile\(index)@x", age: 1, bio: text))
            #expect(try sample.users.findById(id)?.name == text, "value #\(index)")
            #expect(try sample.users.find(condition: "name = \(text)").map(\.id) == [id], "value #\(index)")
            #expect(try sample.users.isExist(fieldName: "bio", value: text), "value #\(index)")
            #expect(try sample.users.updateFields(["full_name": text + "!"], key: id))
            if text.utf8.contains(0) {
                #expect(
                    #expect(throws: DALError.self) { _ = try sample.users.search(keyword: text) }?.code
                        == .invalidValue, "value #\(index)")
            } else if text.utf8.count < likePatternLimit - 2 {
                #expect(try sample.users.search(keyword: text).contains { $0.id == id }, "value #\(index)")
            } else {
                // A pattern past SQLite's limit is a clear, typed error; nothing is matched or changed.
                #expect(
                    #expect(throws: SQLiteError.self) { _ = try sample.users.search(keyword: text) }?.message.contains(
                        "LIKE") == true)
            }
            #expect(try sample.users.getFieldValue(id, fieldName: "full_name", as: String.self) == text + "!")
            #expect(try sample.users.deleteByCondition("bio = \(text) AND id = \(id)") == 1)
        }
        #expect(try schemaSnapshot(sample) == schema)
        #expect(try sample.users.getRecordCount() == 8)
        #expect(try sample.orders.getRecordCount() == 8)
    }

    @Test func hostileStringsAsColumnNamesAreRejectedNamingTheColumn() throws {
        let sample = try Sample()
        let schema = try schemaSnapshot(sample)
        for (index, text) in hostileStrings.enumerated() where text.lowercased() != "rowid" {
            for (operation, check) in columnNameOperations(sample.users, text) {
                let error = #expect(throws: DALError.self, performing: check)
                #expect(error?.code == .invalidColumn, "\(operation) with hostile name #\(index)")
                #expect(error?.column == text, "\(operation) with hostile name #\(index)")
            }
            // The text form reads SQL's own quoting: "\"name\"" is the real column name.
            guard text != "\"name\"" else { continue }
            let parsed = #expect(throws: DALError.self) { _ = try sample.users.getAll(orderBy: OrderBy(parsing: text)) }
            #expect(parsed?.code == .invalidColumn, "parsed order #\(index)")
        }
        #expect(try schemaSnapshot(sample) == schema)
        #expect(try sample.users.findById(1)?.age == 34)
    }

    @Test func theCorpusIsLargeEnough() {
        #expect(hostileStrings.count >= 100)
        #expect(Set(hostileStrings).count == hostileStrings.count)
    }

    /// Every table's rows, for checking that nothing changed but what a test intended.
    private func everything(_ sample: Sample) throws -> [String] {
        try sample.queue.read { db in
            var lines = try db.fetchColumn(
                String.self, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
            for table in try db.tableNames() {
                lines += try db.fetchAll(SQL(sql: "SELECT * FROM \(quoteIdentifier(table)) ORDER BY 1, 2")).map(
                    \.description)
            }
            return lines
        }
    }

    @Test func hostileStringsThroughEveryReadingAPIChangeNothing() throws {
        let sample = try Sample()
        let before = try everything(sample)
        for (index, text) in hostileStrings.enumerated() {
            #expect(try sample.users.find(condition: "name = \(text) OR email = \(text)").isEmpty, "#\(index)")
            if text.utf8.contains(0) {
                #expect(
                    #expect(throws: DALError.self) {
                        _ = try sample.users.find(condition: "bio LIKE \(containing: text)")
                    }?.code
                        == .invalidValue)
            } else if text.utf8.count < likePatternLimit - 2 {
                // A match must really contain the text (LIKE ignores ASCII case): wildcards match literally.
                for user in try sample.users.find(condition: "bio LIKE \(containing: text)") {
                    #expect(
                        user.bio?.lowercased().contains(text.lowercased()) == true,
                        "#\(index) \(text.debugDescription.prefix(60))")
                }
                _ = try sample.users.findTop(
                    1, condition: "full_name LIKE \(startingWith: text) OR full_name LIKE \(endingWith: text)")
            }
            #expect(try sample.users.getRecordCount(condition: "name = \(text)") == 0, "#\(index)")
            #expect(try !sample.users.isExistRecord(condition: "email = \(text)"), "#\(index)")
            #expect(try !sample.users.isExist(fieldName: "name", value: text), "#\(index)")
            #expect(
                try sample.users.getFieldList("name", condition: "email = \(text)", as: String.self).isEmpty,
                "#\(index)")
            #expect(
                try sample.users.sqlValueList("SELECT name FROM users WHERE name = \(text)", as: String.self).isEmpty)
            #expect(
                try sample.users.findWithPager(condition: "bio = \(text)", pager: PagerInfo()).pager.recordCount == 0)
            #expect(try sample.tags.findByIds([CompositeKey(1, text)]).isEmpty, "#\(index)")
            #expect(try sample.tags.findById(CompositeKey(1, text)) == nil, "#\(index)")
            #expect(try sample.users.find(condition: SQL(sql: "name = :n", arguments: ["n": text])).isEmpty)
            #expect(try sample.users.deleteByCondition("name = \(text)") == 0, "#\(index)")
            #expect(try !sample.queue.read { try $0.tableExists(text) }, "#\(index)")
            #expect(
                #expect(throws: DALError.self) { _ = try sample.queue.read { try $0.describe(table: text) } }?.code
                    == .schemaMismatch,
                "#\(index)")
        }
        #expect(try everything(sample) == before)
    }

    @Test func hostileStringsAsKeysOfCompositeKeyedRowsRoundTrip() throws {
        let sample = try Sample()
        let before = try everything(sample)
        for text in hostileStrings {
            try sample.tags.insert(UserTag(userID: 2, tag: text))
            try sample.tags.upsert(UserTag(userID: 2, tag: text))
            #expect(try sample.tags.findById(CompositeKey(2, text))?.tag == text)
            #expect(try sample.tags.findByIds([CompositeKey(2, text), CompositeKey(2, "absent")]).map(\.tag) == [text])
            #expect(try sample.tags.getFieldValue(CompositeKey(2, text), fieldName: "tag", as: String.self) == text)
            #expect(try sample.tags.deleteById(CompositeKey(2, text)))
        }
        #expect(try everything(sample) == before)
    }

    @Test func hostileNamesInDefinitionsAreQuotedAndMigrationsRecordThemLiterally() throws {
        let queue = try DatabaseQueue.inMemory()
        for (index, text) in hostileStrings.enumerated()
        where !text.isEmpty && !text.contains("\u{0}") && text.count < 2000 {
            let table = "t\(index)" + text
            try queue.write { db in
                try db.create(
                    TableDefinition(table) { t in
                        t.column("c" + text, .text, default: .value(.text(text)))
                        t.index("i\(index)" + text, on: ["c" + text])
                    })
                try db.execute(SQL(sql: "INSERT INTO \(quoteIdentifier(table)) DEFAULT VALUES"))
                #expect(try db.fetchScalar(String.self, SQL(sql: "SELECT * FROM \(quoteIdentifier(table))")) == text)
                #expect(try db.describe(table: table).columns.map(\.name) == ["c" + text])
                try db.drop(table: table)
            }
        }
        #expect(try queue.read { try $0.tableNames() }.isEmpty)
        var migrator = Migrator()
        for text in hostileStrings.prefix(20) { migrator.register(text) { _ in } }
        #expect(try migrator.migrate(queue).count == 20)
        #expect(try migrator.pendingMigrations(queue).isEmpty)
    }
}
