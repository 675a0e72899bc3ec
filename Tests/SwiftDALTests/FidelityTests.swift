import Foundation
import SwiftDAL
import SwiftDALTestSupport
import Testing

/// A schema in the style of the classic sample databases (Northwind, Chinook): dates
/// stored as SQLite's own text forms, prices in NUMERIC columns, bracket-quoted names
/// with spaces, defaults, flags stored as text, JSON with its own spacing.
private let legacySchema = """
    CREATE TABLE [Employees] (
        [EmployeeID] INTEGER PRIMARY KEY AUTOINCREMENT,
        [LastName] NVARCHAR(20) NOT NULL,
        [BirthDate] DATE,
        [HireDate] DATETIME,
        [Salary] NUMERIC DEFAULT 0,
        [Rating] REAL,
        [Active] BOOLEAN NOT NULL DEFAULT 1,
        [Badge] TEXT,
        [Photo] BLOB,
        [Prefs] TEXT
    );
    INSERT INTO [Employees] VALUES (1, 'Davolio', '1948-12-08', '1992-05-01 00:00:00', 2954.55, 0.1, 2,
        'E7A3F0B2-0C9A-4D1B-9B3E-8D1F2A3B4C5D', X'00FF10', '{"theme": "dark",  "size":3}');
    INSERT INTO [Employees] VALUES (2, 'Fuller', '1952-02-19T00:00:00Z', 1020000000, 3119, 0.3333333333333333, 0,
        NULL, X'', '{"size":1,"theme":"light"}');
    INSERT INTO [Employees] VALUES (3, 'Leverling', '1963-08-30 00:00:00.000', '2021-01-01 00:00:00', '1.10', 2.5e10, 1,
        'e7a3f0b2-0c9a-4d1b-9b3e-8d1f2a3b4c5d', NULL, NULL);
    CREATE TABLE [Order Details] (
        [OrderID] INTEGER NOT NULL,
        [ProductID] INTEGER NOT NULL,
        [UnitPrice] NUMERIC(10,2) NOT NULL DEFAULT 0,
        [Quantity] INTEGER NOT NULL DEFAULT 1,
        [Discount] REAL NOT NULL DEFAULT 0,
        [Discontinued] TEXT NOT NULL DEFAULT '0',
        PRIMARY KEY ([OrderID], [ProductID])
    );
    INSERT INTO [Order Details] VALUES (10248, 11, 14, 12, 0, '0'), (10248, 42, 9.8, 10, 0.15, '1'),
        (10249, 14, 18.6, 9, 0.05000000074505806, '0');
    """

/// An explicitly mapped employee, typed the way a generator or a developer would type it.
private struct Employee: Entity, Equatable {
    static let tableName = "Employees"
    static let primaryKey = ["EmployeeID"]
    static let columnNames: [String]? = [
        "EmployeeID", "LastName", "BirthDate", "HireDate", "Salary", "Rating", "Active", "Badge", "Photo", "Prefs"
    ]
    struct Prefs: Codable, Equatable, Sendable {
        var theme: String
        var size: Int
    }
    var id: Optional<Int64>
    var lastName: String
    var birthDate: Optional<Date>
    var hireDate: Optional<Date>
    var salary: Optional<Decimal>
    var rating: Optional<Float>
    var active: Optional<Bool>
    var badge: Optional<UUID>
    var photo: Optional<Data>
    var prefs: Optional<String>

    init(
        id: Int64?, lastName: String, birthDate: Date? = nil, hireDate: Date? = nil, salary: Decimal? = nil,
        rating: Float? = nil, active: Bool? = nil, badge: UUID? = nil, photo: Data? = nil, prefs: String? = nil
    ) {
        self.id = id
        self.lastName = lastName
        self.birthDate = birthDate
        self.hireDate = hireDate
        self.salary = salary
        self.rating = rating
        self.active = active
        self.badge = badge
        self.photo = photo
        self.prefs = prefs
    }

    init(row: RowView) throws {
        try self.init(
            id: row[0], lastName: row[1], birthDate: row[2], hireDate: row[3], salary: row[4], rating: row[5],
            active: row[6], badge: row[7], photo: row[8], prefs: row[9])
    }

