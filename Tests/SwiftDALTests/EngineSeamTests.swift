import Foundation
import Testing

/// The engine seam's ratchet (issue 25: an engine is added by adding a module, with no
/// `engine ==` branch anywhere else). Every branch on the engine outside an engine's own
/// module is counted, file by file, in the package's sources; the files that still have
/// some are listed below with their count today, and the list may only shrink: a new
/// branch, or a branch in a file not listed, fails this test. Put the engine's SQL in its
/// dialect (or the engine's module) instead. When a file's branches move out, lower its
/// count here (or remove it): a count above what the file holds fails too, so that the
/// list stays the truth.
@Suite struct EngineSeamTests {
    /// Branches on the engine left outside engine modules, by file (relative to `Sources/`).
    /// The one left is the sample's migration step 3, which adds a CHECK constraint by
    /// rebuilding the table on SQLite and by ALTER TABLE elsewhere: what a service's own
    /// migration may do, shown in the sample on purpose.
    static let remainingBranches: [String: Int] = [
        "SampleDAL/SampleSchema.swift": 1
    ]

    /// The modules that are an engine (or its C library): branches inside are its own.
    static let engineModules: Set<String> = [
        "SwiftDALPostgres", "CSwiftDALPostgres", "CSwiftDALSQLite", "SwiftDALMariaDB", "CSwiftDALMariaDB"
    ]

    /// `engine == .x`, `engine != .x`, `case .x` and `.x:` / `.x ?` for an engine `x`.
    static let branchPattern =
        #"engine\s*[!=]=\s*\.(sqlite|postgres|mariadb)\b|case\s+\.(sqlite|postgres|mariadb)\b|\.(sqlite|postgres|mariadb)\s*[:?]"#

    /// Every Swift file under `Sources/`, by path relative to it, with its lines of code
    /// (comment lines left out).
    static func sourceFiles() throws -> [(path: String, code: [Substring])] {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
        return try files.filter { $0.hasSuffix(".swift") }.sorted().map { file in
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            let code = text.split(separator: "\n").map { $0.drop { $0 == " " } }.filter { !$0.hasPrefix("//") }
            return (file, code)
        }
    }

    /// The number of engine branches in each Swift file under `Sources/`, outside engine
    /// modules and comments.
    static func branchesBySourceFile() throws -> [String: Int] {
        let branch = try Regex(branchPattern)
        var counts = [String: Int]()
        for (file, code) in try sourceFiles() {
            guard let module = file.split(separator: "/").first, !engineModules.contains(String(module)) else {
                continue
            }
            let count = code.filter { $0.contains(branch) }.count
            if count > 0 { counts[file] = count }
        }
        return counts
    }

    @Test func noEngineBranchIsAddedOutsideAnEngineModule() throws {
        let counts = try Self.branchesBySourceFile()
        #expect(!counts.isEmpty, "no branch found at all: is the Sources folder where this test looks?")
        for (file, count) in counts.sorted(by: { $0.key < $1.key }) {
            let allowed = Self.remainingBranches[file] ?? 0
            #expect(
                count <= allowed,
                "\(file) branches on the engine \(count) times (allowed: \(allowed)): put the engine's SQL in its dialect or module"
            )
        }
        for (file, allowed) in Self.remainingBranches.sorted(by: { $0.key < $1.key }) {
            let count = counts[file] ?? 0
            #expect(
                count >= allowed,
                "\(file) now has \(count) engine branches: lower its count in remainingBranches to \(count)")
        }
    }

    /// The SQLite types the connection layer still names outside its `SQLite` folder, by
    /// file (relative to `Sources/`): a ratchet, as for branches (a new name, or a count
    /// above or below the file's, fails). None is left: `ResultCode`, the result codes every
    /// engine maps its errors onto, is the connection layer's own (`Errors/`), numbered as
    /// SQLite numbers them.
    static let remainingSQLiteNames: [String: Int] = [:]

    /// SQLite's types in the connection module.
    static let sqliteTypes =
        #"\b(SQLiteConnection|SQLiteRows|SQLiteError|SQLiteEngineDialect|Statement|RowCursor|DatabaseQueue|DatabasePool)\b"#

    /// `Database`, its reads, rows, values, errors and the pool core reach SQLite only
    /// through the seam (`EngineConnection`, `EngineRows`, `SteppingConnection`), so that
    /// SQLite's folder can become a module of its own.
    @Test func theConnectionLayerNamesNoSQLiteTypeOutsideItsFolder() throws {
        let name = try Regex(Self.sqliteTypes)
        let files = try Self.sourceFiles()
        #expect(
            files.contains {
                $0.path == "SwiftDALConnection/SQLite/Statement.swift" && $0.code.contains { $0.contains(name) }
            })
        var counts = [String: Int]()
        for (file, code) in files
        where file.hasPrefix("SwiftDALConnection/") && !file.hasPrefix("SwiftDALConnection/SQLite/") {
            let count = code.filter { $0.contains(name) }.count
            if count > 0 { counts[file] = count }
        }
        #expect(
            counts == Self.remainingSQLiteNames,
            "SQLite types named outside SwiftDALConnection/SQLite (expected only \(Self.remainingSQLiteNames)): \(counts)"
        )
    }

    /// SQLite is one engine behind the seam (`SQLiteConnection`), not the base of
    /// `Database`: its C library is imported, and its functions called, only in the
    /// connection module's `SQLite` folder (and its C module).
    @Test func sqlitesCLibraryIsReachedOnlyFromItsFolder() throws {
        let files = try Self.sourceFiles()
        #expect(
            files.contains {
                $0.path.hasPrefix("SwiftDALConnection/SQLite/") && $0.code.contains { $0.contains("sqlite3_step(") }
            })
        for (file, code) in files where !file.hasPrefix("SwiftDALConnection/SQLite/") {
            let reached = code.filter { $0.contains("CSwiftDALSQLite") || $0.contains("sqlite3_") }
            #expect(reached.isEmpty, "\(file) reaches SQLite's C library: \(reached.first ?? "")")
        }
    }
}
