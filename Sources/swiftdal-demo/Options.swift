import Foundation

/// Command-line options of the main job.
struct Options {
    var databasePath = "data/swiftdal-demo.sqlite"
    var templatePath: String?
    var fixturesDirectory: String?
    /// `--postgres [URL]`: run on PostgreSQL (`""`: on a throwaway server).
    var postgresURL: String?
    /// `--mysql [URL]`: run on MariaDB (`""`: on a throwaway server).
    var mysqlURL: String?

    static let usage = """
        usage: swift run swiftdal-demo [--database PATH] [--template PATH]
               swift run swiftdal-demo --postgres [URL]
               swift run swiftdal-demo --mysql [URL]

        Runs a tour of every SwiftDAL operation on an embedded SQLite database, or with
        --postgres or --mysql the same tour, through the same DALs, on PostgreSQL or MariaDB.
          --database PATH   the database file (default: data/swiftdal-demo.sqlite, created
                            from the template when missing; its directory is created too)
          --template PATH   the prepared database copied when the file is missing
                            (default: Fixtures/sample.sqlite of this package)
          --postgres [URL]  run on the PostgreSQL server at URL (postgresql://user@host/db, or a
                            libpq keyword string); without a URL, on a throwaway server started
                            for the run (needs PostgreSQL's server programs) and stopped after
          --mysql [URL]     run on the MariaDB server at URL (mysql://user@host/db,
                            ?socket=/path for a Unix socket); without a URL, on a throwaway
                            server started for the run (needs mariadb-server) and stopped after
                            (--mariadb is the same)
          --make-fixtures DIR  rebuild DIR's sample databases (v1, v2, current) and
                            schema.sql from the migrations and DIR's seed files, then exit
        """

    /// Parses `arguments` (without the program name); `nil` after printing help.
    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        var remaining = arguments[...]
        var seen = Set<String>()
        while let argument = remaining.popFirst() {
            // An option given twice is a mistake (which one was meant?), not the last one wins.
            if argument.hasPrefix("--"), !seen.insert(argument == "--mariadb" ? "--mysql" : argument).inserted {
                throw OptionError("\(argument) is given twice")
            }
            switch argument {
            case "--database":
                guard let value = remaining.popFirst() else { throw OptionError("--database needs a path") }
                options.databasePath = value
            case "--template":
                guard let value = remaining.popFirst() else { throw OptionError("--template needs a path") }
                options.templatePath = value
            case "--postgres", "--mysql", "--mariadb":
                var url = ""
                if let next = remaining.first, !next.hasPrefix("--") {
                    url = next
                    remaining = remaining.dropFirst()
                }
                if argument == "--postgres" { options.postgresURL = url } else { options.mysqlURL = url }
            case "--make-fixtures":
                guard let value = remaining.popFirst() else { throw OptionError("--make-fixtures needs a directory") }
                options.fixturesDirectory = value
            case "-h", "--help":
                print(usage)
                return nil
            default:
                throw OptionError("unknown option \(argument)\n\(usage)")
            }
        }
        if seen.contains("--database"), options.postgresURL != nil || options.mysqlURL != nil {
            throw OptionError("--database names a SQLite file: it does not go with --postgres or --mysql")
        }
        return options
    }

    /// The template: the option, else `Fixtures/sample.sqlite` in the working directory,
    /// else the one beside this source file's package.
    func resolvedTemplate() -> String {
        if let templatePath { return templatePath }
        let local = "Fixtures/sample.sqlite"
        if FileManager.default.fileExists(atPath: local) { return local }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sample.sqlite").path
    }
}

struct OptionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