    func encodeColumns(to columns: inout ColumnValues) throws {
        try columns.encode(id, for: "EmployeeID")
        try columns.encode(lastName, for: "LastName")
        try columns.encode(birthDate, for: "BirthDate")
        try columns.encode(hireDate, for: "HireDate")
        try columns.encode(salary, for: "Salary")
        try columns.encode(rating, for: "Rating")
        try columns.encode(active, for: "Active")
        try columns.encode(badge, for: "Badge")
        try columns.encode(photo, for: "Photo")
        try columns.encode(prefs, for: "Prefs")
    }
}

/// The same table through the Codable mapping, with the JSON column as a nested value.
// Property names are the Northwind columns' (Codable maps them by name).
// swift-format-ignore: AlwaysUseLowerCamelCase
private struct CodableEmployee: Entity, Codable, Equatable {
    static let tableName = "Employees"
    static let primaryKey = ["EmployeeID"]
    var EmployeeID: Int64?
    var LastName: String
    var BirthDate: Date?
    var HireDate: Date?
    var Salary: Decimal?
    var Rating: Double?
    var Active: Bool?
    var Badge: UUID?
    var Photo: Data?
    var Prefs: Employee.Prefs?
}

// Property names are the Northwind columns' (Codable maps them by name).
// swift-format-ignore: AlwaysUseLowerCamelCase
private struct OrderDetail: Entity, Codable, Equatable {
    static let tableName = "Order Details"
    static let primaryKey = ["OrderID", "ProductID"]
    var OrderID: Int64
    var ProductID: Int64
    var UnitPrice: Decimal?
    var Quantity: Int?
    var Discount: Float?
    var Discontinued: String?
}

/// Every stored byte of `table`: each value's storage class and its bytes, in rowid order.
private func storedBytes(_ db: Database, _ table: String) throws -> [String] {
    let columns = try db.columns(in: table).map { quoteIdentifier($0.name) }
    let selection = columns.map { "typeof(\($0)) || ':' || coalesce(hex(\($0)), 'NULL')" }.joined(
        separator: " || '|' || ")
    return try db.fetchColumn(String.self, SQL(sql: "SELECT \(selection) FROM \(quoteIdentifier(table)) ORDER BY 1"))
}

private func legacyDatabase() throws -> DatabaseQueue {
    let queue = try DatabaseQueue.inMemory()
    try queue.write { try $0.executeScript(legacySchema) }
    return queue
}

@Suite struct FidelityTests {
    /// A condition of only whitespace is no condition; whitespace is Unicode's, whatever
    /// the bytes (the ASCII fast path agrees with `Character.isWhitespace`).
    @Test func aConditionIsEmptyExactlyWhenItIsAllWhitespace() {
        var texts = (0..<128).map { String(Character(Unicode.Scalar(UInt8($0)))) }
        texts += ["", "\r\n", " \u{A0}\u{2028}\u{3000}\u{85} ", " \u{3000}x", "\t\n é", "\u{200B}", " \u{1C} "]
        texts += texts.map { "  " + $0 + "\t" }
        for text in texts {
            #expect(SQL(sql: text).isEmpty == text.allSatisfy(\.isWhitespace), "\(Array(text.unicodeScalars))")
        }
        #expect(SQL(sql: " \u{3000}\r\n").isEmpty)
        #expect(!SQL(sql: " age = 1").isEmpty)
    }

