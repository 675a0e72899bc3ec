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
        "SwiftDALSQLite", "CSwiftDALSQLite", "SwiftDALPostgres", "CSwiftDALPostgres", "SwiftDALMariaDB",
        "CSwiftDALMariaDB"
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

    /// The dependencies of the connection module's target in `Package.swift`: the names in
    /// its `dependencies: [...]`.
    static func connectionModuleDependencies() throws -> [String] {
        let manifest = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Package.swift")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let target = try #require(text.firstRange(of: try Regex(#"\.target\(\s*name:\s*"SwiftDALConnection""#)))
        let rest = text[target.upperBound...]
        // The target's arguments end at the `)` closing `.target(`.
        let end = try #require(rest.firstIndex(of: ")"))
        let arguments = rest[..<end]
        guard let list = arguments.firstRange(of: try Regex(#"dependencies:\s*\[([^\]]*)\]"#)) else { return [] }
        return arguments[list].split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map {
            String($0.element)
        }
    }

    /// SQLite is an engine module like the others: the connection module (`Database`, the
    /// seam, the pool core, values, errors) depends on no engine, so that every engine,
    /// SQLite included, reaches it only through the seam's protocols.
    @Test func theConnectionModuleDependsOnNoEngine() throws {
        let dependencies = try Self.connectionModuleDependencies()
        let engines = dependencies.filter { Self.engineModules.contains($0) }
        #expect(engines.isEmpty, "SwiftDALConnection depends on \(engines): engines depend on it, not the reverse")
        // And SQLite's module is one of them, beside its C library.
        let files = try Self.sourceFiles()
        #expect(files.contains { $0.path == "SwiftDALSQLite/SQLiteConnection.swift" })
    }

    /// SQLite is one engine behind the seam (`SQLiteConnection`), not the base of
    /// `Database`: its C library is imported, and its functions called, only in its
    /// module, `SwiftDALSQLite` (and its C module).
    @Test func sqlitesCLibraryIsReachedOnlyFromItsModule() throws {
        let files = try Self.sourceFiles()
        #expect(
            files.contains {
                $0.path.hasPrefix("SwiftDALSQLite/") && $0.code.contains { $0.contains("sqlite3_step(") }
            })
        for (file, code) in files where !file.hasPrefix("SwiftDALSQLite/") {
            let reached = code.filter { $0.contains("CSwiftDALSQLite") || $0.contains("sqlite3_") }
            #expect(reached.isEmpty, "\(file) reaches SQLite's C library: \(reached.first ?? "")")
        }
    }
}
