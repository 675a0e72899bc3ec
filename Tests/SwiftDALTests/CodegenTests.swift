import Foundation
import SwiftDAL
import SwiftDALCodegen
import SwiftDALTestSupport
import Testing

/// `swiftdal-gen`'s generator: the committed `Generated/CodegenTables.swift` (compiled into
/// this target) is exactly what the generator writes for `Fixtures/codegen.sql`, and the
/// DALs in it work against that schema.
@Suite struct CodegenTests {
    /// The command in `Fixtures/codegen.sql` that writes the committed file.
    static let command =
        "swift run swiftdal-gen --schema Fixtures/codegen.sql --internal --output Tests/SwiftDALTests/Generated/CodegenTables.swift"

    /// A queue on an in-memory database with the codegen schema.
    private func codegenDatabase() throws -> DatabaseQueue {
        let queue = try DatabaseQueue.inMemory()
        let script = try String(contentsOfFile: fixturesDirectory + "/codegen.sql", encoding: .utf8)
        try queue.write { try $0.executeScript(script) }
        return queue
    }

    /// A legacy schema's `BIT` flag is a `Bool`, and a table asked for in another case is
    /// generated with the schema's spelling (its `tableName` must name it on every engine).
    @Test func aBitFlagIsABoolAndATableKeepsItsSchemaSpelling() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE "Order Details"(OrderID INTEGER PRIMARY KEY, Discontinued BIT NOT NULL, Mask BIT(8))
                    """)
        }
        let source = try queue.read { try EntityGenerator().source(for: ["order details"], in: $0) }
        #expect(source.contains("static let tableName = \"Order Details\""), "\(source)")
        #expect(source.contains("var discontinued: Bool"), "\(source)")
        #expect(!source.contains("var mask: Bool"))
    }

    @Test func committedGeneratedFileIsWhatTheGeneratorWrites() throws {
        let generator = EntityGenerator(options: .init(access: .internal))
        let source = try codegenDatabase().read { try generator.source(in: $0, origin: Self.command) }
        let committedPath =
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().path + "/Generated/CodegenTables.swift"
        let committed = try String(contentsOfFile: committedPath, encoding: .utf8)
        #expect(source == committed, "regenerate it: \(Self.command)")
    }

    @Test func namesFollowTheSwiftGuidelinesAndStayUnique() throws {
        let generator = EntityGenerator()
        let queue = try codegenDatabase()
        let log = try queue.read { try generator.model(of: "event log", in: $0) }
        #expect(log.entityName == "EventLogInfo" && log.dalName == "EventLogDAL")
        #expect(
            log.properties.map(\.name) == [
                "eventID", "default", "class", "c2fa", "userID", "userID2", "row", "columns", "selfColumn", "type"
            ])
        #expect(log.properties[1].declaration == "var `default`: String")
        let tags = try queue.read { try generator.model(of: "article_tags", in: $0) }
        #expect(tags.entityName == "ArticleTagInfo" && tags.primaryKey == ["article_id", "tag"])
        #expect(try queue.read { try generator.model(of: "categories", in: $0) }.entityName == "CategoryInfo")
        let renamed = EntityGenerator(
            options: .init(entitySuffix: "Record", dalSuffix: "Store", typeStems: ["categories": "Kind"]))
        let kind = try queue.read { try renamed.model(of: "categories", in: $0) }
        #expect(kind.entityName == "KindRecord" && kind.dalName == "KindStore")
    }

    @Test func typesFollowSQLiteAffinityAndNullability() throws {
        let articles = try codegenDatabase().read { try EntityGenerator().model(of: "articles", in: $0) }
        let declarations = articles.properties.map(\.declaration)
        #expect(
            declarations == [
                "var id: Optional<Int64>", "var title: String", "var body: Optional<String>", "var authorID: Int64",
                "var isPublished: Optional<Bool>", "var publishedAt: Optional<Date>", "var rating: Optional<Double>",
                "var price: Optional<Decimal>", "var cover: Optional<Data>", "var extra: Optional<DatabaseValue>",
                "var status: Optional<String>", "var createdAt: Optional<Date>", "var lang: Optional<String>"
            ])
        #expect(articles.properties[0].isAssignedByDatabase)
        // An INTEGER key of a WITHOUT ROWID table is an ordinary, required column.
        let categories = try codegenDatabase().read { try EntityGenerator().model(of: "categories", in: $0) }
        #expect(categories.properties[0].declaration == "var code: Int64")
        #expect(!categories.properties[0].isAssignedByDatabase)
    }

    @Test func keysAreRequiredUnlessSQLiteAssignsThem() throws {
        // Only a rowid table's INTEGER PRIMARY KEY is the rowid, which SQLite assigns; not
        // `INT PRIMARY KEY`, not `INTEGER PRIMARY KEY DESC` (SQLite's documented quirk),
        // not a TEXT key (nullable in a rowid table, by SQLite's legacy rule), not a
        // composite key, not a WITHOUT ROWID table's key.
        let tables = [
            "text_key (code TEXT PRIMARY KEY, v TEXT)": "var code: String",
            "int_key (n INT PRIMARY KEY, v TEXT)": "var n: Int64",
            "desc_key (n INTEGER PRIMARY KEY DESC, v TEXT)": "var n: Int64",
            "composite (a TEXT, b INTEGER, PRIMARY KEY (a, b))": "var a: String",
            "wr (n INTEGER PRIMARY KEY, v TEXT) WITHOUT ROWID": "var n: Int64",
            "rowid_key (n INTEGER PRIMARY KEY, v TEXT)": "var n: Optional<Int64>",
            "lower_case (n integer primary key, v TEXT)": "var n: Optional<Int64>",
            "not_null_rowid (n INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, v TEXT)": "var n: Optional<Int64>"
        ]
        let queue = try DatabaseQueue.inMemory()
        for (definition, declaration) in tables.sorted(by: { $0.key < $1.key }) {
            let name = String(definition.prefix { $0 != " " })
            let model = try queue.write { db in
                try db.execute(sql: "CREATE TABLE \(definition)")
                return try EntityGenerator().model(of: name, in: db)
            }
            #expect(model.properties[0].declaration == declaration, "\(definition)")
            #expect(
                model.properties[0].isAssignedByDatabase == declaration.hasSuffix("Optional<Int64>"), "\(definition)")
        }
    }

    @Test func exactNumbersAreDecimalAndEveryNullableColumnIsOptional() throws {
        let columns = [
            "a NUMERIC", "b NUMERIC NOT NULL", "c DECIMAL(10, 2)", "d NUMERIC(10,2) NOT NULL", "e MONEY", "f NUMBER",
            "g SMALLMONEY", "h DEC(5)", "i", "j NOT NULL", "k TIME", "l DATE", "m TIMESTAMP", "n BOOLEAN NOT NULL",
            "o JSON", "p DOUBLE PRECISION", "q UNSIGNED BIG INT", "r NVARCHAR(10)", "s CLOB", "t FLOAT", "u DATETIME"
        ]
        let queue = try DatabaseQueue.inMemory()
        let model = try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, \(columns.joined(separator: ", ")))")
            return try EntityGenerator().model(of: "t", in: db)
        }
        #expect(
            model.properties.dropFirst().map(\.declaration) == [
                "var a: Optional<Decimal>", "var b: Decimal", "var c: Optional<Decimal>", "var d: Decimal",
                "var e: Optional<Decimal>", "var f: Optional<Decimal>", "var g: Optional<Decimal>",
                "var h: Optional<Decimal>",
                "var i: Optional<DatabaseValue>", "var j: DatabaseValue", "var k: Optional<DatabaseValue>",
                "var l: Optional<Date>",
                "var m: Optional<Date>", "var n: Bool", "var o: Optional<DatabaseValue>", "var p: Optional<Double>",
                "var q: Optional<Int64>", "var r: Optional<String>", "var s: Optional<String>",
                "var t: Optional<Double>",
                "var u: Optional<Date>"
            ])
    }

    @Test func decimalTextKeyAndUntypedColumnsRoundTrip() throws {
        let queue = try codegenDatabase()
        let ledger = LedgerDAL(database: queue)
        let big = try #require(Decimal(string: "1234567890.12"))
        let entry = LedgerInfo(
            code: "L-1", amount: big, fee: Decimal(string: "0.10"), memo: .blob(Data([1])), tag: 5, at: "12:30")
        try ledger.insert(entry)
        let stored = try #require(try ledger.findById("L-1"))
        #expect(stored.amount == big && stored.fee == Decimal(string: "0.1") && stored.rate == nil)
        #expect(stored.memo == .blob(Data([1])) && stored.tag == .integer(5) && stored.at == .text("12:30"))
        try ledger.insert(LedgerInfo(code: "L-2", amount: 0, tag: "t"))
        let bare = try #require(try ledger.findById("L-2"))
        #expect(bare.memo == nil && bare.tag == .text("t") && bare.fee == nil)
        #expect(
            #expect(throws: SQLiteError.self) { try ledger.insert(LedgerInfo(code: "L-3", amount: 0, tag: .null)) }?
                .constraintKind
                == .notNull)
        // A numeric column can hold text that is no number: reading it fails with a typed error naming the column.
        try queue.write { try $0.execute(sql: "UPDATE ledger SET rate = 'n/a' WHERE code = 'L-2'") }
        let error = #expect(throws: DALError.self) { _ = try ledger.findById("L-2") }
        #expect(
            error?.code == .conversionFailed && error?.column == "rate" && error?.table == "ledger",
            "\(String(describing: error))")
    }

    @Test func nilMeansTheDefaultForNotNullColumnsWithADefault() throws {
        let queue = try DatabaseQueue.inMemory()
        let source = try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE jobs (
                        code TEXT PRIMARY KEY NOT NULL DEFAULT 'job', name TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'new',
                        created DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, note TEXT DEFAULT 'none', done BOOLEAN)
                    """)
            return try EntityGenerator().source(for: ["jobs"], in: db)
        }
        // Required: key columns SQLite does not assign, and NOT NULL columns without a default.
        let words = source.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(
            words.contains(
                "code: String, name: String, status: String? = nil, created: Date? = nil, note: String? = nil, done: Bool? = nil ) {"
            ))
        #expect(source.contains("var status: Optional<String>") && source.contains("var created: Optional<Date>"))
        #expect(
            source.contains(
                """
                    /// Column `status` (TEXT NOT NULL DEFAULT 'new').
                    /// `nil` means the default on insert; an update keeps the stored value.
                """))
        #expect(
            source.contains(
                """
                    /// Column `note` (TEXT DEFAULT 'none').
                    /// `nil` means the default on insert, NULL on update.
                """))
    }

    @Test func nilTakesTheDefaultOnInsertAndKeepsTheStoredValueOnUpdate() throws {
        let queue = try codegenDatabase()
        let articles = ArticleDAL(database: queue)
        let id = try articles.insert2(ArticleInfo(title: "T", authorID: 1))
        var stored = try #require(try articles.findById(id))
        #expect(stored.isPublished == false && stored.status == "draft" && stored.lang == "en")
        let created = try #require(stored.createdAt)
        // NOT NULL with a default: nil keeps what is stored; a value replaces it.
        stored.status = nil
        stored.isPublished = nil
        stored.createdAt = nil
        stored.title = "T2"
        #expect(try articles.update(stored))
        let kept = try #require(try articles.findById(id))
        #expect(kept.status == "draft" && kept.isPublished == false && kept.createdAt == created && kept.title == "T2")
        stored.status = "published"
        #expect(try articles.update(stored))
        #expect(try articles.findById(id)?.status == "published")
        // Nullable with a default: nil is the default on insert, NULL on update.
        stored.lang = nil
        #expect(try articles.update(stored))
        #expect(
            try queue.read { try $0.fetchScalar(Bool.self, "SELECT lang IS NULL FROM articles WHERE id = \(id)") }
                == true)
    }

    @Test func readOnlyDALsOfAViewAndAKeylessTableFindCountAndPage() throws {
        let queue = try codegenDatabase()
        let articles = ArticleDAL(database: queue)
        let tags = ArticleTagDAL(database: queue)
        for number in 1...5 {
            let id = try articles.insert2(ArticleInfo(title: "A\(number)", authorID: 1, price: Decimal(number)))
            for tag in 0..<number { try tags.insert(ArticleTagInfo(articleID: id, tag: "t\(tag)")) }
        }
        let summaries = ArticleSummaryDAL(database: queue)
        #expect(try summaries.getRecordCount() == 5)
        #expect(try summaries.getRecordCount(condition: "tag_count >= \(3)") == 3)
        let first = try #require(try summaries.findSingle(condition: "title = \("A4")"))
        #expect(first.tagCount == .integer(4) && first.doublePrice == .integer(8))
        // No key: rows come in the order of the first column.
        #expect(try summaries.getAll().map(\.title) == ["A1", "A2", "A3", "A4", "A5"])
        let page = try summaries.findWithPager(pager: PagerInfo(pageIndex: 2, pageSize: 2), orderBy: "tag_count DESC")
        #expect(page.items.map(\.title) == ["A3", "A2"] && page.pager.recordCount == 5 && page.pager.pageCount == 3)
        #expect(try summaries.findTop(1, orderBy: "title DESC").first?.title == "A5")
        // Key lookups need a key, which a view has not.
        #expect(#expect(throws: DALError.self) { _ = try summaries.findById(1) }?.code == .unsupportedOperation)
        // ReadOnlyDAL has no insert, update or delete: `summaries.insert(first)` does not
        // compile. At run time, the class is no BaseDAL either.
        #expect(!((summaries as AnyObject) is BaseDAL<ArticleSummaryInfo>))

        let visits = VisitDAL(database: queue)
        try queue.write { try $0.execute(sql: "INSERT INTO visits (page) VALUES ('b'), ('a'), (NULL)") }
        #expect(try visits.getAll().map(\.page) == [nil, "a", "b"])
        #expect(try visits.isExist(fieldName: "page", value: "a"))
        #expect(!((visits as AnyObject) is BaseDAL<VisitInfo>))
    }

    /// The migrator's history table is SwiftDAL's own: a migrated database gets entities
    /// for its tables, and none for `swiftdal_migrations`.
    @Test func theMigrationHistoryTableGetsNoEntity() throws {
        let queue = try DatabaseQueue.inMemory()
        var migrator = Migrator()
        migrator.register("1") { db in try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)") }
        try migrator.migrate(queue)
        #expect(try queue.read { try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM swiftdal_migrations") } == 1)
        let source = try queue.read { try EntityGenerator().source(in: $0) }
        #expect(source.contains("struct NoteInfo"))
        #expect(!source.contains("swiftdal_migrations"))
    }

    @Test func viewsAndKeylessTablesGetReadOnlyDALsNamedInTheHeader() throws {
        let queue = try codegenDatabase()
        try queue.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE docs USING fts5(body)")  // its shadow tables are SQLite's own
            try db.execute(sql: "CREATE TABLE gone (x TEXT)")
            try db.execute(sql: "CREATE VIEW broken AS SELECT x FROM gone")
            try db.execute(sql: "DROP TABLE gone")  // the view stays, and cannot be described
        }
        let source = try queue.read { try EntityGenerator().source(in: $0) }
        #expect(
            source.contains(
                """
                // Read-only DALs (ReadOnlyDAL: finds, counts, paging; no insert, update or delete):
                //   ArticleSummaryDAL: `article_summary` is a view.
                //   DocDAL: `docs` has no primary key (BaseDAL updates and deletes by key).
                //   VisitDAL: `visits` has no primary key (BaseDAL updates and deletes by key).
                """))
        #expect(source.contains("// Left out (SQLite cannot describe it): `broken`: "))
        #expect(source.contains("final class VisitDAL: ReadOnlyDAL<VisitInfo>, @unchecked Sendable {}"))
        #expect(
            source.contains("final class ArticleSummaryDAL: ReadOnlyDAL<ArticleSummaryInfo>, @unchecked Sendable {}"))
        #expect(source.contains("    public static let primaryKey: [String] = []"))
        #expect(!source.contains("DocsDataInfo") && !source.contains("DocsConfigInfo"))
        // Asked for by name: a view, and a table without a key, are generated; a broken view throws.
        let named = try queue.read { try EntityGenerator().source(for: ["article_summary", "visits"], in: $0) }
        #expect(named.contains("ReadOnlyDAL<ArticleSummaryInfo>") && named.contains("ReadOnlyDAL<VisitInfo>"))
        #expect(throws: SQLiteError.self) {
            _ = try queue.read { try EntityGenerator().source(for: ["broken"], in: $0) }
        }
        let clash = EntityGenerator(options: .init(typeStems: ["categories": "Article", "articles": "Article"]))
        let clashError = #expect(throws: DALError.self) {
            _ = try queue.read { try clash.source(for: ["articles", "categories"], in: $0) }
        }
        #expect(clashError?.message.contains("would both be ArticleInfo") == true)
        let missing = #expect(throws: DALError.self) {
            _ = try queue.read { try EntityGenerator().model(of: "nope", in: $0) }
        }
        #expect(missing?.code == .schemaMismatch)
        let badStem = EntityGenerator(options: .init(typeStems: ["articles": "Bad Name"]))
        #expect(
            #expect(throws: DALError.self) { _ = try queue.read { try badStem.model(of: "articles", in: $0) } }?.code
                == .schemaMismatch)
        // A table `bases` would give `class BaseDAL: BaseDAL<BaseInfo>`.
        let hiding = EntityGenerator(options: .init(typeStems: ["articles": "Base"]))
        let hidingError = #expect(throws: DALError.self) {
            _ = try queue.read { try hiding.model(of: "articles", in: $0) }
        }
        #expect(hidingError?.message.contains("BaseDAL would hide the type") == true)
    }

    @Test func singularsAndWordsFollowTheCommonRules() throws {
        let queue = try DatabaseQueue.inMemory()
        let stems = try queue.write { db in
            try [
                "users", "categories", "boxes", "addresses", "status", "people", "order_items", "HTTPLogs", "2024_sales"
            ]
            .map { table in
                try db.execute(sql: "CREATE TABLE \(quoteIdentifier(table)) (id INTEGER PRIMARY KEY)")
                return try EntityGenerator(options: .init(entitySuffix: "")).model(of: table, in: db).entityName
            }
        }
        #expect(
            stems == ["User", "Category", "Box", "Address", "Status", "Person", "OrderItem", "HTTPLog", "T2024Sale"])
    }

    @Test func hostileNamesStayInsideStringLiteralsAndComments() throws {
        let queue = try DatabaseQueue.inMemory()
        let table = "odd \"name\" \\ x"
        let column = "line\nbreak */ \"q\""
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE \(quoteIdentifier(table)) (\(quoteIdentifier(column)) TEXT PRIMARY KEY NOT NULL)")
        }
        let source = try queue.read { try EntityGenerator().source(in: $0) }
        #expect(source.contains(#"static let tableName = "odd \"name\" \\ x""#))
        #expect(source.contains(#"["line\nbreak */ \"q\""]"#))
        #expect(source.contains("/// Column `line break */ \"q\"` (TEXT NOT NULL)."))
        #expect(source.contains("struct OddNameXInfo") && source.contains("var lineBreakQ: String"))
        // Every line that is not code is a comment: no name breaks out of a literal or a comment.
        for line in source.split(separator: "\n") where line.contains("line") && !line.contains("lineBreakQ") {
            #expect(line.contains("//") || line.contains("\"line\\nbreak"), "\(line)")
        }
    }

    @Test func protocolMembersAndKeywordsGiveUsablePropertyNames() throws {
        // Members of Entity, Hashable/Equatable and of the generated code, keywords (reserved
        // and contextual), attribute- and directive-like names, `_`, and look-alikes.
        let columns = [
            "hashValue", "hash", "tableName", "primaryKey", "columnNames", "tableDefinition", "encodeColumns", "row",
            "columns", "==", "self", "hashValueColumn", "init", "deinit", "subscript", "associatedtype", "Type",
            "Protocol", "_", "await", "async", "some", "Any", "inout", "let", "var", "super", "@objc", "#if",
            "__shared",
            "user_id", "UserID2", "user id", "user-id", "user.id"
        ]
        let queue = try DatabaseQueue.inMemory()
        let model = try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE t (k INTEGER PRIMARY KEY, \(columns.map(quoteIdentifier).joined(separator: ", ")))")
            return try EntityGenerator().model(of: "t", in: db)
        }
        let names = model.properties.dropFirst().map(\.name)
        #expect(
            names == [
                "hashValueColumn", "hash", "tableName", "primaryKey", "columnNames", "tableDefinition", "encodeColumns",
                "row", "columns", "column11", "selfColumn", "hashValueColumn2", "init", "deinit", "subscript",
                "associatedtype", "type", "protocol", "column20", "await", "async", "some", "any", "inout", "let",
                "var",
                "super", "objc", "if", "shared", "userID", "userId2", "userID2", "userID3", "userID4"
            ])
        let source = try queue.read { try EntityGenerator().source(for: ["t"], in: $0) }
        // `await` alone is an expression that awaits: it needs backticks where it is read.
        #expect(source.contains("self.`await` = `await`"))
        #expect(source.contains("var `protocol`: "))
        #expect(
            !source.contains("var hashValue:") && !source.contains("self.hashValue,")
                && source.contains("var hashValueColumn:"))
    }

    @Test func memberKeywordAndLookAlikeColumnsRoundTrip() throws {
        // The generated file compiling is the proof that these names give valid code; this
        // checks that each property reads and writes its own column.
        let queue = try codegenDatabase()
        let members = MemberDAL(database: queue)
        var member = MemberInfo(
            hashValueColumn: "hv", hash: "h", tableName: "tn", primaryKey: "pk", columnNames: "cn",
            tableDefinition: "td",
            encodeColumns: "ec", row: "r", columns: "c", column11: "eq", hashValueColumn2: "hvc")
        let memberID = try members.insert2(member)
        member.id = memberID
        #expect(try members.findById(memberID) == member)
        #expect(Set([member, member]).count == 1)
        member.hashValueColumn = "changed"
        #expect(try members.update(member))
        let stored = try queue.read {
            try $0.fetchScalar(String.self, "SELECT \"hashValue\" || \"==\" || \"hashValueColumn\" FROM members")
        }
        #expect(stored == "changedeqhvc")

        let keywords = KeywordDAL(database: queue)
        var keyword = KeywordInfo(
            init: "k", deinit: "d", selfColumn: "S", protocol: "P", type: "T", column8: "_", await: "a", some: "s",
            `inout`: "io", let: "l", var: "v", nil: "n", objc: "o", availableUnavailable: "au", if: "i", shared: "sh")
        try keywords.insert(keyword)
        #expect(try keywords.findById("k") == keyword)
        keyword.await = "again"
        #expect(try keywords.update(keyword))
        #expect(try keywords.find(condition: "\"await\" = \("again")").map(\.`init`) == ["k"])
        #expect(
            try queue.read { try $0.fetchScalar(String.self, "SELECT \"Self\" || \"_\" || \"#if\" FROM keywords") }
                == "S_i")
        #expect(try keywords.deleteById("k"))

        let lookAlikes = LookAlikeDAL(database: queue)
        let id = try lookAlikes.insert2(
            LookAlikeInfo(userID2: "UserID", userID3: "user id", userID4: "user-id", userID5: "user.id"))
        let row = try #require(
            try queue.read { db in
                try db.fetchFirst(
                    "SELECT \"user_id\", \"UserID\", \"user id\", \"user-id\", \"user.id\" FROM \"look-alikes\""
                ) { row in
                    [
                        try row.decode(String.self, at: 1), try row.decode(String.self, at: 2),
                        try row.decode(String.self, at: 3),
                        try row.decode(String.self, at: 4), String(try row.decode(Int64.self, at: 0))
                    ]
                }
            })
        #expect(row == ["UserID", "user id", "user-id", "user.id", String(id)])
    }

    @Test func nonASCIINamesKeepWhatSwiftAcceptsInIdentifiers() throws {
        let queue = try DatabaseQueue.inMemory()
        let columns = [
            "编号", "名字", "1号", "😀", "👨‍👩‍👧 family", "\u{301}accent", "Émile", "émile", "e\u{301}mile", "a\u{202E}b",
            "x\u{200B}y", "日本語_テキスト", "ǅemal", "ﬁle"
        ]
        let model = try queue.write { db in
            let list = columns.map { quoteIdentifier($0) + " TEXT" }.joined(separator: ", ")
            try db.execute(sql: "CREATE TABLE 客户 (\(list), PRIMARY KEY (编号))")
            return try EntityGenerator().model(of: "客户", in: db)
        }
        #expect(model.entityName == "客户Info" && model.dalName == "客户DAL")
        // Combining marks cannot start a name; bidirectional controls and zero-width spaces are dropped.
        #expect(
            model.properties.map(\.name) == [
                "编号", "名字", "c1号", "😀", "👨‍👩‍👧Family", "c\u{301}accent", "émile", "émile2", "émile3", "aB", "xY",
                "日本語テキスト", "ǆemal", "ﬁle"
            ])
        // Names are composed (NFC), as typed: Swift compares identifiers scalar by scalar.
        for name in model.properties.map(\.name) {
            #expect(
                Array(name.unicodeScalars) == Array(name.precomposedStringWithCanonicalMapping.unicodeScalars),
                "\(name)")
        }
        #expect(Array(model.properties[5].name.unicodeScalars) == Array("\u{107}accent".unicodeScalars))
        // A hand-chosen stem is checked with Swift's identifier rule, not an ASCII one.
        let stems = EntityGenerator(options: .init(typeStems: ["客户": "客户"]))
        #expect(try queue.read { try stems.model(of: "客户", in: $0) }.entityName == "客户Info")
        let emoji = EntityGenerator(options: .init(entitySuffix: "", typeStems: ["客户": "Ünïcode😀"]))
        #expect(try queue.read { try emoji.model(of: "客户", in: $0) }.entityName == "Ünïcode😀")
        for refused in [
            EntityGenerator.Options(typeStems: ["客户": "Bad Name"]), .init(typeStems: ["客户": "2x"]),
            .init(typeStems: ["客户": "\u{301}x"]), .init(entitySuffix: "", typeStems: ["客户": "Type"]),
            .init(entitySuffix: "-Row"), .init(dalSuffix: "a\u{202E}b")
        ] {
            let error = #expect(throws: DALError.self) {
                _ = try queue.read { try EntityGenerator(options: refused).model(of: "客户", in: $0) }
            }
            #expect(error?.code == .schemaMismatch, "\(refused)")
        }
    }

    @Test func tablesThatDifferOnlyInDroppedCharactersGetDistinctReportedNames() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            for table in ["客户", "客户!", "客户?", "user-log", "user_log", "用户"] {
                try db.execute(sql: "CREATE TABLE \(quoteIdentifier(table)) (id INTEGER PRIMARY KEY)")
            }
        }
        let source = try queue.read { try EntityGenerator().source(in: $0) }
        for name in ["客户Info", "客户2Info", "客户3Info", "UserLogInfo", "UserLog2Info", "用户Info"] {
            #expect(source.contains("struct \(name): Entity"), "\(name)")
        }
        #expect(source.contains("//   `客户!` → 客户2Info, 客户2DAL (`客户` is 客户Info)"))
        #expect(source.contains("//   `user_log` → UserLog2Info, UserLog2DAL (`user-log` is UserLogInfo)"))
        // A stem chosen by hand is never numbered: a clash is an error that names both tables.
        let clash = EntityGenerator(options: .init(typeStems: ["用户": "客户", "客户": "客户"]))
        let error = #expect(throws: DALError.self) {
            _ = try queue.read { try clash.source(for: ["客户", "用户"], in: $0) }
        }
        #expect(error?.message.contains("客户 and 用户 would both be 客户Info") == true, "\(String(describing: error))")
        // A table listed twice (SQLite compares ASCII letters in any case) would be written twice.
        let twice = #expect(throws: DALError.self) {
            _ = try queue.read { try EntityGenerator().source(for: ["user_log", "USER_LOG"], in: $0) }
        }
        #expect(twice?.message.contains("user_log and USER_LOG name the same table") == true)
        // A rule-made name steps aside for a hand-chosen one.
        let chosen = EntityGenerator(options: .init(typeStems: ["用户": "客户"]))
        let chosenSource = try queue.read { try chosen.source(for: ["用户", "客户!"], in: $0) }
        #expect(chosenSource.contains("struct 客户Info") && chosenSource.contains("struct 客户2Info"))
    }

    @Test func nonASCIITablesRoundTrip() throws {
        let queue = try codegenDatabase()
        let customers = 客户DAL(database: queue)
        var customer = 客户Info(编号: "c-1", 名字: "王", c1号: 1, 😀: "smile", ćx: "accent")
        try customers.insert(customer)
        #expect(try customers.findById("c-1") == customer)
        customer.ćx = "second"
        #expect(try customers.update(customer))
        let stored = try queue.read {
            try $0.fetchScalar(String.self, "SELECT \"1号\" || \"\u{301}x\" || \"😀\" FROM 客户")
        }
        #expect(stored == "1secondsmile")
        let notes = 客户2DAL(database: queue)
        let id = try notes.insert2(客户2Info(备注: "second table"))
        #expect(try notes.findById(id)?.备注 == "second table")
        #expect(客户2Info.tableName == "客户!")
    }

    @Test func columnsThatDifferOnlyInNonASCIICaseRoundTrip() throws {
        let queue = try codegenDatabase()
        let casings = CasingDAL(database: queue)
        let entity = CasingInfo(id: 1, émile: "upper", émile2: "lower")
        // SQLite folds only ASCII letters when it compares names, and so does SwiftDAL's
        // column mapping: `Émile` and `émile` are two columns.
        try casings.insert(entity)
        #expect(try casings.findById(1) == entity)
        let stored = try queue.read {
            try $0.fetchScalar(String.self, "SELECT \"Émile\" || '/' || \"émile\" FROM casing")
        }
        #expect(stored == "upper/lower")
    }

    @Test func anyColumnNamesGiveDistinctValidPropertyNames() throws {
        // Pseudo-random names from a fixed seed: letters, digits, keywords, punctuation,
        // spaces, non-ASCII letters and quotes, each table checked as a whole.
        var state: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let pieces = [
            "id", "user", "ID", "_", " ", "-", "2", "9x", "default", "self", "class", "Type", "é", "名",
            "\"", "'", "URL", "a", "B", "in", "var", "let", "inout", ".", "😀", "\u{301}", "\u{202E}", "hashValue",
            "Ä", "ß", "١"
        ]
        let queue = try DatabaseQueue.inMemory()
        for table in 0..<40 {
            var columns = Set<String>()
            while columns.count < 1 + next(8) {
                columns.insert((0..<(1 + next(4))).map { _ in pieces[next(pieces.count)] }.joined())
            }
            let columnList = columns.sorted().map { quoteIdentifier($0) + " TEXT" }.joined(separator: ", ")
            let model = try queue.write { db in
                try db.execute(sql: "CREATE TABLE t\(table) (rowkey INTEGER PRIMARY KEY, \(columnList))")
                return try EntityGenerator().model(of: "t\(table)", in: db)
            }
            let names = model.properties.map(\.name)
            #expect(Set(names).count == names.count, "\(names)")
            for name in names {
                // Swift's identifier rule, in short: ASCII letters and digits, and beyond ASCII
                // letters, digits, marks and symbols (emoji), never an ASCII digit or a mark
                // first (the compiler takes "١", ARABIC-INDIC DIGIT ONE, as a first character),
                // and no bidirectional control.
                let scalars = Array(name.unicodeScalars)
                let isIdentifier =
                    !scalars.isEmpty && !("0"..."9").contains(scalars[0]) && !scalars[0].properties.isMark
                    && scalars.allSatisfy { scalar in
                        scalar.isASCII
                            ? ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                                || ("0"..."9").contains(scalar)
                            : scalar.properties.isLetterMarkNumberOrSymbol
                    }
                #expect(isIdentifier && name != "self" && name != "hashValue", "\(name) from \(columns.sorted())")
            }
        }
    }

    /// `validate()` refuses options whose names would not compile: two equal suffixes (an
    /// entity and its DAL of one name), and a stem that makes a keyword with either suffix.
    /// An underscore is an identifier character, first or not.
    @Test func optionsRefuseNamesThatWouldNotCompile() throws {
        for (refused, problem) in [
            (EntityGenerator.Options(entitySuffix: "Row", dalSuffix: "Row"), "the entity and its DAL would have"),
            (.init(entitySuffix: "", dalSuffix: "", typeStems: ["users": "User"]), "the entity and its DAL would have"),
            (.init(dalSuffix: "", typeStems: ["users": "Type"]), "\"Type\", which is not a Swift type name"),
            (.init(entitySuffix: "Info", dalSuffix: "", typeStems: ["users": "Self"]), "\"Self\", which is not")
        ] {
            let error = #expect(throws: DALError.self) { try refused.validate() }
            #expect(error?.code == .schemaMismatch, "\(refused)")
            #expect(error?.message.contains(problem) == true, "\(String(describing: error))")
        }
        try EntityGenerator.Options(entitySuffix: "_Row", dalSuffix: "_Store", typeStems: ["users": "_User"]).validate()
        let queue = try DatabaseQueue.inMemory()
        try queue.write { try $0.execute(sql: "CREATE TABLE users (id INTEGER PRIMARY KEY)") }
        let model = try queue.read {
            try EntityGenerator(options: .init(entitySuffix: "_Row", typeStems: ["users": "_User"]))
                .model(of: "users", in: $0)
        }
        #expect(model.entityName == "_User_Row" && model.dalName == "_UserDAL")
    }

    /// A hand-chosen entity name can be the DAL name a rule-made stem would give
    /// (`UserDAL`, with no entity suffix): the rule-made one is then numbered, and the
    /// header says which table has the name.
    @Test func aRuleMadeNameStepsAsideForAHandChosenEntityNamedLikeItsDAL() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE accounts (id INTEGER PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE users (id INTEGER PRIMARY KEY)")
        }
        let generator = EntityGenerator(options: .init(entitySuffix: "", typeStems: ["accounts": "UserDAL"]))
        let source = try queue.read { try generator.source(for: ["accounts", "users"], in: $0) }
        #expect(source.contains("struct UserDAL: Entity") && source.contains("class UserDALDAL: BaseDAL<UserDAL>"))
        #expect(source.contains("struct User2: Entity") && source.contains("class User2DAL: BaseDAL<User2>"))
        #expect(source.contains("//   `users` → User2, User2DAL (`accounts` is UserDAL)"), "\(source)")
        #expect(!source.contains("class UserDAL:"))
    }

    /// Words ending in -ches, -shes, -xes, -sses and -zzes lose their `es`.
    @Test func singularsOfSibilantPluralsDropTheirEs() throws {
        let queue = try DatabaseQueue.inMemory()
        let stems = try queue.write { db in
            try ["matches", "batches", "wishes", "taxes", "classes", "buzzes"].map { table in
                try db.execute(sql: "CREATE TABLE \(table) (id INTEGER PRIMARY KEY)")
                return try EntityGenerator(options: .init(entitySuffix: "")).model(of: table, in: db).entityName
            }
        }
        #expect(stems == ["Match", "Batch", "Wish", "Tax", "Class", "Buzz"])
    }

    /// Plurals the ending rules alone misread (`movies` gave `Movy`, `statuses` `Statuse`):
    /// `-ie` nouns, `-us`/`-ias` nouns, irregular and invariable ones, beside words the
    /// rules read right that look like them.
    @Test func pluralsThatLookAlikeGetTheirOwnSingulars() throws {
        let queue = try DatabaseQueue.inMemory()
        let tables = [
            "movies", "cookies", "ties", "user_movies", "statuses", "buses", "aliases", "viruses", "series", "species",
            "analyses", "indices", "heroes", "houses", "cases", "databases", "purchases", "categories", "companies",
            "replies", "courses", "excuses", "abuses"
        ]
        let stems = try queue.write { db in
            try tables.map { table in
                try db.execute(sql: "CREATE TABLE \(table) (id INTEGER PRIMARY KEY)")
                return try EntityGenerator(options: .init(entitySuffix: "")).model(of: table, in: db).entityName
            }
        }
        #expect(
            stems == [
                "Movie", "Cookie", "Tie", "UserMovie", "Status", "Bus", "Alias", "Virus", "Series", "Species",
                "Analysis", "Index", "Hero", "House", "Case", "Database", "Purchase", "Category", "Company",
                "Reply", "Course", "Excuse", "Abuse"
            ])
    }

    /// No name from the database or the command puts a raw control character in the file
    /// (a terminal escape in a comment) or ends the header's comment line early.
    @Test func namesAndTheCommandReachTheFileWithoutRawControlCharacters() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE \"bell\u{7}s\" (id INTEGER PRIMARY KEY, \"esc\u{1B}[31m\" TEXT)")
        }
        let origin = "swiftdal-gen --schema x.sql\n#error(\"injected\")\u{1B}[2J"
        let source = try queue.read { try EntityGenerator().source(in: $0, origin: origin) }
        #expect(
            source.hasPrefix("// Generated by swiftdal-gen: swiftdal-gen --schema x.sql #error(\"injected\")U+1B[2J.\n")
        )
        #expect(!source.split(separator: "\n").contains { $0.hasPrefix("#error") })
        let controls = source.unicodeScalars.filter { $0.properties.generalCategory == .control && $0 != "\n" }
        #expect(controls.isEmpty, "\(controls.map(\.value))")
        #expect(source.contains("/// Column `escU+1B[31m` (TEXT)."), "\(source)")
    }

    @Test func generatedDALsRoundTripEveryColumnType() throws {
        let queue = try codegenDatabase()
        let articles = ArticleDAL(database: queue)
        let published = Date(timeIntervalSince1970: 1_700_000_000.5)
        let id = try articles.insert2(
            ArticleInfo(
                title: "Hello", authorID: Int64(Int32.max) + 1, isPublished: true, publishedAt: published, rating: 4.5,
                price: Decimal(string: "12.30"), cover: Data([0, 1, 255]), extra: .integer(7)))
        let stored = try #require(try articles.findById(id))
        #expect(stored.id == id && stored.authorID == Int64(Int32.max) + 1 && stored.isPublished == true)
        #expect(stored.publishedAt == published && stored.rating == 4.5 && stored.cover == Data([0, 1, 255]))
        #expect(stored.body == nil && stored.extra == .integer(7))
        // DECIMAL has NUMERIC affinity: SQLite turned the text into a REAL; Decimal reads it back exactly.
        #expect(stored.price == Decimal(string: "12.3"))
        #expect(try queue.read { try $0.fetchScalar(String.self, "SELECT typeof(price) FROM articles") } == "real")
        let draft = try articles.insert2(ArticleInfo(title: "Draft", authorID: 1, isPublished: false))
        #expect(try articles.find(condition: "is_published = \(false)").map(\.id) == [draft])
        let draftRow = try #require(try articles.findById(draft))
        #expect(draftRow.price == nil && draftRow.extra == nil)

        let tags = ArticleTagDAL(database: queue)
        try tags.insert(ArticleTagInfo(articleID: id, tag: "swift"))
        #expect(try tags.isExist(fieldName: "tag", value: "swift"))
        #expect(try tags.findById(CompositeKey(id, "swift"))?.tag == "swift")

        let events = EventLogDAL(database: queue)
        var event = EventLogInfo(
            eventID: "e-1", default: "yes", class: 3, c2fa: true, userID2: 9, row: "r", columns: "c", selfColumn: "s",
            type: 1)
        try events.insert(event)
        #expect(try events.findById("e-1") == event)
        event.default = "no"
        #expect(try events.update(event))
        #expect(try events.findById("e-1")?.default == "no")
        #expect(try events.getRecordCount() == 1)

        let odd = OddNameXDAL(database: queue)
        try odd.insert(OddNameXInfo(lineBreakQ: "v"))
        #expect(try odd.findById("v")?.lineBreakQ == "v")

        let categories = CategoryDAL(database: queue)
        try categories.insert(CategoryInfo(code: 10, name: "news"))
        #expect(try categories.findById(10)?.name == "news")
        #expect(
            #expect(throws: SQLiteError.self) { try categories.insert(CategoryInfo(code: 10, name: "again")) }?
                .primaryCode == .constraint)
        // A WITHOUT ROWID table has no rowid: insert2 refuses before inserting anything.
        #expect(
            #expect(throws: DALError.self) { _ = try categories.insert2(CategoryInfo(code: 11, name: "other")) }?.code
                == .noRowID)
        #expect(try categories.findById(11) == nil)
    }

    /// The commands refuse an option given twice or an empty table name rather than pick
    /// one, and say why a file could not be read or written in the system's words (not
    /// Foundation's error domain and user-info dump). Runs the built programs.
    @Test func theCommandsRefuseAmbiguousOptionsAndSayWhyAFileFailed() throws {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
        let generator = directory + "/swiftdal-gen"
        let demo = directory + "/swiftdal-demo"
        for program in [generator, demo] where !FileManager.default.isExecutableFile(atPath: program) {
            Issue.record("\(program) is not built")
            return
        }
        let temporary = try TemporaryDirectory()
        let schema = temporary.file("schema.sql")
        try "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);".write(
            toFile: schema, atomically: true, encoding: .utf8)
        let notUTF8 = temporary.file("latin1.sql")
        try Data([0x2D, 0x2D, 0x20, 0xE9, 0x0A]).write(to: URL(fileURLWithPath: notUTF8))
        let refused: [([String], String)] = [
            (["--schema", schema, "--schema", schema], "--schema is given twice"),
            (["--mysql", "mysql://a@h/d", "--mariadb", "mysql://b@h/d"], "--mariadb is given twice"),
            (["--schema", schema, "--stem", "notes=Memo", "--stem", "notes=Note"], "--stem notes is given twice"),
            (["--schema", schema, "--tables", ""], "--tables needs a comma-separated list of names, none empty"),
            (["--schema", schema, "--tables", "notes,,notes"], "none empty"),
            (["--schema", temporary.file("missing.sql")], "missing.sql: No such file or directory"),
            (["--schema", temporary.path], ": Is a directory"),
            (["--schema", notUTF8], "latin1.sql: it is not UTF-8 text"),
            (
                ["--schema", schema, "--output", temporary.file("no/such/folder/Notes.swift")],
                "cannot write \(temporary.file("no/such/folder/Notes.swift")): No such file or directory"
            )
        ]
        for (arguments, message) in refused {
            let (status, printed) = try runProgram(generator, arguments)
            #expect(status == 1, "\(arguments): \(printed)")
            #expect(printed.hasPrefix("swiftdal-gen: ") && printed.contains(message), "\(arguments): \(printed)")
            #expect(!printed.contains("Domain="), "\(arguments): \(printed)")
        }
        // The same options, each once, write the file.
        let output = temporary.file("Notes.swift")
        let (status, printed) = try runProgram(
            generator, ["--schema", schema, "--tables", "notes", "--stem", "notes=Memo", "--output", output])
        #expect(status == 0, "\(printed)")
        #expect((try? String(contentsOfFile: output, encoding: .utf8))?.contains("struct MemoInfo") == true)
        // The tour: a SQLite file with a server engine would be silently ignored.
        for (arguments, message) in [
            (
                ["--database", temporary.file("a.sqlite"), "--database", temporary.file("b.sqlite")],
                "--database is given twice"
            ),
            (["--database", temporary.file("x.sqlite"), "--postgres"], "--database names a SQLite file")
        ] {
            let (status, printed) = try runProgram(demo, arguments)
            #expect(status == 1, "\(arguments): \(printed)")
            #expect(printed.contains(message), "\(arguments): \(printed)")
        }
        for name in ["a.sqlite", "b.sqlite", "x.sqlite"] {
            #expect(!FileManager.default.fileExists(atPath: temporary.file(name)), "\(name)")
        }
    }
}

extension Unicode.Scalar.Properties {
    /// Whether the scalar is a combining mark.
    fileprivate var isMark: Bool {
        [.nonspacingMark, .spacingMark, .enclosingMark].contains(generalCategory)
    }

    /// Whether the scalar is a letter, a mark, a number or a symbol (not punctuation,
    /// a separator, a control or a format character).
    fileprivate var isLetterMarkNumberOrSymbol: Bool {
        switch generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark,
            .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber, .mathSymbol, .currencySymbol,
            .modifierSymbol, .otherSymbol:
            return true
        default:
            return false
        }
    }
}