    @Test func readingARowAndWritingItBackChangesNoStoredByte() throws {
        let queue = try legacyDatabase()
        let before = try queue.read { db in try ["Employees", "Order Details"].map { try storedBytes(db, $0) } }
        let explicit = BaseDAL<Employee>(database: queue)
        let codable = BaseDAL<CodableEmployee>(database: queue)
        let details = BaseDAL<OrderDetail>(database: queue)
        for employee in try explicit.getAll() { #expect(try explicit.update(employee)) }
        for employee in try codable.getAll() { #expect(try codable.update(employee)) }
        for employee in try codable.getAll() { try codable.upsert(employee) }
        for detail in try details.getAll() {
            #expect(try details.update(detail))
            try details.upsert(detail)
        }
        let after = try queue.read { db in try ["Employees", "Order Details"].map { try storedBytes(db, $0) } }
        #expect(after == before)
    }

    @Test func aChangedColumnIsWrittenAndTheOthersKeepTheirBytes() throws {
        let queue = try legacyDatabase()
        let employees = BaseDAL<Employee>(database: queue)
        var davolio = try #require(try employees.findById(1))
        davolio.lastName = "Davolio-Smith"
        #expect(try employees.update(davolio))
        let row = try queue.read { try storedBytes($0, "Employees") }.first ?? ""
        #expect(row.contains("text:" + Data("Davolio-Smith".utf8).map { String(format: "%02X", $0) }.joined()))
        #expect(row.contains("text:" + Data("1948-12-08".utf8).map { String(format: "%02X", $0) }.joined()))
        // The flag stored as 2 (read as true) was not rewritten as 1 (hex of "2").
        #expect(row.contains("|integer:32|"))
        // A real change to a date is written in SwiftDAL's canonical form.
        davolio.birthDate = Date(timeIntervalSince1970: 0)
        #expect(try employees.update(davolio))
        #expect(
            try queue.read { try $0.fetchScalar(String.self, "SELECT BirthDate FROM Employees WHERE EmployeeID = 1") }
                == "1970-01-01 00:00:00.000")
        // updateFields writes what it is given, whatever is stored.
        #expect(try employees.updateFields(["Active": true], key: 1))
        #expect(
            try queue.read { try $0.fetchScalar(Int.self, "SELECT Active FROM Employees WHERE EmployeeID = 1") } == 1)
    }

    @Test func nilMeansTheColumnDefaultOnInsert() throws {
        let queue = try legacyDatabase()
        let details = BaseDAL<OrderDetail>(database: queue)
        try details.insert(OrderDetail(OrderID: 1, ProductID: 1))
        let stored = try #require(try details.findById(CompositeKey(1, 1)))
        #expect(stored.UnitPrice == 0)
        #expect(stored.Quantity == 1)
        #expect(stored.Discount == 0)
        #expect(stored.Discontinued == "0")
        // A nullable column with a default gets it too; one without a default stays NULL.
        let employees = BaseDAL<Employee>(database: queue)
        let id = try employees.insert2(Employee(id: nil, lastName: "Callahan"))
        let callahan = try #require(try employees.findById(id))
        #expect(callahan.salary == 0)
        #expect(callahan.active == true)
        #expect(callahan.birthDate == nil)
        // insertRange and upsert apply the same rule.
        try details.insertRange([
            OrderDetail(OrderID: 2, ProductID: 1, Quantity: 5), OrderDetail(OrderID: 2, ProductID: 2)
        ])
        #expect(try details.findById(CompositeKey(2, 1))?.Quantity == 5)
        #expect(try details.findById(CompositeKey(2, 2))?.Quantity == 1)
        try details.upsert(OrderDetail(OrderID: 3, ProductID: 1, Discontinued: "1"))
        #expect(try details.findById(CompositeKey(3, 1))?.UnitPrice == 0)
        // An existing row keeps the stored value of a NOT NULL column with a default for nil,
        // and takes NULL in a nullable one.
        try details.upsert(OrderDetail(OrderID: 3, ProductID: 1, UnitPrice: 2, Quantity: nil))
        let upserted = try #require(try details.findById(CompositeKey(3, 1)))
        #expect(upserted.UnitPrice == 2)
        #expect(upserted.Quantity == 1)
        #expect(upserted.Discontinued == "1")
        #expect(try details.update(OrderDetail(OrderID: 3, ProductID: 1, UnitPrice: nil)))
        #expect(try details.findById(CompositeKey(3, 1))?.UnitPrice == 2)
        var davolio = try #require(try employees.findById(1))
        davolio.badge = nil
        #expect(try employees.update(davolio))
        #expect(try employees.findById(1)?.badge == nil)
    }

    /// `updateField` by a composite key binds the value, then the key's columns in order:
    /// it changes that row's column, and no other row's.
    @Test func updateFieldByACompositeKeyWritesThatRowOnly() throws {
        let queue = try legacyDatabase()
        let details = BaseDAL<OrderDetail>(database: queue)
        try details.insertRange([
            OrderDetail(OrderID: 70, ProductID: 80, Quantity: 1), OrderDetail(OrderID: 80, ProductID: 70, Quantity: 1)
        ])
        #expect(try details.updateField("Quantity", to: 9, key: CompositeKey(70, 80)))
        #expect(try details.findById(CompositeKey(70, 80))?.Quantity == 9)
        #expect(try details.findById(CompositeKey(80, 70))?.Quantity == 1)
        #expect(try details.updateField("Quantity", to: 5, key: CompositeKey(70, 90)) == false)
    }

