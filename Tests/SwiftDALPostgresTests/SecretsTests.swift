import Foundation
import SwiftDAL
import SwiftDALConnection
import SwiftDALEngineTestSupport
import SwiftDALPostgres
import SwiftDALTestSupport
import Testing

/// Every way an error reaches a log: its description, its debug description, `dump`, and
/// an observer's event.
private func everyRendering(of error: any Error) -> [String] {
    var dumped = ""
    dump(error, to: &dumped)
    return [
        "\(error)", String(reflecting: error), dumped, (error as any CustomStringConvertible).description,
        error.localizedDescription
    ]
}

/// Records the errors of the statements a database ran.
private final class ErrorLog: DatabaseObserver, @unchecked Sendable {
    private let events = Locked([String]())
    func statementDidFinish(_ event: StatementEvent) {
        if let error = event.error { events.withLock { $0 += everyRendering(of: error) + ["\(event)"] } }
    }
    var texts: [String] { events.withLock { $0 } }
}

/// No bound value and no secret in what gets logged by default: PostgreSQL's messages
/// that quote the value they refused, its details, malformed connection strings, and the
/// header of a file swiftdal-gen writes.
@Suite struct SecretsTests {
    @Test func valuesQuotedByTheServerStayOutOfEveryRendering() throws {
        let log = ErrorLog()
        var configuration = PostgresConfiguration()
        configuration.observer = log
        let pool = try makePostgresPool(configuration)
        defer { try? pool.close() }
        try pool.reentrantWrite { db in
            try db.executeScript(
                "CREATE TABLE cards(id BIGINT PRIMARY KEY, token UUID, born DATE, email TEXT UNIQUE NOT NULL)")
            try db.execute("INSERT INTO cards(id, email) VALUES (1, \("alice@x.org"))")
        }
        let secrets = ["4111-1111-1111-1111", "not-a-uuid-secret", "1999-99-99secret", "alice@x.org", "QSECRET"]
        var errors = [any Error]()
        // The server does not escape the quotes of a value it quotes: `"ab"QSECRET" "x"`.
        let quoted = "ab\"QSECRET\" \"x"
        for (column, value) in [("id", secrets[0]), ("token", secrets[1]), ("born", secrets[2]), ("id", quoted)] {
            do {
                try pool.reentrantWrite { db in
                    try db.execute(
                        sql: "INSERT INTO cards(\(column), email) VALUES ($1, 'b@x.org')", arguments: [value])
                }
                Issue.record("\(column) accepted \(value)")
            } catch {
                errors.append(error)
                #expect((error as? PostgresError)?.serverMessage?.contains(value) == true)  // opt-in
            }
        }
        do {
            try pool.reentrantWrite { db in try db.execute("INSERT INTO cards(id, email) VALUES (2, \("alice@x.org"))")
            }
        } catch {
            errors.append(error)
            #expect((error as? PostgresError)?.detail?.contains("alice@x.org") == true)  // opt-in
        }
        #expect(errors.count == 5)
        for text in errors.flatMap(everyRendering) + log.texts {
            for secret in secrets { #expect(!text.contains(secret), "\(secret) in \(text)") }
        }
    }

    @Test func aMalformedConnectionStringNeverShowsItsPassword() throws {
        for (url, secret) in [
            ("postgresql://app:Pr0d%Pa55word@localhost/shop", "Pa55word"),
            ("host=/tmp password=correct horse battery", "horse"),
            ("host=/tmp dbname=shop password='Xyzzy42", "Xyzzy42"),
            // An unescaped @ or / in a URL's password: libpq reads a host or a port out of it.
            ("postgresql://app:p@ssTAILXYZ@localhost/shop", "TAILXYZ"),
            ("postgresql://app:Pw9/ssTAILXYZ@localhost/shop", "Pw9"),
            // Both: libpq reads host "ssSECRET4242" (a trial's; it was quoted and looked up).
            ("postgresql://app:p@ssSECRET4242/x@localhost:35432/pagila", "SECRET4242")
        ] {
            let pool = try PostgresPool(url: url)
            let error = #expect(throws: PostgresError.self) { try pool.checkConnection() }
            for text in error.map(everyRendering) ?? [] {
                #expect(!text.contains(secret), "\(secret) in \(text)")
            }
            try? pool.close()
        }
    }

    /// A connection error names the server as the URL does: a socket directory
    /// percent-encoded, given as the host or as the `host` parameter (it read
    /// `postgresql:///tmp/pg:5432/shop`, which names no socket), no user, no password.
    @Test func aConnectionErrorNamesTheServerAsAURLDoes() throws {
        let cases = [
            "postgresql://app:Secret77@%2Fnonexistent%2Fdir:5999/shop?connect_timeout=2":
                "(postgresql://%2Fnonexistent%2Fdir:5999/shop)",
            "postgresql://app:Secret77@/shop?host=/nonexistent/dir&port=5998&connect_timeout=2":
                "(postgresql://%2Fnonexistent%2Fdir:5998/shop)",
            "postgresql://app:Secret77@localhost:1/shop?connect_timeout=2": "(postgresql://localhost:1/shop)"
        ]
        for (url, named) in cases {
            let pool = try PostgresPool(url: url)
            defer { try? pool.close() }
            let error = #expect(throws: PostgresError.self) { try pool.checkConnection() }
            let text = String(describing: error)
            #expect(text.contains(named), "\(text)")
            #expect(!text.contains("Secret77") && !text.contains("app@"), "\(text)")
        }
    }

    /// A server that refuses the login (an unknown database or role) is the service's
    /// configuration: category permission and HTTP 500, not an outage to retry (503);
    /// the pool still treats it as a connection that failed.
    @Test func aRefusedLoginIsAPermissionErrorNotAnOutage() throws {
        let (database, role) = try SharedPostgres.withServer { server in
            (server.connectionString(database: "no_such_database"), server.connectionString() + " user=no_such_role")
        }
        for url in [database, role] {
            let pool = try PostgresPool(url: url)
            let error = #expect(throws: PostgresError.self) { try pool.checkConnection() }
            #expect(error?.category == .permission, "\(String(describing: error))")
            #expect(error?.isConnectionFailure == true)
            #expect(error.map(httpStatus(for:)) == 500)
            #expect(error?.isRetryable == false)
            try? pool.close()
        }
        // A server that is not there stays an outage.
        let pool = try PostgresPool(url: "host=/nonexistent/socket/dir connect_timeout=2")
        let unreachable = #expect(throws: PostgresError.self) { try pool.checkConnection() }
        #expect(unreachable?.category == .connection)
        #expect(unreachable.map(httpStatus(for:)) == 503)
        try? pool.close()
    }

    /// The generated file names the command that made it, quoted for a shell and without
    /// the password; running that command (as CI does) makes the same file again.
    @Test func swiftdalGenWritesNoPasswordAndAShellQuotedCommand() throws {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
        let generator = directory + "/swiftdal-gen"
        guard FileManager.default.isExecutableFile(atPath: generator) else {
            Issue.record("swiftdal-gen is not built at \(generator)")
            return
        }
        let (outside, base) = try OutsideView.fresh()
        try outside.psql("CREATE TABLE notes(id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, body TEXT)")
        // Trust authentication ignores the password; an & would split an unquoted command.
        let url = base + " password=S3cret&more application_name=gen"
        let temporary = try TemporaryDirectory()
        let output = temporary.file("Generated.swift")
        let (status, printed) = try runProgram(generator, ["--postgres", url, "--tables", "notes", "--output", output])
        #expect(status == 0, "swiftdal-gen: \(printed)")
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let firstLine = String(text.split(separator: "\n").first ?? "")
        #expect(!text.contains("S3cret"), "\(firstLine)")
        #expect(firstLine.contains("application_name=gen"))
        // Run the recorded command as a shell would (the binary for `swift run swiftdal-gen`).
        let command = firstLine.replacingOccurrences(
            of: "// Generated by swiftdal-gen: swift run swiftdal-gen ", with: ""
        )
        .replacingOccurrences(of: output, with: output + ".again")
        let dropped = String(command.dropLast(command.hasSuffix(".") ? 1 : 0))
        let (again, againPrinted) = try runProgram("/bin/sh", ["-c", "'\(generator)' \(dropped)"])
        #expect(again == 0, "\(againPrinted)")
        #expect(FileManager.default.fileExists(atPath: output + ".again"))
        withExtendedLifetime(temporary) {}
    }
}
