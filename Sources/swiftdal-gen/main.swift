import Foundation
import SwiftDAL
import SwiftDALCodegen
import SwiftDALConnection
import SwiftDALMariaDB
import SwiftDALPostgres

// swiftdal-gen: explicitly mapped entities and table DALs, written from a database's schema.
let usage = """
    usage: swift run swiftdal-gen (--database PATH | --schema PATH | --postgres URL | --mysql URL) [options]

    Writes, for each table, an entity struct mapped explicitly (columns read by index,
    no Codable: the fast mapping) and its BaseDAL subclass, from the database's schema;
    views and tables without a primary key get a ReadOnlyDAL subclass (no writes).
      --database PATH    read the schema of this SQLite file (opened read-only)
      --schema PATH      or run this SQL script in an in-memory database and read that
      --postgres URL     or read a PostgreSQL database's catalog (postgresql://user@host/db,
                         or a libpq keyword string): the tables and views on its search path
      --mysql URL        or read a MariaDB database's catalog (mysql://user@host/db,
                         ?socket=/path for a Unix socket): the tables and views of that
                         database (--mariadb is the same)
      --tables LIST      comma-separated tables and views (default: every table and view
                         but SQLite's own and swiftdal_migrations)
      --stem TABLE=NAME  the type stem of a table (repeatable): --stem people=Person gives
                         PersonInfo and PersonDAL (default: the singular of the name)
      --entity-suffix S  default Info (users -> UserInfo)
      --dal-suffix S     default DAL (users -> UserDAL)
      --internal         internal declarations instead of public
      --output PATH      write the source here (default: standard output)
    """

struct GenError: Error, CustomStringConvertible {
    let description: String
}

func run(_ arguments: [String]) throws {
    var remaining = arguments[...]
    var databasePath: String?
    var schemaPath: String?
    var postgresURL: String?
    var mysqlURL: String?
    var tables: [String]?
    var outputPath: String?
    var options = EntityGenerator.Options()
    var seen = Set<String>()
    func value(_ name: String) throws -> String {
        guard let value = remaining.popFirst() else { throw GenError(description: "\(name) needs a value\n\(usage)") }
        return value
    }
    while let argument = remaining.popFirst() {
        // An option given twice is a mistake (which one was meant?), not the last one wins.
        let option = argument == "--mariadb" ? "--mysql" : argument
        if option != "--stem", option.hasPrefix("--"), !seen.insert(option).inserted {
            throw GenError(description: "\(argument) is given twice")
        }
        switch argument {
        case "--database": databasePath = try value(argument)
        case "--schema": schemaPath = try value(argument)
        case "--postgres": postgresURL = try value(argument)
        case "--mysql", "--mariadb": mysqlURL = try value(argument)
        case "--tables":
            tables = try value(argument).split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            if let tables, tables.contains(where: \.isEmpty) {
                throw GenError(description: "--tables needs a comma-separated list of names, none empty")
            }
        case "--stem":
            let parts = try value(argument).split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw GenError(description: "--stem needs TABLE=NAME") }
            guard options.typeStems[parts[0]] == nil else {
                throw GenError(description: "--stem \(parts[0]) is given twice")
            }
            options.typeStems[parts[0]] = parts[1]
        case "--entity-suffix": options.entitySuffix = try value(argument)
        case "--dal-suffix": options.dalSuffix = try value(argument)
        case "--internal": options.access = .internal
        case "--output": outputPath = try value(argument)
        case "-h", "--help":
            print(usage)
            return
        default: throw GenError(description: "unknown option \(argument)\n\(usage)")
        }
    }
    try options.validate()  // before any file is opened
    let queue: any DatabaseWriter
    switch (databasePath, schemaPath, postgresURL, mysqlURL) {
    case (let path?, nil, nil, nil):
        queue = try DatabaseQueue(path: path, mode: .readOnly)
    case (nil, let path?, nil, nil):
        let script: String
        do {
            script = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw GenError(description: "cannot read the schema script \(path): \(reason(error))")
        }
        queue = try DatabaseQueue.inMemory()
        try queue.write { try $0.executeScript(script) }
    case (nil, nil, let url?, nil):
        queue = try PostgresPool(url: url)
    case (nil, nil, nil, let url?):
        queue = try MariaDBPool(url: url)
    default:
        throw GenError(description: "give exactly one of --database, --schema, --postgres and --mysql\n\(usage)")
    }
    // The header names the command that made the file (the same command makes the same
    // bytes), each argument quoted for a POSIX shell, and never a password: a server's
    // URL is written without it (give PostgreSQL's through PGPASSWORD or a password file).
    var written = arguments
    for index in written.indices.dropFirst() {
        switch written[index - 1] {
        case "--postgres", "--mysql", "--mariadb": written[index] = ConnectionText.withoutPassword(written[index])
        default: break
        }
    }
    let origin = (["swift run swiftdal-gen"] + written.map(shellQuoted)).joined(separator: " ")
    let generator = EntityGenerator(options: options)
    let source = try queue.read { try generator.source(for: tables, in: $0, origin: origin) }
    try queue.close()
    if let outputPath {
        do {
            try source.write(toFile: outputPath, atomically: true, encoding: .utf8)
        } catch {
            throw GenError(description: "cannot write \(outputPath): \(reason(error))")
        }
    } else {
        print(source, terminator: "")
    }
}

/// Why reading or writing a file failed, in the system's words (`No such file or
/// directory`) rather than Foundation's error domain and user-info dump.
func reason(_ error: any Error) -> String {
    let error = error as NSError
    switch error.userInfo[NSUnderlyingErrorKey] {
    case let underlying as POSIXError: return String(cString: strerror(underlying.code.rawValue))
    case let underlying as NSError where underlying.domain == NSPOSIXErrorDomain:
        return String(cString: strerror(Int32(truncatingIfNeeded: underlying.code)))
    default: break
    }
    if error.domain == NSCocoaErrorDomain,
        error.code == NSFileReadInapplicableStringEncodingError || error.code == NSFileReadCorruptFileError
    {
        return "it is not UTF-8 text"
    }
    return error.localizedDescription
}

/// `argument` as one word of a POSIX shell: as it is when it holds only safe characters,
/// else in single quotes (a quote inside written `'\''`).
func shellQuoted(_ argument: String) -> String {
    let safe = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")
    if !argument.isEmpty, argument.allSatisfy(safe.contains) { return argument }
    return "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

do {
    try run(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("swiftdal-gen: \(error)\n".utf8))
    exit(1)
}