    @Test func insert2NeverReturnsAnotherRowsRowid() throws {
        struct Note: Entity, Codable {
            static let tableName = "notes"
            var id: Int64
            var body: String
        }
        struct Pair: Entity, Codable {
            static let tableName = "pairs"
            static let primaryKey = ["a", "b"]
            var a: Int64
            var b: String
        }
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.executeScript(
                """
                CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL);
                CREATE TABLE pairs(a INTEGER, b TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;
                """)
        }
        let notes = BaseDAL<Note>(database: queue)
        let pairs = BaseDAL<Pair>(database: queue)
        #expect(try notes.insert2(Note(id: 777, body: "x")) == 777)
        let error = #expect(throws: DALError.self) { _ = try pairs.insert2(Pair(a: 1, b: "k")) }
        #expect(error?.code == .noRowID)
        #expect(error?.table == "pairs")
        #expect(try pairs.getRecordCount() == 0)  // refused before inserting
        try pairs.insert(Pair(a: 1, b: "k"))
        #expect(try pairs.findById(CompositeKey(1, "k"))?.b == "k")
    }

    /// An integer key that is not the rowid (`INT PRIMARY KEY`, `BIGINT PRIMARY KEY`,
    /// `INTEGER PRIMARY KEY DESC`): `insert2` returns the key, which `findById` takes, never
    /// the rowid (a trial's legacy `Shippers(ShipperID INT PRIMARY KEY)` got 4 for the row
    /// keyed 5, and `findById(4)` then found another row).
    @Test func insert2ReturnsTheKeyWhereTheKeyIsNotTheRowID() throws {
        struct Shipper: Entity, Codable {
            static let tableName = "shippers"
            var id: Int64?
            var name: String
        }
        let declarations = ["INT PRIMARY KEY", "BIGINT PRIMARY KEY", "INTEGER PRIMARY KEY DESC", "INTEGER PRIMARY KEY"]
        for declaration in declarations {
            let queue = try DatabaseQueue.inMemory()
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE shippers(id \(declaration), name TEXT NOT NULL)")
                try db.execute(sql: "INSERT INTO shippers VALUES (1, 'one'), (2, 'two'), (3, 'three')")
            }
            let shippers = BaseDAL<Shipper>(database: queue)
            #expect(try shippers.insert2(Shipper(id: 5, name: "five")) == 5, "\(declaration)")
            #expect(try shippers.insert2(Shipper(id: 4, name: "four")) == 4, "\(declaration)")
            #expect(try shippers.findById(5)?.name == "five")
            #expect(try shippers.insertRange2([Shipper(id: 9, name: "nine"), Shipper(id: 7, name: "seven")]) == [9, 7])
            #expect(try shippers.findById(7)?.name == "seven")
            // From outside the DAL: the rows carry the keys returned.
            let keys = try queue.read { db in try db.fetchColumn(Int64.self, "SELECT id FROM shippers ORDER BY name") }
            #expect(keys == [5, 4, 9, 1, 7, 3, 2], "\(declaration)")
            if declaration == "INTEGER PRIMARY KEY" {
                #expect(try shippers.insert2(Shipper(id: nil, name: "assigned")) == 10)  // the rowid: the key
            } else {
                // SQLite assigns no such key (it would store NULL): refused, nothing written.
                let error = #expect(throws: DALError.self) { _ = try shippers.insert2(Shipper(id: nil, name: "none")) }
                #expect(error?.code == .noRowID, "\(declaration)")
                #expect(try shippers.getRecordCount() == 7, "\(declaration)")
            }
        }
    }

    @Test func getFieldValuesConversionErrorNamesTheTable() throws {
        let queue = try legacyDatabase()
        let error = #expect(throws: DALError.self) {
            _ = try BaseDAL<Employee>(database: queue).getFieldValue(1, fieldName: "LastName", as: Int.self)
        }
        #expect(error?.code == .conversionFailed)
        #expect(error?.table == "Employees")
        #expect(error?.column == "LastName")
    }

    @Test func aReadOnlyDALServesAViewWithFindsCountsAndPaging() throws {
        // swift-format-ignore: AlwaysUseLowerCamelCase
        struct Sale: Entity, Codable {
            static let tableName = "big_orders"
            static let primaryKey: [String] = []
            var OrderID: Int64
            var ProductID: Int64
            var Quantity: Int64
        }
        // swift-format-ignore: AlwaysUseLowerCamelCase
        struct KeyedSale: Entity, Codable {
            static let tableName = "big_orders"
            static let primaryKey = ["OrderID", "ProductID"]
            var OrderID: Int64
            var ProductID: Int64
            var Quantity: Int64
        }
        let queue = try legacyDatabase()
        try queue.write {
            try $0.execute(
                sql:
                    "CREATE VIEW big_orders AS SELECT OrderID, ProductID, Quantity FROM [Order Details] WHERE Quantity >= 10"
            )
        }
        let sales = ReadOnlyDAL<Sale>(database: queue)
        #expect(try sales.getRecordCount() == 2)
        #expect(try sales.getAll().map(\.OrderID) == [10248, 10248])  // the first column's order
        #expect(try sales.find(condition: "Quantity > \(10)").map(\.ProductID) == [11])
        let page = try sales.findWithPager(pager: PagerInfo(pageIndex: 2, pageSize: 1), orderBy: "Quantity")
        #expect(page.items.map(\.Quantity) == [12])
        #expect(page.pager.recordCount == 2)
        #expect(#expect(throws: DALError.self) { _ = try sales.findById(10248) }?.code == .unsupportedOperation)
        // A key declared by the entity makes the key lookups work on a view.
        #expect(try ReadOnlyDAL<KeyedSale>(database: queue).findById(CompositeKey(10248, 42))?.Quantity == 10)
        // A DAL that writes needs a key.
        #expect(
            #expect(throws: DALError.self) { _ = try BaseDAL<Sale>(database: queue).getAll() }?.code == .schemaMismatch)
        #expect(
            #expect(throws: DALError.self) {
                _ = try BaseDAL<KeyedSale>(database: queue).insert2(KeyedSale(OrderID: 1, ProductID: 2, Quantity: 30))
            }?.code == .noRowID)
    }

    @Test func likeHelpersEscapeWildcardsFollowedByCombiningMarks() throws {
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE people(name TEXT)")
            for name in ["Renée", "Zoë", "%\u{301}x", "_\u{308}y", "a\\\u{301}b"] {
                try db.execute("INSERT INTO people VALUES (\(name))")
            }
        }
        func count(_ condition: SQL) throws -> Int {
            try queue.read {
                try $0.fetchScalar(Int.self, try SQL("SELECT COUNT(*) FROM people WHERE").appending(condition)) ?? -1
            }
        }
        #expect(try count("name LIKE \(startingWith: "%\u{301}")") == 1)  // only "%́x", not "Renée"
        #expect(try count("name LIKE \(containing: "_\u{308}")") == 1)  // only "_̈y", not "Zoë"
        #expect(try count("name LIKE \(containing: "\\\u{301}")") == 1)
        #expect(escapeLikeWildcards("%\u{301}") == "\\%\u{301}")
    }

    @Test func likeHelpersStopAtANULInTheStoredValueAsDocumented() throws {
        // SQLite's LIKE compares a value only up to its first NUL: a documented limit of the
        // helpers (a pattern holding NUL is refused); instr() compares every byte.
        let queue = try DatabaseQueue.inMemory()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t(v TEXT)")
            try db.execute("INSERT INTO t VALUES (\("x\u{0}--"))")
        }
        let byLike = try queue.read {
            try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM t WHERE v LIKE \(containing: "--")")
        }
        let byInstr = try queue.read {
            try $0.fetchScalar(Int.self, "SELECT COUNT(*) FROM t WHERE instr(v, \("--")) > 0")
        }
        #expect(byLike == 0)
        #expect(byInstr == 1)
        #expect(throws: DALError.self) {
            _ = try queue.read { try $0.fetchAll("SELECT * FROM t WHERE v LIKE \(containing: "\u{0}")") }
        }
    }
}
