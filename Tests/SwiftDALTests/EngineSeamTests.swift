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

    /// The names `Package.swift` lists in `target`'s dependencies: every string literal inside
    /// its `dependencies: [...]` (brackets and parentheses balanced, so `.product(name: …)`
    /// and conditions count too).
    static func dependencies(ofTarget target: String) throws -> [String] {
        let manifest = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Package.swift")
        let text = Array(try String(contentsOf: manifest, encoding: .utf8).utf8)
        let source = String(decoding: text, as: UTF8.self)
        let start = try #require(
            source.firstRange(of: try Regex(#"\.(target|executableTarget)\(\s*name:\s*""# + target + #"""#)))
        // The target's arguments: up to the parenthesis that closes `.target(`.
        var index = source.utf8.distance(from: source.startIndex, to: start.lowerBound)
        while text[index] != UInt8(ascii: "(") { index += 1 }
        var depth = 0
        var arguments = [UInt8]()
        repeat {
            let byte = text[index]
            if byte == UInt8(ascii: "(") || byte == UInt8(ascii: "[") { depth += 1 }
            if byte == UInt8(ascii: ")") || byte == UInt8(ascii: "]") { depth -= 1 }
            arguments.append(byte)
            index += 1
        } while depth > 0
        // The list after `dependencies:`: up to its closing bracket.
        let argumentText = String(decoding: arguments, as: UTF8.self)
        guard let label = argumentText.firstRange(of: "dependencies:") else { return [] }
        var list = [Character]()
        var nesting = 0
        for character in argumentText[label.upperBound...] {
            if character == "[" || character == "(" { nesting += 1 }
            if character == "]" || character == ")" { nesting -= 1 }
            list.append(character)
            if nesting == 0 && character == "]" { break }
        }
        return String(list).split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// SQLite is an engine module like the others: the connection module (`Database`, the
    /// seam, the pool core, values, errors) depends on no engine, so that every engine,
    /// SQLite included, reaches it only through the seam's protocols.
    @Test func theConnectionModuleDependsOnNoEngine() throws {
        // The reading itself, on a target whose dependencies are known.
        #expect(try Self.dependencies(ofTarget: "SwiftDALSQLite") == ["CSwiftDALSQLite", "SwiftDALConnection"])
        let engines = try Self.dependencies(ofTarget: "SwiftDALConnection").filter { Self.engineModules.contains($0) }
        #expect(engines.isEmpty, "SwiftDALConnection depends on \(engines): engines depend on it, not the reverse")
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
